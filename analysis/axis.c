/*
 * Adaptive axis masks (Adaptive Axis Attention): per sample, layer and head
 * a row indicator r and a column indicator c over the sample's len real
 * tokens give B_jk = r_j + c_k - r_j c_k, OR-ed with a local pattern.
 *
 * Counting never builds B: row j is len ones when r_j is set, else c | P_j
 * with P_j row j of the local pattern, and popcount(c | P_j) = |c| +
 * popcount(P_j & ~c) needs only the words where P_j has bits (one or two
 * for a band).  One sample's blocks (layers x heads) share the pattern, so
 * each of its rows is generated once and applied to every block.  The
 * indicators are read one sample at a time through hyperslabs (axis_h5.c);
 * the pattern is bound once per distinct length and kept.
 */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "axis_internal.h"
#include "result.h"

/* ---- counting ------------------------------------------------------------ */

/* The words [lo, hi) of row that hold bits (lo == hi for an empty row). */
static void axis_span(const uint64_t *row, size_t w, size_t *lo, size_t *hi)
{
	size_t a = 0, b = w;

	while (a < w && !row[a])
		a++;
	while (b > a && !row[b - 1])
		b--;
	*lo = a;
	*hi = b;
}

/* Counts one sample's nb blocks (block b's indicators at r + b * n, c + b *
 * n) over its first len tokens; cur (NULL: no local part) is bound at len. */
MK_HOT static void axis_count_blocks(const uint8_t *r, const uint8_t *c, int64_t nb, int64_t n,
			      int64_t len, mk_cursor *cur, uint64_t *colbits, uint64_t *row,
			      mk_axis_cells *out)
{
	size_t w = mk_words(len), lo = 0, hi = 0;
	uint64_t local = 0;

	for (int64_t b = 0; b < nb; b++) {
		uint64_t *cb = colbits + (size_t)b * w;
		int64_t rows = 0, cols;
		mk_bits_zero(cb, w);
		for (int64_t j = 0; j < len; j++) {
			rows += r[b * n + j] != 0;
			if (c[b * n + j])
				mk_bit_set(cb, j);
		}
		cols = (int64_t)mk_bits_count(cb, w);
		out[b] = (mk_axis_cells){.len = len, .rows = rows, .cols = cols,
					 .axis = (uint64_t)((rows + cols) * len - rows * cols)};
	}
	for (int64_t i = 0; i < len; i++) {
		if (cur) {
			mk_cursor_row(cur, i, row);
			axis_span(row, w, &lo, &hi);
			local += mk_bits_count(row + lo, hi - lo);
		}
		for (int64_t b = 0; b < nb; b++) {
			const uint64_t *cb = colbits + (size_t)b * w;
			uint64_t extra = 0;
			if (r[b * n + i]) {
				out[b].count += (uint64_t)len;
				continue;
			}
			for (size_t k = cur ? lo : 0; cur && k < hi; k++)
				extra += (uint64_t)__builtin_popcountll(row[k] & ~cb[k]);
			out[b].count += (uint64_t)out[b].cols + extra;
		}
	}
	for (int64_t b = 0; b < nb; b++)
		out[b].local = local;
}

int mk_axis_count(const uint8_t *rows, const uint8_t *cols, int64_t len, const mk_expr *local,
		  mk_axis_cells *out)
{
	size_t w = mk_words(len);
	uint64_t *colbits = NULL, *row = NULL;
	mk_cursor *cur = NULL;
	int ret;

	memset(out, 0, sizeof *out);
	if ((ret = mk_check_n(len, "the length")))
		return ret;
	if (local && mk_expr_n(local) != len)
		return mk_error_set(MK_EINVAL, "the local pattern is bound at n = %" PRId64 ", not at "
				    "the length %" PRId64, mk_expr_n(local), len);
	colbits = malloc(w * sizeof *colbits);
	row = malloc(w * sizeof *row);
	if (!colbits || !row)
		ret = mk_error_set(MK_ENOMEM, "out of memory");
	else if (local)
		ret = mk_cursor_new(local, &cur);
	if (ret == MK_OK)
		axis_count_blocks(rows, cols, 1, len, len, cur, colbits, row, out);
	mk_cursor_free(cur);
	free(colbits);
	free(row);
	return ret;
}

