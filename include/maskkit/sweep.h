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
	unsigned kernels;      /* bit (1u << k) per mk_attn_kernel */
	const mk_attn_backend *backend;
	mk_attn_shape shape;   /* batch, heads, n, d */
	mk_compute dtype;      /* compute type; 0 is MK_COMPUTE_FP32 */
	int device;            /* of a GPU backend (0 = the first) */
	int64_t tile;
	int reps;              /* timed runs after one warm-up */
	uint64_t seed;         /* tensors and random patterns */
	uint64_t max_memory;   /* 0 = MK_DEFAULT_MAX_MEMORY */
	/* this share of the (pattern, target) grid: point p * ntargets + t when
	 * it is part modulo parts (parts 0 or 1: every point); the dense
	 * reference is timed in every share */
	int part, parts;
	/* called before each step (a mask and normalisation); may be NULL */
	void (*progress)(int64_t done, int64_t total, const char *what, void *arg);
	void *arg;
} mk_sweep_opts;

/* One result.  dense ignores the mask: it is timed once per normalisation and
 * its row repeated for every mask, with |M| = n^2 in gflops_actual. */
typedef struct mk_sweep_row {
	const char *pattern, *param;        /* param NULL: a fixed mask (target = its sparsity) */
	int64_t grid;                       /* p * ntargets + t: pattern p, target t */
	mk_sweep_point point;
	double target, tile_density;
	mk_attn_kernel kernel;
	const mk_norm *norm;
	double median_s, min_s;
	double speedup;                     /* dense median / median */
	double gflops_dense, gflops_actual; /* 4BHn^2d and 4BH|M|d over the median */
	double max_err;                     /* against the reference */
} mk_sweep_row;

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
