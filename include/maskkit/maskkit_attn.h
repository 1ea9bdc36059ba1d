/*
 * maskkit: the attention engine, tensors and sweeps.
 * Part of the public API: included by maskkit.h, not on its own.
 */
#ifndef MASKKIT_ATTN_H
#define MASKKIT_ATTN_H

#ifndef MASKKIT_H
#error "include maskkit.h, not maskkit_attn.h"
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

/* "softmax", "dnas", "hnas:U", "sinkhorn:K"; MK_EINVAL with a message. */
int mk_norm_parse(const char *s, mk_norm *out);
/* MK_EINVAL with a message unless n is a known kind with its parameter in
 * range (what mk_norm_parse accepts). */
int mk_norm_check(const mk_norm *n);
/* Writes the canonical spelling ("hnas:0.5") into buf. */
void mk_norm_format(const mk_norm *n, char *buf, size_t cap);
const char *mk_attn_kernel_name(mk_attn_kernel k);
int mk_attn_kernel_parse(const char *s, mk_attn_kernel *out);

typedef struct mk_attn_shape {
	int64_t batch, heads, n, d;
} mk_attn_shape;

/* A mask prepared for the kernels at one tile size: its bit rows, for each
 * row of tiles its non-empty tiles (full ones flagged) and the same by
 * columns, and its entries in CSR form. */
typedef struct mk_attn_layout mk_attn_layout;
int mk_attn_layout_new(const mk_mask *m, int64_t tile, uint64_t max_memory,
		       mk_attn_layout **out);
void mk_attn_layout_free(mk_attn_layout *l); /* NULL-safe */
int64_t mk_attn_layout_n(const mk_attn_layout *l);
int64_t mk_attn_layout_tile(const mk_attn_layout *l);
uint64_t mk_attn_layout_nnz(const mk_attn_layout *l);
double mk_attn_layout_density(const mk_attn_layout *l); /* non-empty tiles / all */
int64_t mk_attn_layout_empty_rows(const mk_attn_layout *l);

typedef struct mk_attn_stats {
	int64_t empty_rows; /* rows with no entry (zero output), per (batch, head) */
} mk_attn_stats;

struct mk_machine; /* below, with the sweeps */

/* A backend: a small table of function pointers, filled with designated
 * initialisers; optional slots may be NULL. */
typedef struct mk_attn_backend {
	const char *name;
	unsigned kernels;     /* bit (1u << k) for each supported mk_attn_kernel */
	int64_t max_head_dim;
	const char *dtypes;   /* compute types, space-separated: "fp32" */
	/* The mask in the layout the kernels need (NULL: mk_attn_layout_new). */
	int (*prepare)(const struct mk_attn_backend *b, const mk_mask *m, int64_t tile,
		       uint64_t max_memory, mk_attn_layout **out);
	/* A timestamp in seconds taken once the backend's queued work has
	 * finished (a GPU synchronises first); NULL: the monotonic clock. */
	double (*clock)(const struct mk_attn_backend *b);
	/* mask may be NULL for MK_KERNEL_DENSE only; its n must equal s->n. */
	int (*run)(const struct mk_attn_backend *b, mk_attn_kernel kernel, const mk_norm *norm,
		   const mk_attn_shape *s, const float *q, const float *k, const float *v,
		   const mk_attn_layout *mask, float *o, mk_attn_stats *st);
	/* Selects the device and compute type (one of dtypes) for later runs;
	 * NULL: one device, dtypes only. */
	int (*configure)(const struct mk_attn_backend *b, int device, const char *dtype);
	/* Runs reps + warmup times on inputs uploaded once, timing each of the
	 * last reps runs on the device (secs[reps], seconds per run; a GPU may
	 * time several back-to-back runs for each entry, to amortise launch
	 * latency); o and st as in run.  NULL: the caller times run with clock. */
	int (*time)(const struct mk_attn_backend *b, mk_attn_kernel kernel, const mk_norm *norm,
		    const mk_attn_shape *s, const float *q, const float *k, const float *v,
		    const mk_attn_layout *mask, int warmup, int reps, double *secs, float *o,
		    mk_attn_stats *st);
	/* Devices this backend can run on (MPI ranks on a node take one each);
	 * NULL: 1. */
	int (*devices)(const struct mk_attn_backend *b);
	/* Fills the accelerator fields of a machine description; may be NULL. */
	void (*describe)(const struct mk_attn_backend *b, struct mk_machine *m);
	/* Frees what the backend holds between runs (device buffers, streams);
	 * a later run sets them up again.  NULL: nothing to free. */
	void (*release)(const struct mk_attn_backend *b);
	void *ctx;
} mk_attn_backend;

