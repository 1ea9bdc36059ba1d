/*
 * The reference every attention kernel is checked against: masked attention
 * computed naively in double precision, on chosen rows.
 *
 * Scores s_ij = q_i . k_j / sqrt(d) are recomputed row by row for each pass
 * instead of being stored, so memory stays O(n) per slice whatever n is.
 * The normalisations follow attn.h: pi_ij = exp(s_ij - f_i - g_j) on the
 * mask's entries.  softmax has g = 0; sinkhorn:K runs K rounds of a column
 * pass g_j = LSE_i (s_ij - f_i) over ALL rows and a row pass
 * f_i = LSE_j (s_ij - g_j), from f = 0; dnas is one round; hnas blends the
 * dnas and softmax outputs.  Non-entries are -inf scores and are skipped, so
 * empty rows give zero output rows and empty columns never enter.  The
 * (batch, head) slices run in parallel, each on one thread in a fixed order,
 * so the result does not depend on the number of threads (the column passes
 * of dnas and sinkhorn cost n^2 d per slice: minutes on one core at n = 4096
 * and 64 heads).
 */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "core.h"
#include "mask.h"
#include "attn.h"
#include "sweep.h"
#include "attn_ref.h"

#define REF_SPREAD_ROWS 64

typedef struct ref_slice {
	int64_t n, d;
	int64_t kv;          /* keys */
	double scale;
	const float *q, *k, *v;
	const mk_mask *mask; /* NULL: every entry */
	double *srow;        /* kv scores of the current row */
} ref_slice;

int64_t mk_attn_ref_rows(int64_t n, int64_t *rows)
{
	if (n <= MK_REF_MAX_ROWS) {
		for (int64_t i = 0; i < n; i++)
			rows[i] = i;
		return n;
	}
	for (int64_t r = 0; r < REF_SPREAD_ROWS; r++)
		rows[r] = r * (n - 1) / (REF_SPREAD_ROWS - 1);
	return REF_SPREAD_ROWS;
}

double mk_compute_tolerance(mk_compute t)
{
	static const double tol[MK_COMPUTE_COUNT] = {
		[MK_COMPUTE_FP32] = 1e-4, [MK_COMPUTE_FP16] = 1e-2, [MK_COMPUTE_BF16] = 5e-2};
	return (unsigned)t < MK_COMPUTE_COUNT ? tol[t] : 0.0;
}

/* x->srow[j] = s_ij on the mask's entries, -inf elsewhere. */
static void ref_scores(const ref_slice *x, int64_t i)
{
	const float *qi = x->q + i * x->d;
	const uint64_t *bits = x->mask ? mk_mask_crow(x->mask, i) : NULL;

	for (int64_t j = 0; j < x->kv; j++) {
		const float *kj = x->k + j * x->d;
		double acc = 0.0;
		if (bits && !mk_bit_test(bits, j)) {
			x->srow[j] = -INFINITY;
			continue;
		}
		for (int64_t c = 0; c < x->d; c++)
			acc += (double)qi[c] * (double)kj[c];
		x->srow[j] = acc * x->scale;
	}
}

/* Adds t to the running log-sum-exp (m, sum) without overflow. */
static void ref_lse_add(double *m, double *sum, double t)
{
	if (t == -INFINITY)
		return;
	if (t > *m) {
		*sum = *sum * exp(*m - t) + 1.0;
		*m = t;
	} else {
		*sum += exp(t - *m);
	}
}

/* LSE_j (s_ij - g_j) of the current row (g NULL: 0); -inf for no entry. */
static double ref_row_lse(const ref_slice *x, const double *g)
{
	double m = -INFINITY, sum = 0.0;
	for (int64_t j = 0; j < x->kv; j++)
		if (x->srow[j] != -INFINITY)
			ref_lse_add(&m, &sum, x->srow[j] - (g ? g[j] : 0.0));
	return m == -INFINITY ? -INFINITY : m + log(sum);
}

/* g_j = LSE_i (s_ij - f_i) over every row; cs is kv scratch. */
static void ref_col_pass(const ref_slice *x, const double *f, double *g, double *cs)
{
	for (int64_t j = 0; j < x->kv; j++) {
		g[j] = -INFINITY; /* running maximum, then the result */
		cs[j] = 0.0;
	}
	for (int64_t i = 0; i < x->n; i++) {
		if (f[i] == -INFINITY)
			continue; /* an empty row has no entry */
		ref_scores(x, i);
		for (int64_t j = 0; j < x->kv; j++)
			if (x->srow[j] != -INFINITY)
				ref_lse_add(&g[j], &cs[j], x->srow[j] - f[i]);
	}
	for (int64_t j = 0; j < x->kv; j++)
		if (g[j] != -INFINITY)
			g[j] += log(cs[j]);
}

static void ref_row_pass(const ref_slice *x, const double *g, double *f)
{
	for (int64_t i = 0; i < x->n; i++) {
		ref_scores(x, i);
		f[i] = ref_row_lse(x, g);
	}
}

/* out (d doubles) = sum_j exp(s_ij - f_i - g_j) v_j for row i. */
static void ref_output(const ref_slice *x, int64_t i, const double *g, double *out)
{
	double f;
	ref_scores(x, i);
	f = ref_row_lse(x, g);
	memset(out, 0, (size_t)x->d * sizeof *out);
	if (f == -INFINITY)
		return;
	for (int64_t j = 0; j < x->kv; j++) {
		const float *vj = x->v + j * x->d;
		double p;
		if (x->srow[j] == -INFINITY)
			continue;
		p = exp(x->srow[j] - f - (g ? g[j] : 0.0));
		for (int64_t c = 0; c < x->d; c++)
			out[c] += p * (double)vj[c];
	}
}

