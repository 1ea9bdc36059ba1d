/*
 * maskkit sweeps: what a mask costs, measured and checked, across patterns,
 * target sparsities, kernels and normalisations.
 */
#ifndef MK_SWEEP_H
#define MK_SWEEP_H

#include "core.h"
#include "attn.h"
#include "result.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- sweeps (analysis/sweep.c) -------------------------------------------- */

/* What a mask costs, measured and checked: for each pattern and target
 * sparsity, the pattern's size parameter is solved for the achievable
 * sparsity nearest the target, and each kernel is timed on random O(1)
 * tensors and its output checked against a double-precision reference. */

/* The parameter a sweep varies for pattern ("w" for local, "block" for star
 * ...), or NULL when the pattern has none that a sweep can vary.  pattern
 * is a name ("bigbird") or a name with other parameters fixed
 * ("bigbird(r=3,block=1)"); one that fixes the varied parameter itself
 * ("local(w=3)") is a fixed mask (NULL).  Patterns their papers define by
 * blocks (bigbird) are swept in that form, block = the sweep's tile, unless
 * block= is given ("bigbird(block=1)": the token-level form). */
const char *mk_sweep_param(const char *pattern);
/* The patterns a sweep can vary, comma-separated. */
const char *mk_sweep_patterns(void);

typedef struct mk_sweep_point {
	int64_t value;   /* of the parameter */
	uint64_t count;  /* |M| */
	double sparsity; /* achieved: 1 - |M| / n^2 */
	char expr[512];  /* the mask, as an expression: "local(w=52)", or the fixed
			  * mask given ("local2+global1", "m.npy") */
} mk_sweep_point;

/* Absolute tolerance of a kernel's output computed in t with O(1) inputs
 * (fp32 1e-4, fp16 1e-2, bf16 5e-2); 0 for a value outside the enum. */
double mk_compute_tolerance(mk_compute t);

/* Defaults of the adaptive repetitions (mk_sweep_opts). */
#define MK_SWEEP_MIN_REPS 6      /* the fewest with a 95% interval of a median */
#define MK_SWEEP_MAX_REPS 200
#define MK_SWEEP_PRECISION 0.05  /* +-5% */
#define MK_SWEEP_MAX_TIME 1.0    /* seconds of timed runs per point */
/* A kernel slower than another (dense included) by this factor in each of
 * its first repetitions leaves the rotation early, with fewer than
 * MK_SWEEP_MIN_REPS runs: nobody would pick it. */
#define MK_SWEEP_OUT_OF_RACE 2.0

typedef struct mk_sweep_opts {
	/* each a pattern a sweep can vary (mk_sweep_param: solved for every
	 * target), or any mask expression or file without such a parameter
	 * ("local2+global1", "causal", "m.npy"): one point at its own sparsity,
	 * whatever the targets */
	const char *const *patterns;
	const char *const *labels; /* the rows' names (NULL, or NULL entries: the pattern) */
	size_t npatterns;
	const double *targets; /* sparsities in [0, 1] */
	size_t ntargets;
	const mk_norm *norms;
	size_t nnorms;
	unsigned kernels;      /* bit (1u << k) per mk_attn_kernel with rows (dense is
				* timed whatever: speedup's reference) */
	const mk_attn_backend *backend;
	mk_attn_shape shape;   /* batch, heads, n, d */
	mk_compute dtype;      /* compute type; 0 is MK_COMPUTE_FP32 */
	int device;            /* of a GPU backend (0 = the first) */
	int64_t tile;          /* of the block kernels, and the block of the patterns
				* their papers define by blocks (bigbird) */
	/* Repetitions, as Google Benchmark and hyperfine adapt theirs: warmup
	 * untimed runs of every kernel (at least 1: the first also checks the
	 * output), then at least min_reps (>= 1) timed ones, then more until
	 * every speed-up's 95% interval lies within +-precision of its median,
	 * max_reps are done or the timed runs of the point have taken max_time
	 * seconds (0: no limit).  max_reps <= min_reps: exactly min_reps. */
	int warmup, min_reps, max_reps;
	double precision, max_time;
	uint64_t seed;         /* tensors and random patterns */
	uint64_t max_memory;   /* 0 = MK_DEFAULT_MAX_MEMORY */
	/* this share of the (pattern, target) grid: point p * ntargets + t when
	 * it is part modulo parts (parts 0 or 1: every point) */
	int part, parts;
	/* called before each step (a mask and normalisation); may be NULL */
	void (*progress)(int64_t done, int64_t total, const char *what, void *arg);
	void *arg;
} mk_sweep_opts;