/* "cpu", or "cuda" when built with it; else NULL with a message. */
const mk_attn_backend *mk_attn_backend_get(const char *name);
/* b->prepare, or mk_attn_layout_new. */
int mk_attn_prepare(const mk_attn_backend *b, const mk_mask *m, int64_t tile,
		    uint64_t max_memory, mk_attn_layout **out);
/* b->clock, or the monotonic clock. */
double mk_attn_clock(const mk_attn_backend *b);
/* MK_EINVAL with a message unless the backend computes in dtype ("fp32"). */
int mk_attn_check_dtype(const mk_attn_backend *b, const char *dtype);
/* b->configure; without it device must be 0 and dtype one of b->dtypes.
 * MK_EINVAL (no such device or dtype) or MK_EGPU with a message. */
int mk_attn_configure(const mk_attn_backend *b, int device, const char *dtype);
/* b->devices, or 1. */
int mk_attn_devices(const mk_attn_backend *b);
/* b->release, when the backend has one (see there). */
void mk_attn_release(const mk_attn_backend *b);
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
 * or NaN, or that bound times sqrt(d) is above MK_ATTN_DOT_MAX, whatever the mask, kernel, backend and normalisation: the same
 * inputs are refused everywhere (mk_attn_run, mk_attn_time, mk_attn_colsums,
 * mk_attn_reference). */
int mk_attn_check_scores(const mk_attn_shape *s, const float *q, const float *k);

/* The same checks as mk_attn_run, then b->time; MK_EINVAL when b has none. */
int mk_attn_time(const mk_attn_backend *b, mk_attn_kernel kernel, const mk_norm *norm,
		 const mk_attn_shape *s, const float *q, const float *k, const float *v,
		 const mk_attn_layout *mask, int warmup, int reps, double *secs, float *o,
		 mk_attn_stats *st);
/* Checks the shape, kernel and mask against the backend and the inputs
 * with mk_attn_check_scores, then runs it. */
int mk_attn_run(const mk_attn_backend *b, mk_attn_kernel kernel, const mk_norm *norm,
		const mk_attn_shape *s, const float *q, const float *k, const float *v,
		const mk_attn_layout *mask, float *o, mk_attn_stats *st);

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

/* ---- explaining away (analysis/explain.c) -------------------------------- */

/* Per normalisation and head, how the keys' column sums are spread: the
 * statistics `maskkit explain` prints (Ding et al.'s Fig. 1). */
#define MK_EXPLAIN_EPS 1e-8
#define MK_EXPLAIN_BINS_MAX 10000
#define MK_EXPLAIN_MAX_DIM 65536

typedef struct mk_explain_stat {
	int64_t keys;   /* columns with an entry */
	int64_t empty;  /* columns with none: no query may attend to the key */
	int64_t away;   /* keys explained away: column sum below eps */
	double min, q1, median, q3, max; /* log10 column sums over the keys (numpy's
					  * linear quantiles); NaN without keys */
} mk_explain_stat;

typedef struct mk_explain_opts {
	const mk_norm *norms;
	size_t nnorms;
	double eps;      /* in (0, 1] */
	int bins;        /* histogram bins, 1..MK_EXPLAIN_BINS_MAX */
	int trace;       /* sinkhorn rounds traced per head, 0..1000 (0: none) */
	uint64_t max_memory;
	/* called before each (normalisation, head); may be NULL */
	void (*progress)(int64_t done, int64_t total, void *arg);
	void *arg;
} mk_explain_opts;

typedef struct mk_explain {
	int64_t heads, n;
	size_t nnorms;
	double *log10;         /* nnorms x heads x n column sums, -inf: empty column */
	mk_explain_stat *stat; /* nnorms x (heads + 1): each head, then all together */
	/* the histogram of every head's finite log10 column sums per
	 * normalisation: bin b covers [lo + b width, lo + (b + 1) width) */
	int bins;
	double lo, width;
	int64_t *hist;         /* nnorms x bins */
	int trace;
	mk_sinkhorn_step *steps; /* heads x trace */
	double *score_bound;     /* per head: mk_attn_score_bound */
} mk_explain;

/* Column sums for every normalisation and head of q, k ([heads, n, d],
 * row-major), restricted to mask (NULL: every entry).  MK_EINVAL for bad
 * options or n < 2, MK_ERANGE beyond max_memory or when the scores
 * overflow, MK_ENOMEM. */
