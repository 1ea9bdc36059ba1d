/*
 * The statistics of a sweep's timed runs, pure functions of the times so
 * that they are tested without timing anything (tests/check_sweep.c).
 *
 * The runs of one point are interleaved (repetition r of every kernel, then
 * r + 1), so a disturbance of the machine falls on the kernels of one
 * repetition alike; the ratio of two kernels' times in the same repetition
 * cancels it, where the ratio of their medians would not.  Hence the
 * speed-up is the median over r of dense[r] / kernel[r], with the
 * distribution-free confidence interval of a median (order statistics: no
 * assumption about how times are spread, which on a shared machine is
 * anything but normal).  Two kernels whose intervals overlap cannot be
 * ranked; the interval narrows as repetitions are added, which is what the
 * sweep's adaptive loop relies on (an interquartile range would not).
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

/* The largest l whose interval [x(l), x(n + 1 - l)] (1-based order
 * statistics) covers the median with probability >= 0.95: 1 - 2 P(B < l)
 * for B ~ Bin(n, 1/2).  0 when n < 6 (no l qualifies); *coverage gets the
 * coverage of l, or of l = 1 when there is none. */
static size_t stats_ci_rank(size_t n, double *coverage)
{
	double below = 0.0, log_half_n = (double)n * log(0.5), lg_n = lgamma((double)n + 1.0);
	size_t l = 0;

	/* below = P(B < l + 1) as l grows */
	for (size_t i = 0; 2 * i < n; i++) {
		below += exp(lg_n - lgamma((double)i + 1.0) - lgamma((double)(n - i) + 1.0) +
			     log_half_n);
		if (below > 0.025)
			break;
		l = i + 1;
		*coverage = 1.0 - 2.0 * below;
	}
	if (l == 0)
		*coverage = n >= 1 ? 1.0 - 2.0 * exp(log_half_n) : 0.0;
	return l;
}

void mk_sweep_median_ci(const double *x, size_t n, double *lo, double *hi, double *coverage)
{
	double cov = 0.0;
	size_t l = stats_ci_rank(n, &cov);

	if (l == 0)
		l = 1;
	*lo = x[l - 1];
	*hi = x[n - l];
	if (coverage)
		*coverage = cov;
}

void mk_sweep_ratio_ci(const double *num, const double *den, size_t n, double *work,
		       mk_sweep_ci *out)
{
	for (size_t r = 0; r < n; r++)
		work[r] = num[r] / den[r];
	qsort(work, n, sizeof *work, stats_cmp_double);
	out->median = stats_quantile(work, n, 0.5);
	mk_sweep_median_ci(work, n, &out->lo, &out->hi, NULL);
}

bool mk_sweep_overlap(const mk_sweep_ci *a, const mk_sweep_ci *b)
{
	return a->lo <= b->hi && b->lo <= a->hi;
}

/* The ratio of the medians within the paired interval (a relative 1e-12
 * for the rounding of the division). */
static bool stats_agree(double dense, double kernel, const mk_sweep_ci *ci)
{
	double ratio = dense / kernel;
	return ratio >= ci->lo * (1 - 1e-12) && ratio <= ci->hi * (1 + 1e-12);
}

