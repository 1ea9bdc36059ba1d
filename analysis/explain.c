/*
 * Explaining away (Ding et al., "Attention that does not Explain Away"):
 * how much of each key reaches the output, sum_i pi_ij, under softmax and
 * the doubly-normalised schemes.  The column sums come from the attention
 * engine (mk_attn_colsums, every pass restricted to the mask); this file
 * keeps their log10 per (normalisation, head), summarises each head and all
 * heads together, and bins them for the paper's Fig. 1 histogram.
 */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "attn.h"
#include "explain.h"
#include "internal.h"

static int explain_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* numpy's default ("linear") quantile of m sorted values. */
static double explain_quantile(const double *v, int64_t m, double p)
{
	double pos = p * (double)(m - 1);
	int64_t lo = (int64_t)floor(pos);
	double frac = pos - (double)lo;

	if (lo + 1 >= m)
		return v[m - 1];
	return v[lo] + frac * (v[lo + 1] - v[lo]);
}

/* The statistics of count log10 column sums (n of them per head, heads
 * rows); work holds count doubles. */
static void explain_summary(const double *lg, int64_t count, double log_eps, double *work,
			    mk_explain_stat *st)
{
	int64_t m = 0;

	memset(st, 0, sizeof *st);
	for (int64_t j = 0; j < count; j++) {
		if (isinf(lg[j]) && lg[j] < 0) {
			st->empty++;
			continue;
		}
		work[m++] = lg[j];
		st->away += lg[j] < log_eps;
	}
	st->keys = m;
	if (!m) {
		st->min = st->q1 = st->median = st->q3 = st->max = NAN;
		return;
	}
	qsort(work, (size_t)m, sizeof *work, explain_cmp);
	st->min = work[0];
	st->q1 = explain_quantile(work, m, 0.25);
	st->median = explain_quantile(work, m, 0.5);
	st->q3 = explain_quantile(work, m, 0.75);
	st->max = work[m - 1];
}

/* Bins from floor(min) to ceil(max) in log10 (one decade at least), eps
 * inside, so that every normalisation shares the axis with the threshold. */
static void explain_histogram(mk_explain *e, double log_eps)
{
	size_t all = e->nnorms * (size_t)e->heads * (size_t)e->n;
	double mn = INFINITY, mx = -INFINITY, hi;

	for (size_t c = 0; c < all; c++)
		if (isfinite(e->log10[c])) {
			mn = e->log10[c] < mn ? e->log10[c] : mn;
			mx = e->log10[c] > mx ? e->log10[c] : mx;
		}
	if (!isfinite(mn))
		mn = mx = 0;
	e->lo = floor(mn < log_eps ? mn : log_eps);
	hi = ceil(mx);
	if (hi < e->lo + 1)
		hi = e->lo + 1;
	e->width = (hi - e->lo) / e->bins;
	for (size_t c = 0; c < all; c++) {
		size_t norm = c / ((size_t)e->heads * (size_t)e->n);
		int64_t b;
		if (!isfinite(e->log10[c]))
			continue;
		b = (int64_t)floor((e->log10[c] - e->lo) / e->width);
		b = b < 0 ? 0 : b >= e->bins ? e->bins - 1 : b;
		e->hist[norm * (size_t)e->bins + (size_t)b]++;
	}
}

/* Each normalisation valid, and none twice (outputs are keyed by name). */
static int explain_check_norms(const mk_explain_opts *o)
{
	char a[64], b[64];
	int ret;

	if (!o->nnorms || !o->norms)
		return mk_error_set(MK_EINVAL, "explain: no normalisation given");
	for (size_t x = 0; x < o->nnorms; x++) {
		if ((ret = mk_norm_check(&o->norms[x])))
			return ret;
		mk_norm_format(&o->norms[x], a, sizeof a);
		for (size_t y = 0; y < x; y++) {
			mk_norm_format(&o->norms[y], b, sizeof b);
			if (!strcmp(a, b))
				return mk_error_set(MK_EINVAL, "normalisation '%s' is listed twice", a);
		}
	}
	return MK_OK;
}

static int explain_check(const mk_explain_opts *o, int64_t heads, int64_t n, int64_t d)
{
	int ret;

	if ((ret = explain_check_norms(o)))
		return ret;
	if (!(o->eps > 0 && o->eps <= 1))
		return mk_error_set(MK_EINVAL, "eps must be in (0, 1], got %g", o->eps);
	if (o->bins < 1 || o->bins > MK_EXPLAIN_BINS_MAX)
		return mk_error_set(MK_EINVAL, "bins must be in 1..%d, got %d", MK_EXPLAIN_BINS_MAX,
				    o->bins);
	if (o->trace < 0 || o->trace > 1000)
		return mk_error_set(MK_EINVAL, "sinkhorn trace rounds must be in 0..1000 (0: none), "
				    "got %d", o->trace);
	if (n < 2)
		return mk_error_set(MK_EINVAL, "explaining away needs a sequence of 2 or more "
				    "tokens, got S = %lld", (long long)n);
	if (heads < 1 || d < 1 || d > MK_EXPLAIN_MAX_DIM)
		return mk_error_set(MK_EINVAL, "explain: %lld heads of dimension %lld (d must be in "
				    "1..%d)", (long long)heads, (long long)d, MK_EXPLAIN_MAX_DIM);
	return mk_check_n(n, "the sequence length S");
}