int mk_explain_run(const mk_explain_opts *o, int64_t heads, int64_t n, int64_t d,
		   const float *q, const float *k, const mk_attn_layout *mask, mk_explain *out);
void mk_explain_free(mk_explain *e); /* frees the arrays, zeroes *e; NULL-safe */

/* ---- tensors (tensor.c) --------------------------------------------------- */

/* Dense float tensors of rank 2 to 4 in .npy or HDF5 files, as `maskkit
 * attn` reads and writes them.  In memory the data is float32, row-major and
 * contiguous; `dtype` is what the file holds (float32 or float64). */
#define MK_TENSOR_MAX_RANK 4

typedef enum mk_dtype { MK_DTYPE_F32 = 1, MK_DTYPE_F64 } mk_dtype;

typedef struct mk_tensor {
	int rank;                        /* 2..MK_TENSOR_MAX_RANK */
	int64_t dims[MK_TENSOR_MAX_RANK];
	mk_dtype dtype;                  /* as stored in the file */
	float *data;
} mk_tensor;

/* Reads "FILE.npy", "FILE.h5" (its only dataset of rank 2 to 4) or
 * "FILE.h5:/path" (.hdf5 too).  Errors: MK_EIO (cannot open), MK_EFORMAT
 * (malformed file, another dtype than float32/float64, rank outside 2..4,
 * an empty dimension, NaN or Inf with the first bad element's index, a
 * float64 beyond float32's range), MK_ERANGE (sizes overflow or need more
 * than max_memory, 0 = MK_DEFAULT_MAX_MEMORY). */
int mk_tensor_read(const char *spec, uint64_t max_memory, mk_tensor *out);
/* Writes t as dtype to "FILE.npy", or to one dataset of an HDF5 file:
 * "FILE.h5" (dataset `dataset`) or "FILE.h5:/path" (the path wins; groups
 * created).  An existing FILE.h5 keeps every other dataset, group and
 * attribute: the dataset is added, or replaces the dataset of that name.
 * Atomic: a failure leaves an existing file untouched.  MK_EINVAL for
 * another extension, for an existing FILE.h5 that is not HDF5 and for a
 * path that names a group; MK_ESYS (a full disk...) or MK_EIO with the OS's
 * reason when writing fails. */
int mk_tensor_write(const mk_tensor *t, const char *spec, const char *dataset, mk_dtype dtype);
/* The length of the file part of a tensor spec: "a/b.h5" of "a/b.h5:/g/x". */
size_t mk_tensor_file_len(const char *spec);
/* MK_EINVAL, naming both, when writing the tensor spec `out` (dataset
 * `dataset` when it names none) would overwrite one of the count input
 * specs: the same file (by device and inode, so through any links) for
 * .npy, or the same dataset of the same file for HDF5 (adding a dataset to
 * a file that holds inputs is fine). */
int mk_tensor_check_output(const char *out, const char *dataset, const char *const *inputs,
			   size_t count);
/* A zeroed float32 tensor, its size checked for overflow and against
 * max_memory (0 = MK_DEFAULT_MAX_MEMORY); `what` names it in errors. */
int mk_tensor_new(int rank, const int64_t *dims, mk_dtype dtype, uint64_t max_memory,
		  const char *what, mk_tensor *out);
void mk_tensor_release(mk_tensor *t); /* frees data, zeroes *t; NULL-safe */
/* Elements, the product of the dims (checked when the tensor was made). */
uint64_t mk_tensor_count(const mk_tensor *t);
/* "(2, 8, 128, 64)" into buf. */
void mk_tensor_shape_text(const mk_tensor *t, char *buf, size_t cap);
/* The format a tensor path names: MK_FMT_NPY, MK_FMT_H5 (also with a
 * ":/dataset" suffix) or MK_FMT_NONE. */
mk_format mk_tensor_format(const char *spec);
const char *mk_dtype_name(mk_dtype d); /* "float32", "float64" */

/* Queries and keys for `maskkit explain` (src/io/explain_input.c): float32
 * [heads, S, d] each. */
typedef struct mk_qk {
	mk_tensor q, k;
	int64_t heads, n, d;
} mk_qk;
/* Takes q and k of one shape ([S, d], [heads, S, d] or [batch, heads, S,
 * d], leading axes flattened into heads); they are released either way.
 * MK_EINVAL naming both shapes when they differ. */