/* g after `rounds` Sinkhorn rounds from f = 0 (the last row pass is done
 * by ref_output, on the asked rows only). */
static void ref_sinkhorn_g(const ref_slice *x, int rounds, double *f, double *g, double *cs)
{
	for (int64_t i = 0; i < x->n; i++)
		f[i] = 0.0;
	for (int r = 1; r <= rounds; r++) {
		ref_col_pass(x, f, g, cs);
		if (r < rounds)
			ref_row_pass(x, g, f);
	}
}

static void ref_slice_run(const ref_slice *x, const mk_norm *norm, const int64_t *rows,
			  int64_t nrows, double *scratch, double *ref)
{
	double *f = scratch, *g = scratch + x->n, *cs = g + x->kv;
	double *tmp = cs + x->kv; /* d: the softmax output for hnas */
	int rounds = norm->kind == MK_NORM_SINKHORN ? norm->iters : 1;

	if (norm->kind != MK_NORM_SOFTMAX)
		ref_sinkhorn_g(x, rounds, f, g, cs);
	for (int64_t r = 0; r < nrows; r++) {
		double *out = ref + r * x->d;
		ref_output(x, rows[r], norm->kind == MK_NORM_SOFTMAX ? NULL : g, out);
		if (norm->kind != MK_NORM_HNAS)
			continue;
		ref_output(x, rows[r], NULL, tmp);
		for (int64_t c = 0; c < x->d; c++)
			out[c] = norm->u * out[c] + (1.0 - norm->u) * tmp[c];
	}
}

int mk_attn_reference(const mk_norm *norm, const mk_attn_shape *s, const float *q,
		      const float *k, const float *v, const mk_mask *mask, const int64_t *rows,
		      int64_t nrows, double *ref)
{
	int64_t kv = mk_attn_kv(s);
	size_t slice = (size_t)s->n * (size_t)s->d, kslice = (size_t)kv * (size_t)s->d;
	size_t per = (size_t)s->n + 3 * (size_t)kv + (size_t)s->d;
	int64_t slices = s->batch * s->heads;
	int nthreads = 1, ret;
	double *scratch;

	if (s->batch < 1 || s->heads < 1 || s->n < 1 || s->d < 1)
		return mk_error_set(MK_EINVAL, "reference: the shape must be positive");
	if (mask && (mk_mask_n(mask) != s->n || mk_mask_cols(mask) != kv))
		return mk_error_set(MK_EINVAL, "reference: the mask is %lld x %lld, not %lld x %lld",
				    (long long)mk_mask_n(mask), (long long)mk_mask_cols(mask),
				    (long long)s->n, (long long)kv);
	for (int64_t r = 0; r < nrows; r++)
		if (rows[r] < 0 || rows[r] >= s->n)
			return mk_error_set(MK_EINVAL, "reference: row %lld is outside 0..%lld",
					    (long long)rows[r], (long long)s->n - 1);
	/* double would compute these scores, but the engine refuses them: a
	 * reference for inputs no kernel takes would only hide the refusal */
	if ((ret = mk_attn_check_scores(s, q, k)))
		return ret;
#ifdef _OPENMP
	nthreads = slices < omp_get_max_threads() ? (int)slices : omp_get_max_threads();
#endif
	scratch = malloc((size_t)nthreads * per * sizeof *scratch);
	if (!scratch)
		return mk_error_set(MK_ENOMEM, "out of memory for the reference");
	#pragma omp parallel for schedule(dynamic) num_threads(nthreads) if (nthreads > 1)
	for (int64_t bh = 0; bh < slices; bh++) {
		size_t at = (size_t)bh * slice, kat = (size_t)bh * kslice;
#ifdef _OPENMP
		double *mine = scratch + (size_t)omp_get_thread_num() * per;
#else
		double *mine = scratch;
#endif
		ref_slice x = {.n = s->n, .kv = kv, .d = s->d, .scale = 1.0 / sqrt((double)s->d),
			       .q = q + at, .k = k + kat, .v = v + kat, .mask = mask,
			       .srow = mine + s->n + 2 * kv + s->d};
		ref_slice_run(&x, norm, rows, nrows, mine, ref + (size_t)bh * nrows * s->d);
	}
	free(scratch);
	return MK_OK;
}

double mk_attn_ref_error(const mk_attn_shape *s, const int64_t *rows, int64_t nrows,
			 const double *ref, const float *o)
{
	size_t slice = (size_t)s->n * (size_t)s->d;
	double worst = 0.0;

	for (int64_t bh = 0; bh < s->batch * s->heads; bh++)
		for (int64_t r = 0; r < nrows; r++) {
			const float *got = o + (size_t)bh * slice + (size_t)rows[r] * s->d;
			const double *want = ref + ((size_t)bh * nrows + r) * s->d;
			for (int64_t c = 0; c < s->d; c++) {
				double e = fabs((double)got[c] - want[c]);
				if (isnan(e))
					return INFINITY;
				worst = e > worst ? e : worst;
			}
		}
	return worst;
}