/* ---- the local pattern, bound per length ----------------------------------- */

bool mk_axis_has_local(const mk_axis_opts *o)
{
	return strcmp(o->local ? o->local : "local2", "none") != 0;
}

static int axis_pat_get(axis_src *s, int64_t sample, int64_t len, mk_cursor **cur)
{
	axis_pat *p = &s->pats[len];
	const mk_axis_opts *o = s->o;
	mk_bind_opts b = {.n = len, .seed = o->seed, .max_memory = o->max_memory};
	int ret;

	if (p->cur) {
		*cur = p->cur;
		return MK_OK;
	}
	ret = mk_expr_parse(o->local ? o->local : "local2", &p->e);
	if (ret == MK_OK && (ret = mk_expr_bind(p->e, &b)))
		mk_error_prefix("the local pattern '%s' at length %" PRId64 " (sample %" PRId64 "): ",
				mk_expr_text(p->e), len, sample);
	if (ret == MK_OK)
		ret = mk_cursor_new(p->e, &p->cur);
	*cur = p->cur;
	return ret;
}

/* Reads sample k and counts its blocks into cells (s->blocks entries). */
static int axis_sample(axis_src *s, int64_t k, mk_axis_cells *cells)
{
	mk_cursor *cur = NULL;
	int ret;

	if ((ret = mk_axis_src_read(s, k)) ||
	    (s->pats && (ret = axis_pat_get(s, k, s->lengths[k], &cur))))
		return ret;
	axis_count_blocks(s->ind[0].bit, s->ind[1].bit, s->blocks, s->n, s->lengths[k], cur,
			  s->colbits, s->row, cells);
	return MK_OK;
}

/* ---- measuring ------------------------------------------------------------ */

static void axis_add(mk_axis_stat *t, const mk_axis_cells *c)
{
	double area = (double)c->len * (double)c->len;

	t->rho += 1.0 - (double)c->count / area;
	t->rho_axis += 1.0 - (double)c->axis / area;
	t->rho_local += 1.0 - (double)c->local / area;
	t->rows += (uint64_t)c->rows;
	t->cols += (uint64_t)c->cols;
	t->tokens += (uint64_t)c->len;
	t->blocks++;
}

static void axis_finish(mk_axis_stat *t)
{
	if (t->blocks) {
		t->rho /= (double)t->blocks;
		t->rho_axis /= (double)t->blocks;
		t->rho_local /= (double)t->blocks;
	}
	if (t->tokens) {
		t->rows_pct = 100.0 * (double)t->rows / (double)t->tokens;
		t->cols_pct = 100.0 * (double)t->cols / (double)t->tokens;
	}
}

static int axis_result_init(const axis_src *s, mk_axis_result *r)
{
	const mk_axis_opts *o = s->o;
	size_t nh = (size_t)s->blocks;

	const char *lengths = *s->lengths_name ? s->lengths_name : o->lengths_file;

	r->samples = s->samples;
	r->layers = s->layers;
	r->heads = s->heads;
	r->n = s->n;
	r->blocks = s->blocks;
	r->rank = s->rank;
	r->dtype = s->ind[0].dtype;
	r->dtype_name = mk_dtype_name(r->dtype);
	r->is_float = s->ind[0].is_float || s->ind[1].is_float;
	r->threshold = o->threshold;
	if (!(r->rows_name = strdup(s->ind[0].name)) || !(r->cols_name = strdup(s->ind[1].name)) ||
	    (lengths && !(r->lengths_name = strdup(lengths))) ||
	    !(r->by_layer = calloc((size_t)s->layers, sizeof *r->by_layer)) ||
	    !(r->by_head = calloc(nh, sizeof *r->by_head)) ||
	    (o->by_sample && !(r->by_sample = calloc((size_t)s->samples, sizeof *r->by_sample))) ||
	    (o->by_sample && !(r->lengths = malloc((size_t)s->samples * sizeof *r->lengths))))
		return mk_error_set(MK_ENOMEM, "out of memory");
	if (r->lengths)
		memcpy(r->lengths, s->lengths, (size_t)s->samples * sizeof *r->lengths);
	for (int64_t l = 0; l < s->layers; l++)
		r->by_layer[l].layer = l;
	r->list_by_head = o->by_head;
	for (int64_t b = 0; b < s->blocks; b++)
		r->by_head[b] = (mk_axis_stat){.layer = b / s->heads, .head = b % s->heads};
	for (int64_t k = 0; r->by_sample && k < s->samples; k++)
		r->by_sample[k] = (mk_axis_stat){.sample = k, .length = s->lengths[k]};
	return MK_OK;
}

