/*
 * maskkit sweeps: what a mask costs, measured and checked, across patterns,
 * target sparsities, kernels and normalisations.
 */
#ifndef MK_SWEEP_H
#define MK_SWEEP_H

#include "core.h"
#include "attn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- sweeps (analysis/sweep.c) -------------------------------------------- */

/* What a mask costs, measured and checked: for each pattern and target
 * sparsity, the pattern's size parameter is solved for the achievable
 * sparsity nearest the target, and each kernel is timed on random O(1)
 * tensors and its output checked against a double-precision reference. */

/* The parameter a sweep varies for pattern ("w" for local, "block" for star
 * ...), or NULL when the pattern has none that a sweep can vary. */
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
	int64_t tile;
	int reps;              /* timed runs of each kernel after its warm-up */
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
 * once to warm up, then the timed runs are interleaved, repetition by
 * repetition (dense, masked, block, csr, dense, ...), so that a disturbance
 * of the machine falls on every kernel alike.  dense ignores the mask but is
 * timed at every point (its row has |M| = n^2 in gflops_actual), also when
 * it is not among the kernels: it is the reference of speedup. */
typedef struct mk_sweep_row {
	const char *pattern, *param;        /* param NULL: a fixed mask (target = its sparsity) */
	int64_t grid;                       /* p * ntargets + t: pattern p, target t */
	mk_sweep_point point;
	double target, tile_density;
	mk_attn_kernel kernel;
	const mk_norm *norm;
	double median_s, min_s;
	double q1_s, q3_s;                  /* quartiles of the timed runs */
	/* paired: the median and quartiles over repetitions r of
	 * dense[r] / kernel[r] (1 for dense) */
	double speedup, speedup_q1, speedup_q3;
	double dense_s;                     /* dense's median at this point */
	double gflops_dense, gflops_actual; /* 4BHn^2d and 4BH|M|d over the median */
	double max_err;                     /* against the reference */
	/* bit (1u << k): the kernels k timed at this point that this one cannot
	 * be ranked against (the spread of their paired ratio straddles 1 and
	 * is wider than MK_SWEEP_TIE); rank_ok when there is none */
	unsigned unranked;
	bool rank_ok;
} mk_sweep_row;

/* Two kernels whose paired ratio's interquartile range contains 1 and spans
 * more than this cannot be ranked; a narrower range is a tie. */
#define MK_SWEEP_TIE 0.05

/* The name of pattern p's rows: its label, else the pattern itself. */
const char *mk_sweep_label(const mk_sweep_opts *o, size_t p);

/* The memory a sweep needs at its densest target (tensors, mask, layout). */
int mk_sweep_check_memory(const mk_sweep_opts *o);
/* Runs the sweep, calling row() for each result (its non-zero return stops
 * the sweep and is returned).  A kernel whose error exceeds the dtype's
 * tolerance stops it with MK_EINTERNAL and a message naming the pattern,
 * parameter, kernel and normalisation. */
int mk_sweep_run(const mk_sweep_opts *o, int (*row)(const mk_sweep_row *r, void *arg),
		 void *arg);

#ifdef __cplusplus
}
#endif
#endif /* MK_SWEEP_H */
