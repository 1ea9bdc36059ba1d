/*
 * `maskkit explain` as calls: Q and K from their source, the column sums'
 * statistics under a mask (explain.c), the views the report is shown
 * through, and its files; the records that describe them are in
 * explain_record.c.
 */
#include "config.h"
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "internal.h"
#include "explain.h"
#include "model.h"

static int explain_heads_match(const mk_explain_source *s, const mk_qk *qk, int ret)
{
	if (ret == MK_OK && s->heads && s->heads != qk->heads) {
		mk_error_set(MK_EINVAL, "q and k hold %" PRId64 " heads, not %" PRId64, qk->heads,
			     s->heads);
		return mk_error_param("heads");
	}
	return ret;
}

static int explain_source_qk(const mk_explain_source *s, mk_qk *qk)
{
	uint64_t mem = s->max_memory;
	mk_tensor q = {0}, k = {0};
	int ret;

	if (s->input && s->text)
		return mk_qk_from_model(s->input, NULL, s->text, s->sentences,
					s->sample >= 0 ? s->sample : 0, s->layer, s->max_len, mem, qk);
	if (s->input && s->sample >= 0)
		return explain_heads_match(s, qk, mk_qk_read_sample(s->input, s->sample, mem, qk));
	if (s->input)
		return mk_qk_read(s->input, s->heads, s->tf, mem, qk);
	if (s->random_n > 0)
		return mk_qk_random(s->heads ? s->heads : 1, s->random_n, s->random_d,
				    s->scale > 0 ? s->scale : 1.0, s->seed, mem, qk);
	if (!s->q || !s->k)
		return mk_error_set(MK_EINVAL, "no source of Q and K: an input, q and k, or random");
	if ((ret = mk_tensor_read(s->q, mem, &q)) || (ret = mk_tensor_read(s->k, mem, &k))) {
		mk_tensor_release(&q);
		mk_tensor_release(&k);
		return ret;
	}
	return explain_heads_match(s, qk, mk_qk_adopt(&q, &k, qk));
}

int mk_explain_source_read(const mk_explain_source *s, mk_qk *qk)
{
	int ret;

	memset(qk, 0, sizeof *qk);
	if ((ret = explain_source_qk(s, qk)))
		return ret;
	if (qk->n < 2)
		return mk_error_set(MK_EINVAL, "explaining away needs S >= 2 tokens, got S = %" PRId64,
				    qk->n);
	return MK_OK;
}

static int explain_source_name(const mk_explain_source *s, char **out)
{
	size_t cap = (s->input ? strlen(s->input) : s->q && s->k ? strlen(s->q) + strlen(s->k) : 0)
		     + 64;
	char *buf = *out = malloc(cap);

	if (!buf)
		return mk_error_set(MK_ENOMEM, "out of memory");
	if (s->input)
		snprintf(buf, cap, "%s", s->input);
	else if (s->random_n > 0)
		snprintf(buf, cap, "random, scale %g, seed %" PRIu64, s->scale > 0 ? s->scale : 1.0,
			 s->seed);
	else
		snprintf(buf, cap, "%s, %s", s->q, s->k);
	return MK_OK;
}

static double explain_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Column sums come from float32 scores: a log sum is uncertain by a few
 * ulps of the largest |score| (head h; all heads for h = heads), so 1/S
 * counts as reached within that (Theorem 2 holds exactly in reals). */
static bool explain_above(const mk_explain *e, const mk_explain_stat *st, int64_t h)
{
	double top = 0, slack;

	for (int64_t x = h < e->heads ? h : 0; x < (h < e->heads ? h + 1 : e->heads); x++)
		top = e->score_bound[x] > top ? e->score_bound[x] : top;
	slack = 1e-5 + 8 * FLT_EPSILON * (top + log((double)e->n));
	return st->keys && st->min * log(10.0) >= -log((double)e->n) - slack;
}