/* One result.  At each point (a mask and normalisation) every kernel runs
 * warmup times, then the timed runs are interleaved, repetition by
 * repetition (dense, masked, block, csr, dense, ...), so that a disturbance
 * of the machine falls on every kernel of a repetition alike and the ratio
 * of two kernels' times in one repetition cancels it.  dense ignores the
 * mask but is timed at every point, also when it is not among the kernels:
 * it is the reference of speedup.
 *
 * speedup is the median over repetitions r of dense[r] / kernel[r], and
 * [speedup_lo, speedup_hi] its distribution-free 95% confidence interval
 * (order statistics of the reps ratios, mk_sweep_median_ci).  The ratio of
 * the medians dense_s / median_s falls in that interval when the
 * repetitions were disturbed alike; when it does not (a slowdown hit dense
 * in more repetitions than the kernel), the point is measured again once,
 * and if it still does not, agree is false. */
typedef struct mk_sweep_row {
	const char *pattern, *param;        /* param NULL: a fixed mask (target = its sparsity) */
	int64_t grid;                       /* p * ntargets + t: pattern p, target t */
	mk_sweep_point point;
	double target, tile_density;
	mk_attn_kernel kernel;
	const mk_norm *norm;
	double median_s, min_s;
	double q1_s, q3_s;                  /* quartiles of the timed runs */
	double speedup, speedup_lo, speedup_hi; /* 1, 1, 1 for dense */
	double dense_s;                     /* dense's median at this point */
	double gflops_dense, gflops_actual; /* 4BHn^2d and 4BH|M|d over the median */
	double max_err;                     /* against the reference */
	int reps;                           /* timed repetitions of the point */
	bool agree;                         /* dense_s / median_s within the interval */
	bool remeasured;                    /* the first measurement disagreed */
	/* bit (1u << k): the kernels k timed at this point whose speed-up
	 * interval overlaps this one's (dense's is [1, 1]): they cannot be
	 * ranked against it.  rank_ok when there is none, the medians agree
	 * and reps >= MK_SWEEP_MIN_REPS (fewer have no 95% interval). */
	unsigned unranked;
	bool rank_ok;
} mk_sweep_row;

/* Whether a row's interval lies within +-precision of its speed-up, from
 * at least MK_SWEEP_MIN_REPS runs: the rule that stops a point's runs. */
bool mk_sweep_row_precise(const mk_sweep_row *r, double precision);

/* The row's verdict against dense, as the summary prints it: "faster" (the
 * whole 95% interval above 1), "slower" (below 1, or out of the race
 * against dense: slower by MK_SWEEP_OUT_OF_RACE in each of its few runs,
 * whose interval is their range), "same" (a precise interval about 1) or
 * "unsure" (too few runs, a wide interval, or medians that disagree). */
const char *mk_sweep_row_verdict(const mk_sweep_row *r, double precision);

/* The name of pattern p's rows: its label, else the pattern itself. */
const char *mk_sweep_label(const mk_sweep_opts *o, size_t p);

/* The 95% confidence interval of the median of sorted x[0..n): the order
 * statistics x[l - 1] and x[n - l] with the largest l whose binomial
 * coverage 1 - 2 P(Bin(n, 1/2) < l) is at least 0.95 (Hahn and Meeker,
 * Statistical Intervals, 5.2); for n < 6, which has none, the minimum and
 * maximum (coverage 1 - 2^(1 - n)).  *coverage (may be NULL) gets the
 * interval's exact coverage. */
void mk_sweep_median_ci(const double *x, size_t n, double *lo, double *hi, double *coverage);

/* The dense baseline of a sweep's rows for one normalisation (the rows'
 * norm pointer; NULL: all):
 * the median over the points of dense's median there.  Every point times
 * dense beside its kernels; this one figure for the whole run is what a
 * plot or summary shows as dense.  0 when there are no rows. */
