/*
 * maskkit attention: the attention engine (kernels, normalisations, mask
 * layouts, backends, timing, column sums) and the machine it runs on.
 */
#ifndef MK_ATTN_H
#define MK_ATTN_H

#include "core.h"
#include "mask.h"
#include "expr.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- attention engine (src/attn/) ----------------------------------------- */

/* O = normalise(S restricted to the mask) V with S = Q K^T / sqrt(d), for
 * tensors [batch, heads, n, d] (row-major, contiguous, float32).  Every
 * normalisation is a Sinkhorn-style scaling in the log domain:
 * pi_ij = exp(s_ij - f_i - g_j) on the mask's entries, where
 *   softmax      g = 0, f_i = LSE_j s_ij (rows sum to 1);
 *   dnas         g_j = LSE_i s_ij (columns first), then f_i = LSE_j (s_ij - g_j)
 *                (Ding et al., "attention that does not explain away");
 *   sinkhorn:K   K rounds of g_j = LSE_i (s_ij - f_i), f_i = LSE_j (s_ij - g_j)
 *                from f = 0 (dnas is sinkhorn:1);
 *   hnas:u       u * dnas + (1 - u) * softmax (outputs blended).
 * A row with no entry gives a zero output row (counted in the stats). */
typedef enum mk_attn_kernel {
	MK_KERNEL_DENSE,  /* fused, tiled, online softmax; no mask (every entry) */
	MK_KERNEL_MASKED, /* the same tiles, the element mask applied everywhere */
	MK_KERNEL_BLOCK,  /* only the non-empty tiles; the mask only in partial ones */
	MK_KERNEL_CSR,    /* only the mask's entries (SDDMM, then sparse x dense) */
	MK_KERNEL_COUNT
} mk_attn_kernel;

typedef enum mk_norm_kind {
	MK_NORM_SOFTMAX, MK_NORM_DNAS, MK_NORM_HNAS, MK_NORM_SINKHORN
} mk_norm_kind;

typedef struct mk_norm {
	mk_norm_kind kind;
	double u;  /* hnas: weight of dnas, in [0, 1] */
	int iters; /* sinkhorn: rounds, 1..1000 */
} mk_norm;

/* The type a backend computes in.  Inputs and outputs stay float32 on the
 * host; fp16 and bf16 convert q, k, v on the device and accumulate in
 * float32.  Sets of them are bit sets, bit (1u << t) per type t. */
typedef enum mk_compute {
	MK_COMPUTE_FP32, MK_COMPUTE_FP16, MK_COMPUTE_BF16,
	MK_COMPUTE_COUNT
} mk_compute;

/* "fp32", "fp16", "bf16"; "?" for a value outside the enum. */
const char *mk_compute_name(mk_compute t);
/* The names of the types in set, space-separated in the enum's order
 * ("fp32 fp16 bf16"), into buf; "" for an empty set. */
void mk_compute_format(unsigned set, char *buf, size_t cap);

/* "softmax", "dnas", "hnas:U", "sinkhorn:K"; MK_EINVAL with a message. */
int mk_norm_parse(const char *s, mk_norm *out);
/* MK_EINVAL with a message unless n is a known kind with its parameter in
 * range (what mk_norm_parse accepts). */
int mk_norm_check(const mk_norm *n);
/* Writes the canonical spelling ("hnas:0.5") into buf. */
void mk_norm_format(const mk_norm *n, char *buf, size_t cap);
const char *mk_attn_kernel_name(mk_attn_kernel k);
int mk_attn_kernel_parse(const char *s, mk_attn_kernel *out);

/* Q and O are [batch, heads, n, d]; K and V [batch, heads, kv_len, d], where
 * kv_len = 0 means n (square).  The engine takes the q_len x kv_len mask as
 * it is: where its queries sit among the keys (bottom-right, query i at key
 * i + kv_len - n, or top-left) is the mask's, bound with mk_bind_opts.align
 * (expr.h). */