/* The local pattern's canonical text, checking that it parses at all. */
static int axis_local_text(const mk_axis_opts *o, mk_axis_result *r)
{
	mk_expr *e = NULL;
	int ret;

	if (!mk_axis_has_local(o))
		return MK_OK;
	if ((ret = mk_expr_parse(o->local ? o->local : "local2", &e)))
		return ret;
	if (!(r->local = strdup(mk_expr_text(e))))
		ret = mk_error_set(MK_ENOMEM, "out of memory");
	mk_expr_free(e);
	return ret;
}

static void axis_lengths_summary(const axis_src *s, mk_axis_result *r)
{
	double sum = 0;

	r->len_min = r->len_max = s->lengths[0];
	for (int64_t i = 0; i < s->samples; i++) {
		int64_t len = s->lengths[i];
		r->len_min = len < r->len_min ? len : r->len_min;
		r->len_max = len > r->len_max ? len : r->len_max;
		sum += (double)len;
	}
	r->len_mean = sum / (double)s->samples;
}

static int axis_measure_all(axis_src *s, mk_axis_result *r)
{
	mk_axis_cells *cells = malloc((size_t)s->blocks * sizeof *cells);
	int ret = cells ? MK_OK : mk_error_set(MK_ENOMEM, "out of memory");

	for (int64_t k = 0; k < s->samples && ret == MK_OK; k++) {
		if ((ret = axis_sample(s, k, cells)))
			break;
		for (int64_t b = 0; b < s->blocks; b++) {
			axis_add(&r->all, &cells[b]);
			axis_add(&r->by_layer[b / s->heads], &cells[b]);
			axis_add(&r->by_head[b], &cells[b]);
			if (r->by_sample)
				axis_add(&r->by_sample[k], &cells[b]);
		}
		if (s->o->progress)
			s->o->progress(k + 1, s->samples, s->o->parg);
	}
	free(cells);
	return ret;
}

void mk_axis_opts_init(mk_axis_opts *o)
{
	memset(o, 0, sizeof *o);
	o->threshold = 0.5;
	o->local = "local2";
}

/* o with lengths_file read into given (*owned, to free). */
static int axis_given(const mk_axis_opts *o, mk_axis_opts *copy, int64_t **owned)
{
	int ret;

	*copy = *o;
	*owned = NULL;
	if (!o->lengths_file || o->given)
		return MK_OK;
	if ((ret = mk_lengths_read(o->lengths_file, 0, owned, &copy->ngiven)))
		return ret;
	copy->given = *owned;
	return MK_OK;
}

int mk_axis_measure(const char *path, const mk_axis_opts *opts, mk_axis_result *out)
{
	mk_axis_opts copy = {0}, *o = &copy;
	int64_t *given = NULL;
	axis_src s;
	int ret;

	memset(out, 0, sizeof *out);
	out->file = path;
	mk_axis_src_init(&s, path, o);
	if ((ret = axis_given(opts, &copy, &given)) || (ret = axis_local_text(o, out)) ||
	    (ret = mk_axis_src_open(&s)) ||
	    (ret = axis_result_init(&s, out)) || (ret = axis_measure_all(&s, out)))
		goto out;
	axis_lengths_summary(&s, out);
	axis_finish(&out->all);
	for (int64_t l = 0; l < s.layers; l++)
		axis_finish(&out->by_layer[l]);
	for (int64_t b = 0; b < s.blocks; b++)
		axis_finish(&out->by_head[b]);
	for (int64_t k = 0; out->by_sample && k < s.samples; k++)
		axis_finish(&out->by_sample[k]);
out:
	mk_axis_src_close(&s);
	free(given);
	if (ret)
		mk_axis_result_release(out);
	return ret;
}