double mk_sweep_baseline(const mk_sweep_row *rows, size_t n, const mk_norm *norm);

/* The memory a sweep needs at its densest target (tensors, mask, layout). */
int mk_sweep_check_memory(const mk_sweep_opts *o);
/* Runs the sweep: *rows (malloc'd, free() them; NULL on failure) gets
 * *nrows results in order (pattern, target, norm, kernel).  They come once
 * every point is measured: a point whose dense median is more than 20% off
 * the run's baseline (the machine was in another state while it ran) is
 * first measured again, and keeps the measurement whose dense time is
 * nearer the baseline (remeasured).  A kernel whose error exceeds the dtype's
 * tolerance stops it with MK_EINTERNAL and a message naming the pattern,
 * parameter, kernel and normalisation. */
int mk_sweep_run(const mk_sweep_opts *o, mk_sweep_row **rows, size_t *nrows);

/* ---- a sweep set up from text (analysis/sweep_setup.c) --------------------- */

#define MK_SWEEP_MAX_LIST 64 /* items of a list */

/* The lists a sweep takes as text, parsed (mk_sweep_lists_parse). */
typedef struct mk_sweep_lists {
	char *buf[3];
	const char *patterns[MK_SWEEP_MAX_LIST];
	const char *labels[MK_SWEEP_MAX_LIST]; /* LABEL= of each, or NULL */
	size_t npatterns;
	mk_norm norms[MK_SWEEP_MAX_LIST];
	size_t nnorms;
} mk_sweep_lists;

/* Parses comma-separated lists (commas inside parentheses belong to an
 * item) into o's patterns, labels, kernels and norms, which point into l
 * (it must outlive o's use).  patterns: names of patterns a sweep varies or
 * any other mask (mk_sweep_opts), each may be LABEL=MASK (a LABEL of
 * letters, digits, '_', '-', '.'), no two rows of one name; kernels:
 * mk_attn_kernel_parse's names; norms: mk_norm_parse's.  Errors name the
 * parameter: "patterns", "kernels" or "norm". */
int mk_sweep_lists_parse(const char *patterns, const char *kernels, const char *norms,
			 mk_sweep_lists *l, mk_sweep_opts *o);
void mk_sweep_lists_release(mk_sweep_lists *l);
/* Sets o->backend by name ("cpu", "cuda", or "auto"/NULL: cuda when built
 * and a device is usable, else cpu), checks o's dtype (parameter "dtype"),
 * head dimension ("head_dim") and kernels ("kernels") against it, and
 * configures it on o->device; with pick_device and several MPI ranks, each
 * rank takes its device by its rank on the node. */
int mk_sweep_setup(mk_sweep_opts *o, const char *backend, bool pick_device);

/* ---- a sweep's result, as its outputs show it (analysis/sweep_result.c) --- */

/* Where a row was measured, when several MPI ranks shared a sweep. */
typedef struct mk_sweep_where {
	char host[64];
	char device[128]; /* "cpu (16 threads)", or the GPU with its index */
} mk_sweep_where;

/* A row as the tables show it (mk_sweep_row_record): the row with the
 * sweep's settings and the names of what it ran. */
typedef struct mk_sweep_view {
	const mk_sweep_row *row;
	const char *pattern, *label, *mask, *kernel, *backend, *dtype;
	char param[64];               /* "w=52"; "" for a fixed mask */
	char norm[32];
	double target, achieved, tile_density;
	uint64_t nnz;
	int64_t n, batch, heads, d, tile;
	double median_s, min_s, speedup, gflops_dense, gflops_actual, max_err;
	double q1_s, q3_s, speedup_lo, speedup_hi;
	int reps;
	double dense_s, dense_baseline_s;
	bool agree, remeasured, rank_ok;
	const char *const *noisy_vs;  /* the kernels it cannot be ranked against */
	int64_t nnoisy;
	const char *noisy[MK_KERNEL_COUNT];
	const char *host, *device;    /* NULL unless several ranks shared the sweep */
} mk_sweep_view;

