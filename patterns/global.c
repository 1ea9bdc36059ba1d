/*
 * Patterns made of full rows and columns: `global` (chosen tokens see and
 * are seen by everything), `axis` (rows and columns chosen separately) and
 * `star` (Star-Transformer: neighbours plus one relay token).
 */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "mask.h"
#include "pattern.h"

enum { GLOBAL_G, GLOBAL_TOKENS };
enum { AXIS_ROWS, AXIS_COLS };

/* A set of positions, both as a sorted list (cheap to apply when short)
 * and as a bitset (O(1) membership, cheap to apply when long). */
typedef struct tokset {
	int64_t *pos;
	size_t len;
	uint64_t *bits;
	size_t words;
} tokset;

static void tokset_release(tokset *s)
{
	free(s->pos);
	free(s->bits);
	s->pos = NULL;
	s->bits = NULL;
}

/* what and pat name the positions in messages ("row" of 'axis'). */
static int tokset_build(tokset *s, const mk_pval *v, int64_t n, const char *what,
			const char *pat)
{
	size_t k = 0;
	s->words = mk_words(n);
	s->len = 0;
	s->pos = NULL;
	s->bits = calloc(s->words, sizeof *s->bits);
	if (!s->bits)
		return mk_error_set(MK_ENOMEM, "out of memory for the %ss of '%s'", what, pat);
	for (size_t q = 0; q < v->len; q++) {
		if (v->list[q] < 0 || v->list[q] >= n) {
			tokset_release(s);
			return mk_error_set(MK_EINVAL,
					    "%s %" PRId64 " of '%s' is out of range "
					    "for n = %" PRId64,
					    what, v->list[q], pat, n);
		}
		mk_bit_set(s->bits, v->list[q]);
	}
	s->len = (size_t)mk_bits_count(s->bits, s->words);
	s->pos = malloc((s->len ? s->len : 1) * sizeof *s->pos);
	if (!s->pos) {
		tokset_release(s);
		return mk_error_set(MK_ENOMEM, "out of memory for the %ss of '%s'", what, pat);
	}
	/* Reading the bitset back gives the list sorted and without repeats. */
	for (int64_t j = 0; j < n; j++)
		if (mk_bit_test(s->bits, j))
			s->pos[k++] = j;
	return MK_OK;
}

static bool tokset_has(const tokset *s, int64_t i)
{
	return mk_bit_test(s->bits, i);
}

static void tokset_apply(const tokset *s, uint64_t *dst)
{
	if (s->len > s->words) {
		mk_bits_or(dst, s->bits, s->words);
		return;
	}
	for (size_t k = 0; k < s->len; k++)
		mk_bit_set(dst, s->pos[k]);
}

/* ---- global ---- */

static void global_release(mk_term *t)
{
	if (t->priv) {
		tokset_release(t->priv);
		free(t->priv);
		t->priv = NULL;
	}
}

/* With tokens given, priv holds them; otherwise the first g are global. */
static int global_bind(mk_term *t)
{
	tokset *s;
	int ret;
	global_release(t);
	if (!t->p[GLOBAL_TOKENS].given)
		return MK_OK;
	s = calloc(1, sizeof *s);
	if (!s)
		return mk_error_set(MK_ENOMEM, "out of memory for the tokens of 'global'");
	ret = tokset_build(s, &t->p[GLOBAL_TOKENS], t->n, "global token", "global");
	if (ret) {
		free(s);
		return ret;
	}
	t->priv = s;
	return MK_OK;
}

static void global_row(const mk_term *t, int64_t i, uint64_t *dst)
{
	const tokset *s = t->priv;
	int64_t g = t->p[GLOBAL_G].i < t->n ? t->p[GLOBAL_G].i : t->n;
	if (s ? tokset_has(s, i) : i < g) {
		mk_bits_set_range(dst, 0, t->n);
		return;
	}
	if (s)
		tokset_apply(s, dst);
	else
		mk_bits_set_range(dst, 0, g);
}

/* ---- axis ---- */

typedef struct axis_priv {
	tokset rows, cols;
} axis_priv;

static void axis_release(mk_term *t)
{
	axis_priv *a = t->priv;
	if (a) {
		tokset_release(&a->rows);
		tokset_release(&a->cols);
		free(a);
		t->priv = NULL;
	}
}

static int axis_bind(mk_term *t)
{
	axis_priv *a;
	int ret;
	axis_release(t);
	a = calloc(1, sizeof *a);
	if (!a)
		return mk_error_set(MK_ENOMEM, "out of memory for 'axis'");
	ret = tokset_build(&a->rows, &t->p[AXIS_ROWS], t->n, "row", "axis");
	if (ret == MK_OK)
		ret = tokset_build(&a->cols, &t->p[AXIS_COLS], t->n, "column", "axis");
	t->priv = a;
	if (ret)
		axis_release(t);
	else /* the transpose swaps rows and cols */
		t->symmetric = a->rows.len == a->cols.len &&
			       (!a->rows.len || !memcmp(a->rows.pos, a->cols.pos,
							a->rows.len * sizeof *a->rows.pos));
	return ret;
}