void mk_axis_result_release(mk_axis_result *r)
{
	if (!r)
		return;
	free(r->local);
	free(r->rows_name);
	free(r->cols_name);
	free(r->lengths_name);
	free(r->by_layer);
	free(r->by_head);
	free(r->by_sample);
	free(r->lengths);
	memset(r, 0, sizeof *r);
}

/* ---- writing one sample's masks ----------------------------------------- */

typedef struct axis_writer {
	axis_src *s;
	int64_t len;
	mk_cursor *cur;
} axis_writer;

/* Row i of block b, after axis_sample packed the sample's columns. */
static void axis_write_row(void *ctx, int64_t b, int64_t i, uint64_t *dst)
{
	const axis_writer *w = ctx;
	size_t words = mk_words(w->len);

	mk_bits_zero(dst, words);
	if (w->s->ind[0].bit[b * w->s->n + i]) {
		mk_bits_set_range(dst, 0, w->len);
		return;
	}
	if (w->cur)
		mk_cursor_row(w->cur, i, dst);
	mk_bits_or(dst, w->s->colbits + (size_t)b * words, words);
}

int mk_axis_write(const char *path, const mk_axis_opts *opts, int64_t sample, const char *out)
{
	mk_axis_opts o = {0};
	int64_t *given = NULL;
	axis_src s;
	axis_writer w = {.s = &s};
	mk_axis_cells *cells = NULL;
	char expr[640];
	int ret;

	mk_axis_src_init(&s, path, &o);
	if ((ret = axis_given(opts, &o, &given)) || (ret = mk_axis_src_open(&s)))
		goto out;
	if (sample < 0 || sample >= s.samples) {
		ret = mk_error_set(MK_EINVAL, "'%s': sample %" PRId64 " is outside 0..%" PRId64, path,
				   sample, s.samples - 1);
		goto out;
	}
	if (!(cells = malloc((size_t)s.blocks * sizeof *cells))) {
		ret = mk_error_set(MK_ENOMEM, "out of memory");
		goto out;
	}
	if ((ret = axis_sample(&s, sample, cells)))
		goto out;
	w.len = s.lengths[sample];
	if (s.pats && (ret = axis_pat_get(&s, sample, w.len, &w.cur)))
		goto out;
	snprintf(expr, sizeof expr, "axis(file=%s, rows=%s, cols=%s, sample=%" PRId64 ")%s%s",
		 path, s.ind[0].name, s.ind[1].name, sample, w.cur ? " + " : "",
		 w.cur ? mk_expr_text(s.pats[w.len].e) : "");
	/* always [layers, heads, N, N], so that measure reads layers as layers */
	ret = mk_write_stack_h5(out, &(mk_stack){.layers = s.layers,
						 .heads = s.rank == 4 ? s.heads : 1,
						 .n = w.len, .row = axis_write_row, .ctx = &w,
						 .expr = expr});
out:
	free(cells);
	free(given);
	mk_axis_src_close(&s);
	return ret;
}

/* ---- the result, described once ------------------------------------------- */

static void axis_show_indicators(const void *rec, char *buf, size_t cap)
{
	const mk_axis_result *r = rec;
	int at = snprintf(buf, cap, "rows %s, cols %s (%s; %" PRId64 " samples x ", r->rows_name,
			  r->cols_name, r->dtype_name, r->samples);

	if (at < 0 || (size_t)at >= cap)
		return;
	if (r->rank == 4)
		snprintf(buf + at, cap - (size_t)at, "%" PRId64 " layers x %" PRId64
			 " heads x N = %" PRId64 ")", r->layers, r->heads, r->n);
	else
		snprintf(buf + at, cap - (size_t)at, "%" PRId64 " layer%s x N = %" PRId64 ")",
			 r->layers, r->layers == 1 ? "" : "s", r->n);
}

static void axis_show_lengths(const void *rec, char *buf, size_t cap)
{
	const mk_axis_result *r = rec;
	snprintf(buf, cap, "%s: min %" PRId64 ", mean %.2f, max %" PRId64,
		 r->lengths_name ? r->lengths_name : "none (every sample is N long)", r->len_min,
		 r->len_mean, r->len_max);
}