/* A point's best kernel, as the summary shows it (mk_sweep_best_record). */
typedef struct mk_sweep_best {
	const char *pattern;
	const char *norm;     /* NULL when the sweep has one normalisation */
	double target;        /* percent; NaN for a fixed mask (its own sparsity) */
	double achieved, tiles; /* percent: of entries, of tiles the block kernel runs */
	const char *kernel;   /* NULL: dense was the only kernel */
	double speedup, lo, hi; /* over dense, and its 95% interval (NaN: dense only) */
	int reps;
	char verdict[96];     /* mk_sweep_row_verdict, "~K" for each kernel it ties with,
			       * " !" when the medians disagree; or dense's time */
} mk_sweep_best;

/* Where a (pattern, normalisation) pays off (mk_sweep_payoff_record). */
typedef struct mk_sweep_payoff {
	const char *pattern;
	const char *norm;     /* NULL when the sweep has one normalisation */
	char text[256];       /* "pays off at 60.0%-90.0% (block up to 3.10x)", or why not */
} mk_sweep_payoff;

/* A finished sweep: its rows, what they were measured on, and the views
 * its outputs are made of. */
typedef struct mk_sweep_result {
	const mk_sweep_opts *opts; /* the sweep's (held by pointer: it must outlive r) */
	const char *backend, *dtype; /* their names */
	mk_machine machine;
	uint64_t seed;             /* the repetition rule, from opts */
	int warmup, min_reps, max_reps;
	double precision, max_time;
	int ranks;                 /* that shared the sweep; 0: one process */
	mk_sweep_row *rows;
	size_t nrows;
	mk_sweep_where *where;     /* per row when ranks > 0, else NULL */
	double *baseline;          /* per normalisation: mk_sweep_baseline */
	mk_sweep_view *views;      /* per row */
	int64_t nviews;
	mk_sweep_best *best;       /* per point (pattern, target, normalisation) */
	int64_t nbest;
	mk_sweep_payoff *payoff;   /* per pattern and normalisation */
	int64_t npayoff;
	/* points whose best kernel's interval is wider than the precision, and
	 * points where some kernel's medians disagreed (agree false) */
	size_t points, wide, disagree;
} mk_sweep_result;

/* Runs the sweep (mk_sweep_run) and makes its result.  Collective under
 * MPI: each rank measures its share of the grid on its own device, the
 * ranks agree on how their shares went (mk_par_agree), and rank 0 gets every
 * row, in the order of a single run, with where each was measured; other
 * ranks end with no rows.  On failure r holds nothing. */
int mk_sweep_result_run(const mk_sweep_opts *o, mk_sweep_result *r);
/* The same from rows a sweep made (taken over: freed with r). */
int mk_sweep_result_make(const mk_sweep_opts *o, mk_sweep_row *rows, size_t nrows,
			 mk_sweep_where *where, mk_sweep_result *r);
void mk_sweep_result_release(mk_sweep_result *r);

/* The table of every kernel's row: MK_EMIT_CSV, after '# key: value' lines
 * naming the machine and the repetition rule, or MK_EMIT_JSON, an object
 * with the machine, the rule and the rows ("results"). */
int mk_sweep_write(FILE *f, mk_emit_fmt fmt, const mk_sweep_result *r);
/* The same to path, atomically ("-": standard output). */
int mk_sweep_write_path(const char *path, mk_emit_fmt fmt, const mk_sweep_result *r);
/* The summary for a person: the sweep's shape and machine, dense's time, a
 * line per point with its best kernel (mk_sweep_best) and where each
 * pattern pays off (mk_sweep_payoff). */
int mk_sweep_summary(FILE *f, const mk_sweep_result *r);

/* The rows of the table (mk_sweep_view), with "host" and "device" last
 * (absent, and left out of JSON, unless ranks shared the sweep); the
 * document (mk_sweep_result: "machine", "results", the rule, "ranks" under
 * MPI); a point's best kernel; where a pattern pays off. */
extern const struct mk_record mk_sweep_row_record;
extern const struct mk_record mk_sweep_result_record;
extern const struct mk_record mk_sweep_best_record;
extern const struct mk_record mk_sweep_payoff_record;

#ifdef __cplusplus
}
#endif
#endif /* MK_SWEEP_H */
