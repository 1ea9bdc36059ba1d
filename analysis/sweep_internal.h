/* Private to the sweep (analysis/sweep.c, sweep_solve.c, sweep_stats.c) and its tests: the
 * solver of a pattern's size parameter, the statistics of the timed runs. */
#ifndef MK_SWEEP_INTERNAL_H
#define MK_SWEEP_INTERNAL_H

#include "attn.h"
#include "sweep.h"

/* Values scanned one by one up to this many; beyond, a geometric grid
 * refined around its best point. */
#define MK_SWEEP_SCAN_ALL 1024

/* Solves one pattern's parameter at size n (sweep_solve.c); values
 * already measured are remembered, so solving many targets costs little
 * more than one.  pattern as mk_sweep_param takes it; block is the tile, the
 * block of a pattern swept in block form (0 or 1: by tokens). */
typedef struct mk_sweep_solver mk_sweep_solver;
int mk_sweep_solver_new(const char *pattern, int64_t n, int64_t block, uint64_t seed,
			uint64_t max_memory, mk_sweep_solver **out);
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

/* A median and its 95% confidence interval (mk_sweep_median_ci). */
typedef struct mk_sweep_ci {
	double median, lo, hi;
} mk_sweep_ci;

/* The spread of x[0..n) (n >= 1); work holds n values (x is not touched). */
void mk_sweep_spread_of(const double *x, size_t n, double *work, mk_sweep_spread *out);
/* The median of the paired ratios num[r] / den[r], r < n, and its
 * interval, built in work. */
void mk_sweep_ratio_ci(const double *num, const double *den, size_t n, double *work,
		       mk_sweep_ci *out);
/* Whether two speed-up intervals overlap: their kernels cannot be ranked. */
bool mk_sweep_overlap(const mk_sweep_ci *a, const mk_sweep_ci *b);

/* The statistics of one point: for every kernel k in kernels (dense among
 * them), its reps[k] times at times[k], repetition r of every kernel taken
 * together.  A kernel leaves the rotation once its interval is precise, so
 * its repetitions are the first reps[k] of dense's (reps[dense] is the
 * largest); its speed-up and dense's median at it are taken over those.
 * work holds reps[dense] values. */
typedef struct mk_sweep_stats {
	int reps[MK_KERNEL_COUNT];
	mk_sweep_spread time[MK_KERNEL_COUNT];
	double dense_median[MK_KERNEL_COUNT];     /* over kernel k's repetitions */
	mk_sweep_ci speedup[MK_KERNEL_COUNT];     /* of dense[r] / kernel[r] */
	unsigned unranked[MK_KERNEL_COUNT];       /* as mk_sweep_row's */
	bool agree[MK_KERNEL_COUNT];              /* as mk_sweep_row's */
} mk_sweep_stats;
void mk_sweep_point_stats(double *const *times, const int *reps, unsigned kernels, double *work,
			  mk_sweep_stats *out);
/* Whether kernel k's interval lies within +-precision of its speed-up,
 * from at least MK_SWEEP_MIN_REPS runs (so that it is one at 95%). */
bool mk_sweep_precise(const mk_sweep_stats *st, int k, double precision);
/* Whether the ratio of the medians agrees with every paired speed-up. */
bool mk_sweep_all_agree(const mk_sweep_stats *st, unsigned kernels);
/* Kernel k's times, speed-up, flags and throughput (r->point.count, or n^2
 * for dense) in r, from the point's statistics. */
void mk_sweep_row_fill(const mk_attn_shape *s, const mk_sweep_stats *st, mk_attn_kernel k,
		       double max_err, mk_sweep_row *r);

/* ---- across MPI ranks (analysis/sweep_ranks.c) ------------------------------ */

/* Collective: every rank's rows (its share of the grid, *rows of *nrows,
 * malloc'd) go to rank 0, which gets them all in the order one process
 * makes them (pattern, target, norm, kernel), with norm and pattern
 * pointing into s, and *where (malloc'd) saying where each was measured;
 * other ranks end with no rows.  `device` describes this rank's device. */
int mk_sweep_gather(const mk_sweep_opts *s, const char *device, mk_sweep_row **rows,
		    size_t *nrows, mk_sweep_where **where);

/* The summary's data of a result whose views are made (sweep_summary.c):
 * r->best, r->payoff and the counts of points to read with care. */
int mk_sweep_summarise(mk_sweep_result *r);

#endif
