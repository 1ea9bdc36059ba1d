/*
 * The statistics of a sweep's timed runs, pure functions of the times so
 * that they are tested without timing anything (tests/check_sweep.c).
 *
 * The runs of one point are interleaved (repetition r of every kernel, then
 * r + 1), so a disturbance of the machine falls on the kernels of one
 * repetition alike; the ratio of two kernels' times in the same repetition
 * cancels it, where the ratio of their medians would not.  Hence the
 * speed-up is the median over r of dense[r] / kernel[r], and two kernels
 * are ranked by the interquartile range of their paired ratio: above 1 or
 * below 1, one is faster in at least three repetitions out of four; across
 * 1 and narrow (MK_SWEEP_TIE), they tie; across 1 and wide, the machine was
 * too noisy to tell.  The IQR is the spread of the runs, not a confidence
 * interval of the median: more repetitions estimate it better but do not
 * narrow it.
 */
#include "config.h"
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "sweep_internal.h"

static int stats_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The value at rank (n - 1) p of sorted x, between its neighbours. */
static double stats_quantile(const double *x, size_t n, double p)
{
	double h = (double)(n - 1) * p, lo = floor(h);
	size_t i = (size_t)lo;

	if (i + 1 >= n)
		return x[n - 1];
	return x[i] + (h - lo) * (x[i + 1] - x[i]);
}

/* Sorts x in place. */
static void stats_sorted(double *x, size_t n, mk_sweep_spread *out)
{
	assert(n >= 1);
	qsort(x, n, sizeof *x, stats_cmp_double);
	out->min = x[0];
	out->q1 = stats_quantile(x, n, 0.25);
	out->median = stats_quantile(x, n, 0.5);
	out->q3 = stats_quantile(x, n, 0.75);
}

void mk_sweep_spread_of(const double *x, size_t n, double *work, mk_sweep_spread *out)
{
	memcpy(work, x, n * sizeof *work);
	stats_sorted(work, n, out);
}

void mk_sweep_ratio_spread(const double *num, const double *den, size_t n, double *work,
			   mk_sweep_spread *out)
{
	for (size_t r = 0; r < n; r++)
		work[r] = num[r] / den[r];
	stats_sorted(work, n, out);
}

bool mk_sweep_unranked(const mk_sweep_spread *ratio)
{
	return ratio->q1 <= 1.0 && ratio->q3 >= 1.0 && ratio->q3 - ratio->q1 > MK_SWEEP_TIE;
}

void mk_sweep_point_stats(const double *times, int reps, unsigned kernels, double *work,
			  mk_sweep_stats *out)
{
	const double *dense = times + (size_t)MK_KERNEL_DENSE * (size_t)reps;
	size_t n = (size_t)reps;
	mk_sweep_spread ratio;

	assert(kernels & (1u << MK_KERNEL_DENSE));
	memset(out, 0, sizeof *out);
	for (int k = 0; k < MK_KERNEL_COUNT; k++) {
		const double *tk = times + (size_t)k * n;
		if (!(kernels & (1u << k)))
			continue;
		mk_sweep_spread_of(tk, n, work, &out->time[k]);
		mk_sweep_ratio_spread(dense, tk, n, work, &out->speedup[k]);
		for (int j = 0; j < k; j++) {
			if (!(kernels & (1u << j)))
				continue;
			mk_sweep_ratio_spread(times + (size_t)j * n, tk, n, work, &ratio);
			if (mk_sweep_unranked(&ratio)) {
				out->unranked[k] |= 1u << j;
				out->unranked[j] |= 1u << k;
			}
		}
	}
}

void mk_sweep_row_fill(const mk_attn_shape *s, const mk_sweep_stats *st, mk_attn_kernel k,
		       double max_err, mk_sweep_row *r)
{
	double flops = 4.0 * (double)s->batch * (double)s->heads * (double)s->d;
	double n2 = (double)s->n * (double)s->n;
	double cells = k == MK_KERNEL_DENSE ? n2 : (double)r->point.count;

	r->kernel = k;
	r->median_s = st->time[k].median;
	r->min_s = st->time[k].min;
	r->q1_s = st->time[k].q1;
	r->q3_s = st->time[k].q3;
	r->speedup = st->speedup[k].median;
	r->speedup_q1 = st->speedup[k].q1;
	r->speedup_q3 = st->speedup[k].q3;
	r->dense_s = st->time[MK_KERNEL_DENSE].median;
	r->gflops_dense = flops * n2 / r->median_s * 1e-9;
	r->gflops_actual = flops * cells / r->median_s * 1e-9;
	r->max_err = max_err;
	r->unranked = st->unranked[k];
	r->rank_ok = !r->unranked;
}
