/*
 * Binding an expression to a size and evaluating it one row (or column) at
 * a time.  A cursor owns the scratch rows an evaluation needs, so each
 * thread streams rows with its own cursor and nothing is materialised.
 */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "expr_internal.h"
#include "internal.h"

struct mk_cursor {
	const mk_expr *e;
	size_t nw_row, nw_col; /* words of a row (kv bits) and of a column (n bits) */
	uint64_t *scratch;
	uint64_t *wide;        /* a grid row and a spare word: rectangular corners */
};

/* ---- binding ---- */

/* "n = 8", or "8 x 16" for a rectangular size. */
static const char *mk_size_text(int64_t n, int64_t kv, char *buf, size_t cap)
{
	if (n == kv)
		snprintf(buf, cap, "n = %" PRId64, n);
	else
		snprintf(buf, cap, "%" PRId64 " x %" PRId64, n, kv);
	return buf;
}

static int mk_bind_file_size(const mk_node *x, const char *first, int64_t *n, int64_t *kv)
{
	int64_t fn = mk_mask_n(x->mask), fk = mk_mask_cols(x->mask);
	char a[64], b[64];

	if (*n && (fn != *n || fk != *kv)) {
		mk_size_text(*n, *kv, a, sizeof a);
		mk_size_text(fn, fk, b, sizeof b);
		if (first)
			return mk_error_set(MK_EINVAL, "mask sizes differ: '%s' has %s but '%s' "
					    "has %s", first, a, x->path, b);
		mk_error_set(MK_EINVAL, "mask sizes differ: %s given but '%s' has %s", a, x->path,
			     b);
		return mk_error_param(*n == *kv ? "n" : "kv_len");
	}
	*n = fn;
	*kv = fk;
	return MK_OK;
}

static int mk_bind_files(mk_node *x, const mk_bind_opts *o, const char **first, int64_t *n,
			 int64_t *kv)
{
	int ret;
	if (!x)
		return MK_OK;
	if ((ret = mk_bind_files(x->a, o, first, n, kv)) ||
	    (ret = mk_bind_files(x->b, o, first, n, kv)))
		return ret;
	if (x->kind != MK_NODE_FILE)
		return MK_OK;
	if ((ret = mk_mask_load(x->path, o->max_memory, &x->mask)) ||
	    (ret = mk_bind_file_size(x, *first, n, kv)))
		return ret;
	if (!*first)
		*first = x->path;
	return MK_OK;
}

static int mk_bind_term(mk_term *t, int64_t n, const mk_bind_opts *o)
{
	int ks = mk_term_param_index(t->def, "seed"), ret;
	t->n = (n + t->block - 1) / t->block;
	t->seed = (ks >= 0 && t->p[ks].given) ? (uint64_t)t->p[ks].i : o->seed;
	t->symmetric = t->def->symmetric;
	if (t->def->bind && (ret = t->def->bind(t)))
		return ret;
	if (o->need_cols && t->def->prepare_cols)
		return t->def->prepare_cols(t, o->max_memory);
	return MK_OK;
}

/* Binds pattern leaves, prepares transposes, and lays out cursor scratch. */
static int mk_bind_node(mk_node *x, mk_expr *e, const mk_bind_opts *o)
{
	int ret;
	if (!x)
		return MK_OK;
	if ((ret = mk_bind_node(x->a, e, o)) || (ret = mk_bind_node(x->b, e, o)))
		return ret;
	if (x->kind == MK_NODE_PATTERN) {
		if ((ret = mk_bind_term(&x->term, e->grid, o)))
			return ret;
		if (x->term.block > 1) {
			x->slot = e->scratch_words;
			e->scratch_words += mk_words(x->term.n);
		}
	} else if (x->kind == MK_NODE_FILE) {
		if (o->need_cols && (ret = mk_mask_transpose(x->mask, &x->maskT)))
			return ret;
	} else if (x->op != MK_OP_NOT) {
		x->slot = e->scratch_words;
		e->scratch_words += mk_words(e->grid); /* a row or a column */
	}
	return MK_OK;
}

/* Every thread's cursor holds a scratch row per operator: a long expression
 * at large n is real memory, counted against the limit like a mask. */