typedef struct mk_attn_shape {
	int64_t batch, heads, n, d;
	int64_t kv_len;
} mk_attn_shape;

/* The shape's keys: kv_len, or n when it is 0. */
static inline int64_t mk_attn_kv(const mk_attn_shape *s)
{
	return s->kv_len ? s->kv_len : s->n;
}

/* A mask prepared for the kernels at one tile size: its bit rows, for each
 * row of tiles its non-empty tiles (full ones flagged) and the same by
 * columns, and its entries in CSR form. */
typedef struct mk_attn_layout mk_attn_layout;
int mk_attn_layout_new(const mk_mask *m, int64_t tile, uint64_t max_memory,
		       mk_attn_layout **out);
void mk_attn_layout_free(mk_attn_layout *l); /* NULL-safe */
int64_t mk_attn_layout_n(const mk_attn_layout *l);      /* rows: queries */
int64_t mk_attn_layout_kv_len(const mk_attn_layout *l); /* columns: keys */
int64_t mk_attn_layout_tile(const mk_attn_layout *l);
uint64_t mk_attn_layout_nnz(const mk_attn_layout *l);
double mk_attn_layout_density(const mk_attn_layout *l); /* non-empty tiles / all */
int64_t mk_attn_layout_empty_rows(const mk_attn_layout *l);

typedef struct mk_attn_stats {
	int64_t empty_rows; /* rows with no entry (zero output), per (batch, head) */
} mk_attn_stats;

/* A backend runs the kernels: "cpu", or "cuda" when built with it.  Its
 * table of functions is private to the library. */
typedef struct mk_attn_backend mk_attn_backend;

/* "cpu", or "cuda" when built with it; else NULL with a message. */
const mk_attn_backend *mk_attn_backend_get(const char *name);
const char *mk_attn_backend_name(const mk_attn_backend *b);
/* Bit (1u << k) for each mk_attn_kernel k the backend runs. */
unsigned mk_attn_backend_kernels(const mk_attn_backend *b);
/* The largest head dimension d it takes. */
int64_t mk_attn_backend_max_head_dim(const mk_attn_backend *b);
/* Bit (1u << t) for each mk_compute t it computes in. */
unsigned mk_attn_backend_dtypes(const mk_attn_backend *b);
/* The mask in the layout the backend's kernels need (mk_attn_layout_new, and
 * for a GPU a copy on the device, freed with the layout). */
int mk_attn_prepare(const mk_attn_backend *b, const mk_mask *m, int64_t tile,
		    uint64_t max_memory, mk_attn_layout **out);
/* A timestamp in seconds, taken once the backend's queued work has finished
 * (a GPU synchronises first). */
double mk_attn_clock(const mk_attn_backend *b);
/* MK_EINVAL with a message unless the backend computes in dtype. */
int mk_attn_check_dtype(const mk_attn_backend *b, mk_compute dtype);
/* Selects the device and the compute type (one of its dtypes) of later runs.
 * MK_EINVAL (no such device or dtype) or MK_EGPU with a message. */
int mk_attn_configure(const mk_attn_backend *b, int device, mk_compute dtype);
/* The devices the backend can run on (1 for the cpu; MPI ranks on a node
 * take one each). */
int mk_attn_devices(const mk_attn_backend *b);
/* max_i |q_i| max_j |k_j| / sqrt(d) over one n x d slice: no score
 * q_i.k_j / sqrt(d), nor any partial sum of one, exceeds it in magnitude
 * (NaN propagates).  float32 rounding of the scores leaves each log column
 * sum of mk_attn_colsums uncertain by a few float32 ulps of it. */
double mk_attn_score_bound(int64_t n, int64_t d, const float *q, const float *k);
/* The largest score bound the float32 engine accepts.  Above it scores, or
 * the scalings f and g (a few scores apart), could leave float32, where
 * inf - inf would turn an output row into NaN or zeros; no normalisation
 * can be computed there in float32, so none is tried. */