static void explain_row(const mk_explain_report *r, size_t a, int64_t h, mk_explain_row *x)
{
	const mk_explain *e = &r->e;
	const mk_explain_stat *st = e->stat + a * (size_t)(e->heads + 1) + (size_t)h;

	*x = (mk_explain_row){
		.head = h < e->heads ? h : -1, .norm = r->names[a],
		.head_name = h < e->heads ? r->names[e->nnorms + (size_t)h] : "all",
		.keys = st->keys, .empty = st->empty, .away = st->away,
		.fraction_away = st->keys ? (double)st->away / (double)st->keys : NAN,
		.min = st->min, .q1 = st->q1, .median = st->median, .q3 = st->q3, .max = st->max,
		.min_colsum = st->keys ? pow(10.0, st->min) : NAN, .bound = r->bound,
		.above_bound = explain_above(e, st, h)};
	x->above = x->above_bound;
}

/* The Sinkhorn trace per head, and per round over the heads. */
static int explain_trace_views(mk_explain_report *r)
{
	const mk_explain *e = &r->e;
	size_t rounds = (size_t)e->trace, heads = (size_t)e->heads;

	r->trace = calloc(heads, sizeof *r->trace);
	r->trace_rows = calloc(heads * rounds, sizeof *r->trace_rows);
	r->trace_mean = calloc(rounds, sizeof *r->trace_mean);
	if (!r->trace || !r->trace_rows || !r->trace_mean)
		return mk_error_set(MK_ENOMEM, "out of memory for the trace");
	r->ntrace = e->heads;
	r->rounds = e->trace;
	for (size_t h = 0; h < heads; h++) {
		r->trace[h] = (mk_explain_trace_head){r->trace_rows + h * rounds, e->trace};
		for (size_t t = 0; t < rounds; t++) {
			const mk_sinkhorn_step *s = e->steps + h * rounds + t;
			mk_explain_trace_row *m = &r->trace_mean[t];
			r->trace_rows[h * rounds + t] = (mk_explain_trace_row){
				(int64_t)t + 1, s->row_max, s->row_mean, s->col_max, s->col_mean};
			m->round = (int64_t)t + 1;
			m->row_max = s->row_max > m->row_max ? s->row_max : m->row_max;
			m->col_max = s->col_max > m->col_max ? s->col_max : m->col_max;
			m->row_mean += s->row_mean / (double)heads;
			m->col_mean += s->col_mean / (double)heads;
		}
	}
	return MK_OK;
}

static int explain_views(mk_explain_report *r, const mk_explain_opts *o)
{
	const mk_explain *e = &r->e;
	size_t norms = e->nnorms, heads = (size_t)e->heads;
	int64_t shown = heads > 1 ? e->heads + 1 : 1;

	r->names = calloc(norms + heads, sizeof *r->names);
	r->rows = calloc(norms * (heads + 1), sizeof *r->rows);
	r->table = calloc(norms * (size_t)shown, sizeof *r->table);
	r->norms = calloc(norms, sizeof *r->norms);
	r->counts = calloc(norms, sizeof *r->counts);
	if (!r->names || !r->rows || !r->table || !r->norms || !r->counts)
		return mk_error_set(MK_ENOMEM, "out of memory for the report");
	for (size_t a = 0; a < norms; a++)
		mk_norm_format(&o->norms[a], r->names[a], sizeof r->names[a]);
	for (size_t h = 0; h < heads; h++)
		snprintf(r->names[norms + h], sizeof r->names[0], "%zu", h);
	for (size_t a = 0; a < norms; a++) {
		mk_explain_row *rows = r->rows + a * (heads + 1);
		for (size_t h = 0; h <= heads; h++)
			explain_row(r, a, (int64_t)h, &rows[h]);
		r->table[a * (size_t)shown] = rows[heads];
		for (int64_t h = 1; h < shown; h++)
			r->table[a * (size_t)shown + (size_t)h] = rows[h - 1];
		r->norms[a] = (mk_explain_norm_view){r->names[a], &rows[heads], rows, e->heads};
		r->counts[a] = (mk_explain_counts){r->names[a], e->hist + a * (size_t)e->bins, e->bins};
	}
	r->nrows = (int64_t)(norms * (heads + 1));
	r->ntable = (int64_t)norms * shown;
	r->nnorms = (int64_t)norms;
	return e->trace ? explain_trace_views(r) : MK_OK;
}