static void axis_row(const mk_term *t, int64_t i, uint64_t *dst)
{
	const axis_priv *a = t->priv;
	if (tokset_has(&a->rows, i))
		mk_bits_set_range(dst, 0, t->n);
	else
		tokset_apply(&a->cols, dst);
}

/* The transpose swaps the roles of rows and cols. */
static void axis_col(const mk_term *t, int64_t j, uint64_t *dst)
{
	const axis_priv *a = t->priv;
	if (tokset_has(&a->cols, j))
		mk_bits_set_range(dst, 0, t->n);
	else
		tokset_apply(&a->rows, dst);
}

/* ---- star ---- */

static void star_row(const mk_term *t, int64_t i, uint64_t *dst)
{
	if (i == 0) {
		mk_bits_set_range(dst, 0, t->n);
		return;
	}
	mk_bit_set(dst, 0);
	mk_bits_set_range(dst, i - 1, i + 2 > t->n ? t->n : i + 2);
}

/* ---- mask_mods (pattern.h) ---- */

/* "tK[x]" for a set of positions (a membership table), or nothing when
 * empty; returns whether it wrote. */
static bool tokset_flex(const tokset *s, int64_t n, const char *x, const char *sep, mk_flex *f)
{
	long k;

	if (!s->len)
		return false;
	if ((k = mk_flex_table_add(f, MK_FLEX_SET, n, s->pos, (int64_t)s->len)) >= 0)
		mk_flex_printf(f, "%st%ld[%s]", sep, k, x);
	return true;
}

static int global_flex(const mk_term *t, mk_flex *f)
{
	const tokset *s = t->priv;
	long k;

	if (!s) {
		mk_flex_printf(f, "((%s < %" PRId64 ") | (%s < %" PRId64 "))", f->i,
			       t->p[GLOBAL_G].i, f->j, t->p[GLOBAL_G].i);
		return f->err;
	}
	if (!s->len) { /* tokens= that lists none */
		mk_flex_printf(f, "(%s < 0)", f->i);
		return f->err;
	}
	if ((k = mk_flex_table_add(f, MK_FLEX_SET, t->n, s->pos, (int64_t)s->len)) >= 0)
		mk_flex_printf(f, "(t%ld[%s] | t%ld[%s])", k, f->ic, k, f->jc);
	return f->err;
}

static int axis_flex(const mk_term *t, mk_flex *f)
{
	const axis_priv *a = t->priv;
	bool rows;

	mk_flex_printf(f, "(");
	rows = tokset_flex(&a->rows, t->n, f->ic, "", f);
	if (!tokset_flex(&a->cols, t->n, f->jc, rows ? " | " : "", f) && !rows)
		mk_flex_printf(f, "%s < 0", f->i);
	mk_flex_printf(f, ")");
	return f->err;
}

static int star_flex(const mk_term *t, mk_flex *f)
{
	(void)t;
	mk_flex_printf(f, "(((%s - %s).abs() <= 1) | (%s == 0) | (%s == 0))", f->i, f->j, f->i,
		       f->j);
	return f->err;
}

static const mk_param_info global_params[] = {
	{"g", MK_PARAM_INT, "1", "number of global tokens, the first g"},
	{"tokens", MK_PARAM_LIST, "", "explicit global token positions (replace g)"},
};

static const mk_param_info axis_params[] = {
	{"rows", MK_PARAM_LIST, "", "queries that attend to every key"},
	{"cols", MK_PARAM_LIST, "", "keys that every query attends to"},
};

const mk_pattern_def mk_pat_global = {
	.info = {
		.name = "global",
		.summary = "i or j global: full rows and columns for the first g tokens "
			   "(or for tokens)",
		.shorthand = "g",
		.params = global_params,
		.nparams = sizeof global_params / sizeof global_params[0],
	},
	.symmetric = true,
	.sweep = {.param = "g", .lo = 0, .hi = MK_SWEEP_HI_N, .monotone = true, .order = 9},
	.bind = global_bind,
	.row = global_row,
	.flex = global_flex,
	.release = global_release,
};

const mk_pattern_def mk_pat_axis = {
	.info = {
		.name = "axis",
		.summary = "i in rows or j in cols: full rows and full columns at given positions",
		.params = axis_params,
		.nparams = sizeof axis_params / sizeof axis_params[0],
	},
	.symmetric = false,
	.bind = axis_bind,
	.row = axis_row,
	.col = axis_col,
	.flex = axis_flex,
	.release = axis_release,
};

const mk_pattern_def mk_pat_star = {
	.info = {
		.name = "star",
		.summary = "d <= 1 plus relay token 0, i.e. row 0 and column 0 (Star-Transformer)",
	},
	.symmetric = true,
	.sweep = {.param = "block", .lo = 1, .hi = MK_SWEEP_HI_N, .order = 7},
	.row = star_row,
	.flex = star_flex,
};
