/* Private to the sweep (analysis/sweep.c, sweep_stats.c) and its tests: the
 * solver of a pattern's size parameter, the statistics of the timed runs. */
#ifndef MK_SWEEP_INTERNAL_H
#define MK_SWEEP_INTERNAL_H

#include "maskkit.h"

/* Values scanned one by one up to this many; beyond, a geometric grid
 * refined around its best point. */
#define MK_SWEEP_SCAN_ALL 1024

/* Solves one pattern's parameter at size n; values already measured are
 * remembered, so solving many targets costs little more than one. */
typedef struct mk_sweep_solver mk_sweep_solver;
int mk_sweep_solver_new(const char *pattern, int64_t n, uint64_t seed, uint64_t max_memory,
			mk_sweep_solver **out);
void mk_sweep_solver_free(mk_sweep_solver *s); /* NULL-safe */
/* The value whose sparsity is nearest target (in [0, 1]); ties go to the
 * smaller value. */
int mk_sweep_solve(mk_sweep_solver *s, double target, mk_sweep_point *out);

/* ---- statistics of the timed runs (analysis/sweep_stats.c) ----------------- */

/* Quartiles interpolate between order statistics: the value at rank
 * (n - 1) p of the sorted values (numpy's default, Hyndman and Fan's
 * type 7), so the median of an even count is the mean of the middle two. */
typedef struct mk_sweep_spread {
	double min, q1, median, q3;
} mk_sweep_spread;

/* The spread of x[0..n) (n >= 1); work holds n values (x is not touched). */
void mk_sweep_spread_of(const double *x, size_t n, double *work, mk_sweep_spread *out);
/* The spread of the paired ratios num[r] / den[r], r < n, built in work. */
void mk_sweep_ratio_spread(const double *num, const double *den, size_t n, double *work,
			   mk_sweep_spread *out);
/* Whether two kernels cannot be ranked, from the spread of their paired
 * ratio: its interquartile range contains 1 and is wider than MK_SWEEP_TIE. */
bool mk_sweep_unranked(const mk_sweep_spread *ratio);

/* The statistics of one point: for every kernel k in kernels (dense among
 * them), its times at times + k * reps (reps values each, repetition r of
 * every kernel taken together); work holds reps values. */
typedef struct mk_sweep_stats {
	mk_sweep_spread time[MK_KERNEL_COUNT];
	mk_sweep_spread speedup[MK_KERNEL_COUNT]; /* of dense[r] / kernel[r] */
	unsigned unranked[MK_KERNEL_COUNT];       /* as mk_sweep_row's */
} mk_sweep_stats;
void mk_sweep_point_stats(const double *times, int reps, unsigned kernels, double *work,
			  mk_sweep_stats *out);
/* Kernel k's times, speed-up, flag and throughput (r->point.count, or n^2
 * for dense) in r, from the point's statistics. */
void mk_sweep_row_fill(const mk_attn_shape *s, const mk_sweep_stats *st, mk_attn_kernel k,
		       double max_err, mk_sweep_row *r);

#endif