void mk_sweep_point_stats(double *const *times, const int *reps, unsigned kernels, double *work,
			  mk_sweep_stats *out)
{
	const double *dense = times[MK_KERNEL_DENSE];
	mk_sweep_spread d;

	assert(kernels & (1u << MK_KERNEL_DENSE));
	memset(out, 0, sizeof *out);
	for (int k = 0; k < MK_KERNEL_COUNT; k++) {
		size_t n = (size_t)reps[k];
		if (!(kernels & (1u << k)))
			continue;
		assert(n >= 1 && reps[k] <= reps[MK_KERNEL_DENSE]);
		out->reps[k] = reps[k];
		mk_sweep_spread_of(times[k], n, work, &out->time[k]);
		mk_sweep_spread_of(dense, n, work, &d);
		out->dense_median[k] = d.median;
		if (k == MK_KERNEL_DENSE) /* exactly 1, whatever rounding says */
			out->speedup[k] = (mk_sweep_ci){1.0, 1.0, 1.0};
		else
			mk_sweep_ratio_ci(dense, times[k], n, work, &out->speedup[k]);
		out->agree[k] = k == MK_KERNEL_DENSE ||
				stats_agree(d.median, out->time[k].median, &out->speedup[k]);
		for (int j = 0; j < k; j++) {
			if (!(kernels & (1u << j)) ||
			    !mk_sweep_overlap(&out->speedup[j], &out->speedup[k]))
				continue;
			out->unranked[k] |= 1u << j;
			out->unranked[j] |= 1u << k;
		}
	}
}

/* A 95% interval (from MK_SWEEP_MIN_REPS runs) within +-p of its median. */
static bool stats_within(double median, double lo, double hi, int reps, double p)
{
	return reps >= MK_SWEEP_MIN_REPS && hi <= median * (1 + p) && lo >= median * (1 - p);
}

bool mk_sweep_precise(const mk_sweep_stats *st, int k, double precision)
{
	const mk_sweep_ci *c = &st->speedup[k];
	return stats_within(c->median, c->lo, c->hi, st->reps[k], precision);
}

bool mk_sweep_row_precise(const mk_sweep_row *r, double precision)
{
	/* the CSV rounds: a relative 1e-12 keeps an interval read back precise */
	return stats_within(r->speedup, r->speedup_lo * (1 + 1e-12), r->speedup_hi * (1 - 1e-12),
			    r->reps, precision);
}

const char *mk_sweep_row_verdict(const mk_sweep_row *r, double precision)
{
	if (!r->agree)
		return "unsure";
	if (r->reps < MK_SWEEP_MIN_REPS && r->speedup_hi * MK_SWEEP_OUT_OF_RACE < 1)
		return "slower";
	if (r->speedup_lo > 1 && r->reps >= MK_SWEEP_MIN_REPS)
		return "faster";
	if (r->speedup_hi < 1 && r->reps >= MK_SWEEP_MIN_REPS)
		return "slower";
	return mk_sweep_row_precise(r, precision) ? "same" : "unsure";
}

bool mk_sweep_all_agree(const mk_sweep_stats *st, unsigned kernels)
{
	for (int k = 0; k < MK_KERNEL_COUNT; k++)
		if ((kernels & (1u << k)) && !st->agree[k])
			return false;
	return true;
}

double mk_sweep_baseline(const mk_sweep_row *rows, size_t n, const mk_norm *norm)
{
	double *v = malloc((n ? n : 1) * sizeof *v), out = 0.0;
	size_t m = 0;

	if (!v)
		return 0.0;
	/* one value per point: its dense row, or its first row where dense has none */
	for (size_t k = 0; k < n; k++) {
		const mk_sweep_row *r = &rows[k];
		bool first = k == 0 || r->grid != r[-1].grid || r->norm != r[-1].norm;
		if (first && (!norm || r->norm == norm))
			v[m++] = r->dense_s;
	}
	if (m) {
		qsort(v, m, sizeof *v, stats_cmp_double);
		out = stats_quantile(v, m, 0.5);
	}
	free(v);
	return out;
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
	r->speedup_lo = st->speedup[k].lo;
	r->speedup_hi = st->speedup[k].hi;
	r->dense_s = st->dense_median[k];
	r->gflops_dense = flops * n2 / r->median_s * 1e-9;
	r->gflops_actual = flops * cells / r->median_s * 1e-9;
	r->max_err = max_err;
	r->reps = st->reps[k];
	r->agree = st->agree[k];
	r->unranked = st->unranked[k];
	r->rank_ok = !r->unranked && r->agree && r->reps >= MK_SWEEP_MIN_REPS;
}