#define MK_ATTN_SCORE_MAX 1e37
/* The largest bound on the unscaled dot products q_i.k_j (the score bound
 * times sqrt(d)) the engine accepts: sgemm's float32 partial sums stay a
 * factor 3 below FLT_MAX. */
#define MK_ATTN_DOT_MAX 1e38
/* MK_ERANGE ("attention scores could reach X, beyond float32") when the
 * score bound of any (batch, head) slice of q, k is above MK_ATTN_SCORE_MAX
 * or NaN, or that bound times sqrt(d) is above MK_ATTN_DOT_MAX, whatever the
 * mask, kernel, backend and normalisation: the same inputs are refused
 * everywhere (mk_attn_run, mk_attn_time, mk_attn_colsums, the sweeps'
 * reference). */
int mk_attn_check_scores(const mk_attn_shape *s, const float *q, const float *k);

/* Runs reps + warmup times on inputs uploaded once, timing each of the last
 * reps runs on the device (secs[reps], seconds per run; a GPU may time
 * several back-to-back runs for each entry, to amortise launch latency); o
 * and st as in mk_attn_run, after the same checks.  MK_EINVAL for a backend
 * that cannot time its runs (then time mk_attn_run with mk_attn_clock). */
int mk_attn_time(const mk_attn_backend *b, mk_attn_kernel kernel, const mk_norm *norm,
		 const mk_attn_shape *s, const float *q, const float *k, const float *v,
		 const mk_attn_layout *mask, int warmup, int reps, double *secs, float *o,
		 mk_attn_stats *st);
/* Checks the shape, kernel and mask against the backend and the inputs
 * with mk_attn_check_scores, then runs it. */
int mk_attn_run(const mk_attn_backend *b, mk_attn_kernel kernel, const mk_norm *norm,
		const mk_attn_shape *s, const float *q, const float *k, const float *v,
		const mk_attn_layout *mask, float *o, mk_attn_stats *st);
/* mk_attn_run that says, as it goes, which slices of o are final:
 * progress(done, batch x heads, parg) with done growing, slices [0, done)
 * written for good (a caller can start writing them while the rest is
 * computed: the backend has checked them, so the run will not fail for
 * them).  Called from any of the run's threads, one call at a time; the
 * last call has done = batch x heads, unless the run fails. */
int mk_attn_run_progress(const mk_attn_backend *b, mk_attn_kernel kernel, const mk_norm *norm,
			 const mk_attn_shape *s, const float *q, const float *k, const float *v,
			 const mk_attn_layout *mask, float *o, mk_attn_stats *st,
			 mk_progress_fn progress, void *parg);

/* Column sums of the normalised attention on one (batch, head) slice, for
 * "explaining away" (src/attn/colsum.c): logcol[j] = ln sum_i pi_ij over the
 * mask's entries (NULL: every entry), -inf for a column with no entry.  q
 * and k are n x d, scores q.k / sqrt(d).  pi is never formed: the CPU
 * kernels' passes stream over the queries (O(n) memory).  For sinkhorn:K
 * (and dnas, K = 1) trace, when not NULL, gets one entry per round.
 * MK_ERANGE for inputs mk_attn_check_scores refuses. */
typedef struct mk_sinkhorn_step {
	/* max and mean of |sum_j pi_ij - 1| over rows with an entry, after the
	 * round's column scaling (the columns then sum to 1) */
	double row_max, row_mean;
	/* the same for column sums, after the round's row scaling */
	double col_max, col_mean;
} mk_sinkhorn_step;
int mk_attn_colsums(const mk_norm *norm, int64_t n, int64_t d, const float *q, const float *k,
		    const mk_attn_layout *mask, double *logcol, mk_sinkhorn_step *trace);

/* ---- attention on tensors in files (attn_files.c): maskkit attn ---------- */

