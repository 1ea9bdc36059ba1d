/*
 * The least-squares Toeplitz fit of a square block and its R^2.
 *
 * Toeplitz matrices are a linear subspace and the diagonals partition the
 * entries, so the projection of A onto it sets each diagonal to A's mean
 * along it: no solver is needed.  Two passes over the block: the first sums
 * each diagonal, the second adds (a - t_d)^2 and (a - mean)^2.  Summing
 * around the means (instead of sum a^2 - n mean^2) keeps RSS exact when it is
 * tiny next to TSS, which is what tells an exactly Toeplitz matrix (R^2 = 1
 * to rounding) from a nearly Toeplitz one.
 *
 * Both passes walk rows, not diagonals: row i's entries land on the
 * consecutive diagonal slots k-1-i .. 2k-2-i, so the inner loops are unit
 * stride on both sides and vectorise.  Each thread sums into its own row of
 * partial sums, merged at the end in thread order: for a given thread count
 * the result is the same from run to run.
 */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "core.h"
#include "weights.h"

#define TOEP_CHUNK 16       /* rows per scheduling unit */
#define TOEP_CONSTANT 1e-13 /* TSS / sum a^2 below this: a constant block */

/* A symmetric block is read below the diagonal only: row i has i + 1
 * entries.  Its rows are uneven, hence small chunks of rows dealt out in turn. */
static int64_t toep_row_len(int64_t i, int64_t k, bool symmetric)
{
	return symmetric ? i + 1 : k;
}

static int toep_threads(void)
{
#ifdef _OPENMP
	return omp_get_max_threads();
#else
	return 1;
#endif
}

static int toep_thread(void)
{
#ifdef _OPENMP
	return omp_get_thread_num();
#else
	return 0;
#endif
}

/* part holds one row of 2k - 1 partial sums per thread. */
static void toep_sum_rows(const double *a, int64_t lda, int64_t k, bool symmetric,
			  double *part, int nthreads, double *sums)
{
	size_t width = (size_t)(2 * k - 1);

	memset(part, 0, (size_t)nthreads * width * sizeof *part);
	#pragma omp parallel for schedule(static, TOEP_CHUNK) num_threads(nthreads)
	for (int64_t i = 0; i < k; i++) {
		const double *row = a + i * lda;
		double *slot = part + (size_t)toep_thread() * width + (size_t)(k - 1 - i);
		int64_t len = toep_row_len(i, k, symmetric);
		for (int64_t j = 0; j < len; j++)
			slot[j] += row[j];
	}
	for (int p = 0; p < nthreads; p++)
		for (size_t d = 0; d < width; d++)
			sums[d] += part[(size_t)p * width + d];
}

/* Turns the diagonal sums into means (in place) and returns the block's
 * mean.  A symmetric block's upper diagonals mirror the lower ones. */
static double toep_means(double *t, int64_t k, bool symmetric)
{
	double total = 0.0;

	for (int64_t d = -(k - 1); d <= 0; d++) {
		double s = t[k - 1 + d];
		total += symmetric && d ? 2.0 * s : s;
		t[k - 1 + d] = s / (double)(k + d);
		if (symmetric)
			t[k - 1 - d] = t[k - 1 + d];
	}
	for (int64_t d = 1; !symmetric && d < k; d++) {
		total += t[k - 1 + d];
		t[k - 1 + d] /= (double)(k - d);
	}
	return total / ((double)k * (double)k);
}

/* Each chunk of TOEP_CHUNK rows sums into its own slot and the slots are
 * added in order, so RSS and TSS do not depend on the thread count. */
static void toep_residuals(const double *a, int64_t lda, int64_t k, bool symmetric,
			   const double *t, double mean, double *chunks, double *rss_out,
			   double *tss_out)
{
	int64_t nchunks = (k + TOEP_CHUNK - 1) / TOEP_CHUNK;

	#pragma omp parallel for schedule(dynamic, 1)
	for (int64_t c = 0; c < nchunks; c++) {
		double r = 0.0, s = 0.0;
		for (int64_t i = c * TOEP_CHUNK; i < k && i < (c + 1) * TOEP_CHUNK; i++) {
			const double *row = a + i * lda, *slot = t + (k - 1 - i);
			int64_t len = toep_row_len(i, k, symmetric);
			double ri = 0.0, si = 0.0;
			for (int64_t j = 0; j < len; j++) {
				double e = row[j] - slot[j], d = row[j] - mean;
				ri += e * e;
				si += d * d;
			}
			if (symmetric) {
				/* off-diagonal entries stand for themselves and their mirror */
				double ed = row[i] - slot[i], cd = row[i] - mean;
				ri = 2.0 * ri - ed * ed;
				si = 2.0 * si - cd * cd;
			}
			r += ri;
			s += si;
		}
		chunks[2 * c] = r;
		chunks[2 * c + 1] = s;
	}
	*rss_out = *tss_out = 0.0;
	for (int64_t c = 0; c < nchunks; c++) {
		*rss_out += chunks[2 * c];
		*tss_out += chunks[2 * c + 1];
	}
}

/* R^2, with a block constant up to rounding (TSS a vanishing fraction of
 * sum a^2: below float32 resolution) counted as exactly Toeplitz, and RSS
 * capped at TSS, as it is in exact arithmetic. */
static void toep_r2(mk_toeplitz *out)
{
	double k2 = (double)out->k * (double)out->k;
	double sumsq = out->tss + k2 * out->mean * out->mean;

	if (out->tss <= TOEP_CONSTANT * sumsq) {
		out->r2 = 1.0;
		return;
	}
	if (out->rss > out->tss)
		out->rss = out->tss;
	out->r2 = 1.0 - out->rss / out->tss;
}

int mk_toeplitz_fit(const double *a, int64_t lda, int64_t k, bool symmetric, double *profile,
		    mk_toeplitz *out)
{
	int nthreads = toep_threads();
	double *t = NULL, *part = NULL;
	uint64_t width = (uint64_t)(2 * k - 1), nchunks = (uint64_t)(k / TOEP_CHUNK + 1), bytes;
	int ret = MK_OK;

	memset(out, 0, sizeof *out);
	if (!a || k < 1 || lda < k)
		return mk_error_set(MK_EINVAL, "Toeplitz fit: bad block (k = %lld, lda = %lld)",
				    (long long)k, (long long)lda);
	if (mk_mul_u64(width, (uint64_t)(nthreads + 1), &bytes) || bytes + 2 * nchunks < bytes ||
	    mk_mul_u64(bytes + 2 * nchunks, sizeof *t, &bytes) || bytes > SIZE_MAX)
		return mk_error_set(MK_ERANGE, "Toeplitz fit: k = %lld is too large", (long long)k);
	t = calloc((size_t)bytes / sizeof *t, sizeof *t);
	if (!t)
		return mk_error_set(MK_ENOMEM, "Toeplitz fit: out of memory (k = %lld)", (long long)k);
	part = t + width;
	toep_sum_rows(a, lda, k, symmetric, part, nthreads, t);
	out->k = k;
	out->mean = toep_means(t, k, symmetric);
	toep_residuals(a, lda, k, symmetric, t, out->mean, part + (size_t)nthreads * width,
		       &out->rss, &out->tss);
	toep_r2(out);
	if (!isfinite(out->r2) || !isfinite(out->tss))
		ret = mk_error_set(MK_ERANGE, "Toeplitz fit: the sums overflow (entries too large)");
	else if (profile)
		memcpy(profile, t, (size_t)width * sizeof *t);
	free(t);
	return ret;
}