static int mk_check_scratch(const mk_expr *e)
{
	uint64_t bytes;
	int threads = 1, ret;
#ifdef _OPENMP
	threads = omp_get_max_threads();
#endif
	ret = mk_mul_u64((uint64_t)e->scratch_words + 3 * mk_words(e->grid) + 1,
			 sizeof(uint64_t) * (uint64_t)threads, &bytes);
	return ret ? ret : mk_check_memory(bytes, e->max_memory, "the expression's row buffers");
}

int mk_expr_bind(mk_expr *e, const mk_bind_opts *o)
{
	const char *first = NULL;
	int64_t n = o->n, kv = o->kv_len ? o->kv_len : o->n;
	mk_sb b = {0};
	int ret;
	if (e->bound)
		return mk_error_set(MK_EINVAL, "expression is already bound");
	if (o->kv_len && !o->n)
		return mk_error_set(MK_EINVAL, "a number of keys (kv_len) needs a number of "
				    "queries too");
	if (n && ((ret = mk_check_n(n, "n")) || (ret = mk_check_n(kv, "kv_len"))))
		return ret;
	if ((ret = mk_bind_files(e->root, o, &first, &n, &kv)))
		return ret;
	if (n == 0) {
		mk_error_set(MK_EINVAL, "the sequence length is not known: give it");
		return mk_error_param("n");
	}
	e->n = n;
	e->kv = kv;
	e->grid = n > kv ? n : kv;
	if (o->align != MK_ALIGN_BOTTOM_RIGHT && o->align != MK_ALIGN_TOP_LEFT) {
		mk_error_set(MK_EINVAL, "unknown alignment %d (bottom-right is %d, top-left %d)",
			     (int)o->align, MK_ALIGN_BOTTOM_RIGHT, MK_ALIGN_TOP_LEFT);
		return mk_error_param("align");
	}
	e->align = n == kv ? MK_ALIGN_BOTTOM_RIGHT : o->align;
	e->max_memory = o->max_memory;
	e->cols = o->need_cols;
	if ((ret = mk_bind_node(e->root, e, o)) || (ret = mk_check_scratch(e)))
		return ret;
	mk_node_print(e->root, &b, true, 0);
	if (!(e->params = mk_sb_take(&b)))
		return mk_error_set(MK_ENOMEM, "out of memory");
	e->bound = true;
	return MK_OK;
}

int64_t mk_expr_n(const mk_expr *e) { return e->n; }
int64_t mk_expr_kv_len(const mk_expr *e) { return e->kv; }
mk_align mk_expr_align(const mk_expr *e) { return e->align; }

const char *mk_align_name(mk_align a)
{
	return a == MK_ALIGN_BOTTOM_RIGHT ? "bottom-right" : a == MK_ALIGN_TOP_LEFT ? "top-left"
										      : NULL;
}
bool mk_expr_has_cols(const mk_expr *e) { return e->cols; }
const char *mk_expr_params(const mk_expr *e) { return e->params ? e->params : e->text; }

static bool mk_node_symmetric(const mk_node *x)
{
	if (x->kind == MK_NODE_PATTERN)
		return x->term.symmetric;
	if (x->kind == MK_NODE_FILE)
		return x->mask && x->maskT && mk_mask_equal(x->mask, x->maskT);
	return mk_node_symmetric(x->a) && (!x->b || mk_node_symmetric(x->b));
}

bool mk_expr_known_symmetric(const mk_expr *e)
{
	return e->bound && e->n == e->kv && mk_node_symmetric(e->root);
}

/* ---- evaluation ---- */

/* Expands a grid row to tokens run by run, so dense block layouts cost one
 * range per run of blocks rather than one per block. */
static void mk_expand_block(const uint64_t *grid, int64_t gn, int64_t block, int64_t n,
			    uint64_t *dst)
{
	int64_t p = mk_bits_next(grid, gn, 0, true), q;
	while (p < gn) {
		q = mk_bits_next(grid, gn, p, false);
		mk_bits_set_range(dst, p * block, q * block < n ? q * block : n);
		p = mk_bits_next(grid, gn, q, true);
	}
}

/* Row i (column j) of a rectangular mask aligned bottom-right is row
 * i + grid - n (column j + grid - kv) of the pattern on the grid, cut to its
 * last kv (n) bits: the queries are the last n positions of the key sequence
 * (a KV cache).  Top-left, it is row i (column j) cut to its first kv (n)
 * bits: query i at key position i. */