/* pi, the attention matrix (mk_attn_files_opts.weights), has n kv_len
 * entries per head: this many queries and keys at most. */
#define MK_ATTN_WEIGHTS_MAX_N 4096

typedef struct mk_attn_files_opts {
	const char *mask;      /* an operand (mk_expr_operand) bound at the tensors' n x
				* kv_len; NULL: every entry */
	mk_norm norm;
	mk_attn_kernel kernel; /* dense refuses a mask that is not full */
	const char *backend;   /* "cpu", "cuda", or "auto" (NULL): cuda when built and a
				* device is usable, else cpu */
	int64_t tile;          /* of the mask's layout */
	mk_bind_opts bind;     /* seed and max_memory (n comes from the tensors) */
	const char *out;       /* O's file: .npy, .h5 (dataset "O") or .h5:/dataset */
	const char *weights;   /* pi's file (dataset "pi"), or NULL */
	bool map_inputs;       /* read Q, K and V with mk_tensor_read_mapped: the
				* caller handles SIGBUS (the maskkit program does) */
} mk_attn_files_opts;

/* What ran (mk_attn_files_record). */
typedef struct mk_attn_files {
	const int64_t *shape;  /* O's dimensions, rank of them (Q's): dims */
	int64_t rank, dims[4];
	int64_t batch, heads, n, kv_len, d;
	const char *dtype;     /* O's and pi's: float64 when an input is, else float32 */
	const char *kernel, *backend, *mask; /* mask: its parameters, or "full" */
	char norm[32];
	int64_t empty_rows;    /* mask rows with no entry: zero rows of O */
	double seconds;        /* of the kernel */
	const char *out, *weights;
	int64_t pi_shape[4];   /* pi's dimensions (rank of them) with weights */
	mk_expr *expr;         /* the mask bound (NULL: full) */
} mk_attn_files;

/* Reads Q, K and V (files[0..2]: .npy, FILE.h5 with one dataset, or
 * FILE.h5:/dataset; [n, d], [heads, n, d] or [batch, heads, n, d], K and V
 * alike and Q as they are but for its rows), runs the kernel over the mask
 * and writes O to o->out in Q's layout, with o->weights the attention
 * matrix pi too; each file atomically.  Errors name the tensors; MK_ERANGE
 * when pi is asked beyond MK_ATTN_WEIGHTS_MAX_N (parameter "weights"). */
int mk_attn_files_run(const char *const files[3], const mk_attn_files_opts *o,
		      mk_attn_files *r);
void mk_attn_files_release(mk_attn_files *r);
extern const struct mk_record mk_attn_files_record;

/* ---- the machine ----------------------------------------------------------- */

/* The machine attention ran on, for the outputs of sweeps and reports. */
typedef struct mk_machine {
	char cpu[128];    /* model name from /proc/cpuinfo, "" if unknown */
	int threads;      /* OpenMP threads (else online CPUs) */
	char version[32];
	char commit[48];  /* "" when not known */
	/* the accelerator a GPU backend ran on ("" and 0 for the cpu backend) */
	char gpu[128];        /* "NVIDIA H100 80GB HBM3 (device 0, sm_90)" */
	char gpu_driver[48];  /* driver and runtime: "12.4 / runtime 13.0" */
	int gpu_sms;          /* streaming multiprocessors */
	int gpu_clock_mhz, gpu_mem_clock_mhz; /* maximum SM and memory clocks */
} mk_machine;
void mk_machine_describe(mk_machine *out);
/* mk_machine_describe, then the accelerator fields from the backend. */
void mk_machine_describe_backend(const mk_attn_backend *b, mk_machine *out);
/* The machine as outputs show it: cpu, maskkit (the version), commit, gpu,
 * gpu_driver, threads, gpu_sms, gpu_clock_mhz, gpu_mem_clock_mhz (result.h). */
extern const struct mk_record mk_machine_record;

#ifdef __cplusplus
}
#endif
#endif /* MK_ATTN_H */