int mk_explain_report_run(const mk_explain_source *s, const mk_qk *qk, const mk_expr *mask,
			  int64_t tile, const mk_explain_opts *o, mk_explain_report *r)
{
	mk_mask *m = NULL;
	mk_attn_layout *layout = NULL;
	int ret = MK_OK;

	memset(r, 0, sizeof *r);
	if ((ret = explain_source_name(s, &r->input)))
		return ret;
	r->n = qk->n;
	r->d = qk->d;
	r->heads = qk->heads;
	r->mask = mask ? mk_expr_params(mask) : "full";
	r->entries = (uint64_t)qk->n * (uint64_t)qk->n;
	r->eps = o->eps;
	r->bound = 1.0 / (double)qk->n;
	if (mask && ((ret = mk_expr_to_mask(mask, &m)) ||
		     (ret = mk_attn_layout_new(m, tile, o->max_memory, &layout))))
		goto out;
	if (m)
		r->entries = mk_mask_count(m);
	r->seconds = explain_now();
	ret = mk_explain_run(o, qk->heads, qk->n, qk->d, qk->q.data, qk->k.data, layout, &r->e);
	r->seconds = explain_now() - r->seconds;
	if (ret == MK_OK)
		ret = explain_views(r, o);
out:
	mk_attn_layout_free(layout);
	mk_mask_free(m);
	return ret;
}

void mk_explain_report_release(mk_explain_report *r)
{
	if (!r)
		return;
	mk_explain_release(&r->e);
	free(r->input);
	free(r->rows);
	free(r->table);
	free(r->norms);
	free(r->counts);
	free(r->trace);
	free(r->trace_rows);
	free(r->trace_mean);
	free(r->names);
	memset(r, 0, sizeof *r);
}

int mk_explain_write_sums(const mk_explain *e, const char *path, uint64_t max_memory)
{
	int64_t dims[3] = {(int64_t)e->nnorms, e->heads, e->n};
	mk_tensor t;
	int ret = mk_tensor_new(3, dims, MK_DTYPE_F32, max_memory, "the column sums", &t);

	if (ret)
		return ret;
	for (uint64_t c = 0; c < mk_tensor_count(&t); c++)
		t.data[c] = (float)e->log10[c];
	ret = mk_tensor_write(&t, path, "log10_colsum", MK_DTYPE_F32);
	mk_tensor_release(&t);
	return ret;
}

/* Its columns are the normalisations: written here, not by the emitter. */
static int explain_hist_write(void *file, void *arg)
{
	const mk_explain_report *r = arg;
	const mk_explain *e = &r->e;
	FILE *f = file;

	fputs("log10_lo,log10_hi", f);
	for (size_t a = 0; a < e->nnorms; a++)
		fprintf(f, ",%s", r->names[a]);
	fputc('\n', f);
	for (int b = 0; b < e->bins; b++) {
		fprintf(f, "%.17g,%.17g", e->lo + b * e->width, e->lo + (b + 1) * e->width);
		for (size_t a = 0; a < e->nnorms; a++)
			fprintf(f, ",%" PRId64, e->hist[a * (size_t)e->bins + (size_t)b]);
		fputc('\n', f);
	}
	return ferror(f) ? mk_error_set(MK_ESYS, "write error: %s", strerror(errno ? errno : EIO))
			 : MK_OK;
}

int mk_explain_write_hist(const mk_explain_report *r, const char *path)
{
	return mk_write_atomic(path, explain_hist_write, (void *)r);
}