static void axis_show_threshold(const void *rec, char *buf, size_t cap)
{
	snprintf(buf, cap, "p >= %g", ((const mk_axis_result *)rec)->threshold);
}

static void axis_show_local(const void *rec, char *buf, size_t cap)
{
	const char *local = ((const mk_axis_result *)rec)->local;
	snprintf(buf, cap, "%s", local ? local : "none");
}

static bool axis_has_threshold(const void *rec)
{
	return ((const mk_axis_result *)rec)->is_float;
}

static bool axis_has_heads(const void *rec)
{
	return ((const mk_axis_result *)rec)->list_by_head;
}

static bool axis_has_samples(const void *rec)
{
	return ((const mk_axis_result *)rec)->by_sample != NULL;
}

/* A group's statistics, as JSON orders them; tables and CSV leave out the
 * counts. */
#define AXIS_STAT_FIELDS                                                                      \
	{MK_FIELD(mk_axis_stat, rows_pct, "rows_pct", MK_FT_REAL), .label = "rows %",          \
	 .fmt = "%.2f", .help = "% of real tokens row-wise important"},                         \
	{MK_FIELD(mk_axis_stat, cols_pct, "cols_pct", MK_FT_REAL), .label = "cols %",          \
	 .fmt = "%.2f", .help = "% of real tokens column-wise important"},                      \
	{MK_FIELD(mk_axis_stat, rows, "rows", MK_FT_U64), .flags = MK_FF_JSON},                 \
	{MK_FIELD(mk_axis_stat, cols, "cols", MK_FT_U64), .flags = MK_FF_JSON},                 \
	{MK_FIELD(mk_axis_stat, tokens, "tokens", MK_FT_U64), .flags = MK_FF_JSON},             \
	{MK_FIELD(mk_axis_stat, rho, "rho", MK_FT_REAL), .fmt = "%.6f",                        \
	 .help = "Eq. 9: mean of 1 - |B|/N_i^2"},                                               \
	{MK_FIELD(mk_axis_stat, rho_axis, "rho_axis", MK_FT_REAL), .label = "axis only",       \
	 .fmt = "%.6f"},                                                                        \
	{MK_FIELD(mk_axis_stat, rho_local, "rho_local", MK_FT_REAL), .label = "local only",    \
	 .fmt = "%.6f"}

static const mk_field axis_layer_fields[] = {
	{MK_FIELD(mk_axis_stat, layer, "layer", MK_FT_I64)},
	AXIS_STAT_FIELDS,
};
const mk_record mk_axis_layer_record = MK_RECORD("axis_layer", mk_axis_stat, axis_layer_fields);

static const mk_field axis_head_fields[] = {
	{MK_FIELD(mk_axis_stat, layer, "layer", MK_FT_I64)},
	{MK_FIELD(mk_axis_stat, head, "head", MK_FT_I64)},
	AXIS_STAT_FIELDS,
};
const mk_record mk_axis_head_record = MK_RECORD("axis_head", mk_axis_stat, axis_head_fields);

static const mk_field axis_sample_fields[] = {
	{MK_FIELD(mk_axis_stat, sample, "sample", MK_FT_I64)},
	{MK_FIELD(mk_axis_stat, length, "length", MK_FT_I64)},
	AXIS_STAT_FIELDS,
};
const mk_record mk_axis_sample_record =
	MK_RECORD("axis_sample", mk_axis_stat, axis_sample_fields);

#define AXIS_ALL(m, name_, type_) MK_FIELD(mk_axis_result, all.m, name_, type_)