/* The arrays of out, their total size checked against max_memory first. */
static int explain_alloc(const mk_explain_opts *o, mk_explain *e)
{
	uint64_t cells, bytes, extra;
	int ret;

	if ((ret = mk_mul_u64(e->nnorms * (uint64_t)e->heads, (uint64_t)e->n, &cells)) ||
	    (ret = mk_mul_u64(cells, sizeof(double), &bytes)) ||
	    (ret = mk_mul_u64((uint64_t)e->heads, (uint64_t)(o->trace + 2) * 64 +
			      (uint64_t)e->n * 8, &extra)))
		return mk_error_set(MK_ERANGE, "explain: %zu normalisations x %lld heads x S = %lld "
				    "overflow", e->nnorms, (long long)e->heads, (long long)e->n);
	/* extra: the trace, the statistics' sort buffer (heads x n), hnas's
	 * and the trace's n doubles and the passes' 4 n floats */
	if ((ret = mk_check_memory(bytes + extra + (uint64_t)e->n * 32, o->max_memory
				   ? o->max_memory : MK_DEFAULT_MAX_MEMORY, "the column sums")))
		return ret;
	e->log10 = malloc((size_t)bytes);
	e->stat = calloc(e->nnorms * (size_t)(e->heads + 1), sizeof *e->stat);
	e->hist = calloc(e->nnorms * (size_t)e->bins, sizeof *e->hist);
	e->steps = e->trace ? calloc((size_t)e->heads * (size_t)e->trace, sizeof *e->steps) : NULL;
	e->score_bound = calloc((size_t)e->heads, sizeof *e->score_bound);
	if (!e->log10 || !e->stat || !e->hist || (e->trace && !e->steps) || !e->score_bound)
		return mk_error_set(MK_ENOMEM, "out of memory for the column sums");
	return MK_OK;
}

/* Column sums of one (normalisation, head), in log10. */
static int explain_one(const mk_norm *norm, int64_t n, int64_t d, const float *q,
		       const float *k, const mk_attn_layout *mask, double *lg,
		       mk_sinkhorn_step *trace)
{
	int ret = mk_attn_colsums(norm, n, d, q, k, mask, lg, trace);
	for (int64_t j = 0; ret == MK_OK && j < n; j++)
		lg[j] = isinf(lg[j]) ? lg[j] : lg[j] / log(10.0);
	return ret;
}

/* Each head's statistics, then all heads' together. */
static int explain_stats(const mk_explain_opts *o, mk_explain *e)
{
	size_t hn = (size_t)e->heads * (size_t)e->n;
	double *work = malloc(hn * sizeof *work), log_eps = log10(o->eps);

	if (!work)
		return mk_error_set(MK_ENOMEM, "out of memory for the column sum statistics");
	for (size_t a = 0; a < e->nnorms; a++) {
		const double *lg = e->log10 + a * hn;
		mk_explain_stat *st = e->stat + a * (size_t)(e->heads + 1);
		for (int64_t h = 0; h < e->heads; h++)
			explain_summary(lg + (size_t)h * (size_t)e->n, e->n, log_eps, work, st + h);
		explain_summary(lg, (int64_t)hn, log_eps, work, st + e->heads);
	}
	free(work);
	explain_histogram(e, log_eps);
	return MK_OK;
}

int mk_explain_run(const mk_explain_opts *o, int64_t heads, int64_t n, int64_t d,
		   const float *q, const float *k, const mk_attn_layout *mask, mk_explain *out)
{
	mk_norm sink = {.kind = MK_NORM_SINKHORN, .iters = o->trace};
	int64_t total = (int64_t)o->nnorms * heads + (o->trace ? heads : 0), done = 0;
	double *scratch = NULL;
	int ret;

	memset(out, 0, sizeof *out);
	if ((ret = explain_check(o, heads, n, d)))
		return ret;
	*out = (mk_explain){.heads = heads, .n = n, .nnorms = o->nnorms, .bins = o->bins,
			    .trace = o->trace};
	if ((ret = explain_alloc(o, out)))
		goto cleanup;
	for (int64_t h = 0; h < heads; h++)
		out->score_bound[h] = mk_attn_score_bound(n, d, q + (size_t)h * (size_t)n * (size_t)d,
							  k + (size_t)h * (size_t)n * (size_t)d);
	for (size_t a = 0; a < o->nnorms && ret == MK_OK; a++)
		for (int64_t h = 0; h < heads && ret == MK_OK; h++) {
			size_t at = (size_t)h * (size_t)n * (size_t)d;
			if (o->progress)
				o->progress(done++, total, o->arg);
			ret = explain_one(o->norms + a, n, d, q + at, k + at, mask,
					  out->log10 + (a * (size_t)heads + (size_t)h) * (size_t)n,
					  NULL);
		}
	if (ret == MK_OK && o->trace && !(scratch = malloc((size_t)n * sizeof *scratch)))
		ret = mk_error_set(MK_ENOMEM, "out of memory for the sinkhorn trace");
	for (int64_t h = 0; ret == MK_OK && o->trace && h < heads; h++) {
		size_t at = (size_t)h * (size_t)n * (size_t)d;
		if (o->progress)
			o->progress(done++, total, o->arg);
		ret = explain_one(&sink, n, d, q + at, k + at, mask, scratch,
				  out->steps + (size_t)h * (size_t)o->trace);
	}
	if (ret == MK_OK)
		ret = explain_stats(o, out);
cleanup:
	free(scratch);
	if (ret)
		mk_explain_release(out);
	return ret;
}

void mk_explain_release(mk_explain *e)
{
	if (!e)
		return;
	free(e->log10);
	free(e->stat);
	free(e->hist);
	free(e->steps);
	free(e->score_bound);
	memset(e, 0, sizeof *e);
}