int mk_qk_adopt(mk_tensor *q, mk_tensor *k, mk_qk *out);
/* "FILE.h5" or "FILE.h5:/group" holding q and k, or a layer's input x
 * [S, D] with projections wq, wk ([heads d, D], PyTorch's Linear; [D, heads
 * d] when tf) and optional biases bq, bk [heads d], projected for `heads`
 * heads (needed then; else 0, or the count q and k hold). */
int mk_qk_read(const char *spec, int64_t heads, bool tf, uint64_t max_memory, mk_qk *out);
/* Entries drawn from N(0, scale^2), a stream per (tensor, head). */
int mk_qk_random(int64_t heads, int64_t n, int64_t d, double scale, uint64_t seed,
		 uint64_t max_memory, mk_qk *out);
void mk_qk_free(mk_qk *x); /* NULL-safe */

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
	char expr[64];   /* the mask, as an expression: "local(w=52)" */
} mk_sweep_point;

/* Solves one pattern's parameter at size n; values already measured are
 * remembered, so solving many targets costs little more than one. */
typedef struct mk_sweep_solver mk_sweep_solver;
int mk_sweep_solver_new(const char *pattern, int64_t n, uint64_t seed, uint64_t max_memory,
			mk_sweep_solver **out);
void mk_sweep_solver_free(mk_sweep_solver *s); /* NULL-safe */
/* The value whose sparsity is nearest target (in [0, 1]); ties go to the
 * smaller value. */
int mk_sweep_solve(mk_sweep_solver *s, double target, mk_sweep_point *out);

/* The reference (src/attn/attn_ref.c): masked attention in double precision,
 * with the normalisations defined in the attention engine's section, on the
 * listed rows of every (batch, head).  mask NULL means every entry (what the
 * dense kernel computes).  ref holds batch * heads * nrows * d doubles:
 * row r of slice bh at ref + (bh * nrows + r) * d.  Column scalings need
 * every row, so g is computed over all rows whichever rows are asked for. */
#define MK_REF_MAX_ROWS 512
/* The rows checked: all of them for n <= MK_REF_MAX_ROWS, else 64 evenly
 * spread (first and last included); rows holds MK_REF_MAX_ROWS entries. */
int64_t mk_attn_ref_rows(int64_t n, int64_t *rows);
/* MK_ERANGE for inputs mk_attn_check_scores refuses, as the engine does. */
int mk_attn_reference(const mk_norm *norm, const mk_attn_shape *s, const float *q,
		      const float *k, const float *v, const mk_mask *mask, const int64_t *rows,
		      int64_t nrows, double *ref);
/* The largest |o - ref| over the reference's rows (NaN counts as infinite). */
double mk_attn_ref_error(const mk_attn_shape *s, const int64_t *rows, int64_t nrows,
			 const double *ref, const float *o);
/* Absolute tolerance of a kernel's output for a dtype ("fp32", "fp16",
 * "bf16") with O(1) inputs; 0 for an unknown dtype. */
double mk_dtype_tolerance(const char *dtype);

typedef struct mk_sweep_opts {
	const char *const *patterns;
	size_t npatterns;
	const double *targets; /* sparsities in [0, 1] */
	size_t ntargets;
	const mk_norm *norms;
	size_t nnorms;
	unsigned kernels;      /* bit (1u << k) per mk_attn_kernel */
	const mk_attn_backend *backend;
	mk_attn_shape shape;   /* batch, heads, n, d */
	const char *dtype;     /* "fp32" */
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
	const char *pattern, *param;
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

/* Target sparsities from percent: "A..B[:STEP]" (B included, STEP 10) or
 * "A,B,..." with every value in 0..100; out gets fractions. */
int mk_sweep_parse_targets(const char *s, double *out, size_t cap, size_t *count);
/* The memory a sweep needs at its densest target (tensors, mask, layout). */
int mk_sweep_check_memory(const mk_sweep_opts *o);
/* Runs the sweep, calling row() for each result (its non-zero return stops
 * the sweep and is returned).  A kernel whose error exceeds the dtype's
 * tolerance stops it with MK_EINTERNAL and a message naming the pattern,
 * parameter, kernel and normalisation. */
int mk_sweep_run(const mk_sweep_opts *o, int (*row)(const mk_sweep_row *r, void *arg),
		 void *arg);

/* The machine a sweep ran on, for its output. */
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
/* mk_machine_describe, then b->describe when b has one. */
void mk_machine_describe_backend(const mk_attn_backend *b, mk_machine *out);

#endif