static const mk_field axis_fields[] = {
	{MK_FIELD(mk_axis_result, file, "file", MK_FT_STR)},
	{MK_FIELD(mk_axis_result, rows_name, "rows_dataset", MK_FT_STR), .flags = MK_FF_NOTEXT},
	{MK_FIELD(mk_axis_result, cols_name, "cols_dataset", MK_FT_STR), .flags = MK_FF_NOTEXT},
	{MK_FIELD(mk_axis_result, dtype_name, "dtype", MK_FT_STR), .flags = MK_FF_NOTEXT},
	{MK_FIELD(mk_axis_result, rows_name, "indicators", MK_FT_STR), .flags = MK_FF_TEXT,
	 .show = axis_show_indicators},
	{MK_FIELD(mk_axis_result, lengths_name, "lengths_from", MK_FT_STR), .flags = MK_FF_NOTEXT},
	{MK_FIELD(mk_axis_result, n, "lengths", MK_FT_I64), .flags = MK_FF_TEXT,
	 .show = axis_show_lengths},
	{MK_FIELD(mk_axis_result, threshold, "threshold", MK_FT_REAL), .label = "important",
	 .flags = MK_FF_OMIT, .present = axis_has_threshold, .show = axis_show_threshold},
	{MK_FIELD(mk_axis_result, local, "local", MK_FT_STR), .flags = MK_FF_NOTEXT},
	{MK_FIELD(mk_axis_result, n, "local", MK_FT_I64), .flags = MK_FF_TEXT,
	 .show = axis_show_local},
	{MK_FIELD(mk_axis_result, samples, "samples", MK_FT_I64), .flags = MK_FF_NOTEXT},
	{MK_FIELD(mk_axis_result, layers, "layers", MK_FT_I64), .flags = MK_FF_NOTEXT},
	{MK_FIELD(mk_axis_result, heads, "heads", MK_FT_I64), .flags = MK_FF_NOTEXT},
	{MK_FIELD(mk_axis_result, n, "n", MK_FT_I64), .flags = MK_FF_NOTEXT},
	{MK_FIELD(mk_axis_result, len_min, "length_min", MK_FT_I64), .flags = MK_FF_NOTEXT},
	{MK_FIELD(mk_axis_result, len_mean, "length_mean", MK_FT_REAL), .flags = MK_FF_NOTEXT},
	{MK_FIELD(mk_axis_result, len_max, "length_max", MK_FT_I64), .flags = MK_FF_NOTEXT},
	{AXIS_ALL(rows_pct, "rows_pct", MK_FT_REAL), .label = "row-wise", .fmt = "%.2f%%",
	 .unit = "of real tokens"},
	{AXIS_ALL(cols_pct, "cols_pct", MK_FT_REAL), .label = "column-wise", .fmt = "%.2f%%",
	 .unit = "of real tokens"},
	{AXIS_ALL(rows, "rows", MK_FT_U64), .flags = MK_FF_NOTEXT},
	{AXIS_ALL(cols, "cols", MK_FT_U64), .flags = MK_FF_NOTEXT},
	{AXIS_ALL(tokens, "tokens", MK_FT_U64), .flags = MK_FF_NOTEXT},
	{AXIS_ALL(rho, "rho", MK_FT_REAL), .label = "sparsity", .fmt = "%.6f",
	 .help = "Eq. 9: axis + local, mean over the blocks of 1 - |B|/N_i^2"},
	{AXIS_ALL(rho_axis, "rho_axis", MK_FT_REAL), .label = "axis only", .fmt = "%.6f"},
	{AXIS_ALL(rho_local, "rho_local", MK_FT_REAL), .label = "local only", .fmt = "%.6f"},
	{MK_FIELD(mk_axis_result, by_layer, "by_layer", MK_FT_LIST), .flags = MK_FF_NOTEXT,
	 .sub = &mk_axis_layer_record, .count_offset = offsetof(mk_axis_result, layers)},
	{MK_FIELD(mk_axis_result, by_head, "by_head", MK_FT_LIST), .flags = MK_FF_NOTEXT | MK_FF_OMIT,
	 .sub = &mk_axis_head_record, .count_offset = offsetof(mk_axis_result, blocks),
	 .present = axis_has_heads},
	{MK_FIELD(mk_axis_result, by_sample, "by_sample", MK_FT_LIST),
	 .flags = MK_FF_NOTEXT | MK_FF_OMIT, .sub = &mk_axis_sample_record,
	 .count_offset = offsetof(mk_axis_result, samples), .present = axis_has_samples},
};

const mk_record mk_axis_record = MK_RECORD("axis", mk_axis_result, axis_fields);