static void mk_eval_term(const mk_cursor *c, const mk_node *x, int64_t i, uint64_t *dst,
			 bool col)
{
	const mk_expr *e = c->e;
	const mk_term *t = &x->term;
	void (*fn)(const mk_term *, int64_t, uint64_t *) =
		(col && !t->symmetric && t->def->col) ? t->def->col : t->def->row;
	bool br = e->align == MK_ALIGN_BOTTOM_RIGHT;
	int64_t len = col ? e->n : e->kv, lo = br ? e->grid - len : 0;
	int64_t a = br ? i + e->grid - (col ? e->kv : e->n) : i;
	uint64_t *out = len < e->grid ? c->wide : dst;

	mk_bits_zero(out, mk_words(e->grid));
	if (t->block == 1) {
		fn(t, a, out);
	} else {
		uint64_t *grid = c->scratch + x->slot;
		mk_bits_zero(grid, mk_words(t->n));
		fn(t, a / t->block, grid);
		mk_expand_block(grid, t->n, t->block, e->grid, out);
	}
	if (len < e->grid)
		mk_bits_extract(dst, c->wide, lo, len);
}

static void mk_eval(const mk_cursor *c, const mk_node *x, int64_t i, uint64_t *dst, bool col)
{
	size_t nw = col ? c->nw_col : c->nw_row;
	uint64_t *tmp;
	switch (x->kind) {
	case MK_NODE_PATTERN:
		mk_eval_term(c, x, i, dst, col);
		return;
	case MK_NODE_FILE:
		memcpy(dst, mk_mask_crow(col ? x->maskT : x->mask, i), nw * sizeof *dst);
		return;
	default:
		break;
	}
	mk_eval(c, x->a, i, dst, col);
	if (x->op == MK_OP_NOT) {
		mk_bits_not(dst, col ? c->e->n : c->e->kv);
		return;
	}
	tmp = c->scratch + x->slot;
	mk_eval(c, x->b, i, tmp, col);
	if (x->op == MK_OP_OR)
		mk_bits_or(dst, tmp, nw);
	else if (x->op == MK_OP_AND)
		mk_bits_and(dst, tmp, nw);
	else
		mk_bits_andnot(dst, tmp, nw);
}

int mk_cursor_new(const mk_expr *e, mk_cursor **out)
{
	mk_cursor *c;
	*out = NULL;
	if (!e->bound)
		return mk_error_set(MK_EINVAL, "expression is not bound to a size");
	c = calloc(1, sizeof *c);
	if (!c)
		return mk_error_set(MK_ENOMEM, "out of memory");
	c->e = e;
	c->nw_row = mk_words(e->kv);
	c->nw_col = mk_words(e->n);
	c->scratch = calloc(e->scratch_words + 1, sizeof *c->scratch);
	c->wide = calloc(mk_words(e->grid) + 1, sizeof *c->wide);
	if (!c->scratch || !c->wide) {
		mk_cursor_free(c);
		return mk_error_set(MK_ENOMEM, "out of memory");
	}
	*out = c;
	return MK_OK;
}

void mk_cursor_free(mk_cursor *c)
{
	if (!c)
		return;
	free(c->scratch);
	free(c->wide);
	free(c);
}

void mk_cursor_row(mk_cursor *c, int64_t i, uint64_t *dst)
{
	mk_eval(c, c->e->root, i, dst, false);
}

int mk_cursor_col(mk_cursor *c, int64_t j, uint64_t *dst)
{
	if (!c->e->cols)
		return mk_error_set(MK_EINVAL, "columns need the expression bound with need_cols");
	mk_eval(c, c->e->root, j, dst, true);
	return MK_OK;
}

int mk_expr_to_mask(const mk_expr *e, mk_mask **out)
{
	mk_mask *m = NULL;
	int ret, fail = MK_OK;
	*out = NULL;
	if (!e->bound)
		return mk_error_set(MK_EINVAL, "expression is not bound to a size");
	if ((ret = mk_mask_new_rect(e->n, e->kv, e->max_memory, &m)))
		return ret;
#pragma omp parallel
	{
		mk_cursor *c = NULL;
		int r = mk_cursor_new(e, &c);
		if (r) {
#pragma omp atomic write
			fail = r;
		}
#pragma omp for schedule(dynamic, 64)
		for (int64_t i = 0; i < e->n; i++)
			if (c)
				mk_cursor_row(c, i, mk_mask_row(m, i));
		mk_cursor_free(c);
	}
	if (fail) {
		mk_mask_free(m);
		return mk_error_set(fail, "out of memory for row buffers");
	}
	*out = m;
	return MK_OK;
}
