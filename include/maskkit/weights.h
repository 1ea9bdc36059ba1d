/*
 * maskkit weights: trained weights and what they say about position (dense
 * matrices, weights in HDF5 files, Toeplitz fits, TISA kernel fits, the
 * positional term of attention).
 */
#ifndef MK_WEIGHTS_H
#define MK_WEIGHTS_H

#include "core.h"
#include "result.h"
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- dense matrices (matrix.c) ------------------------------------------- */

/* rows x cols doubles, row-major: element (i, j) is data[i * cols + j]. */
typedef struct mk_matrix {
	int64_t rows, cols;
	double *data;
} mk_matrix;

/* Allocates a zeroed matrix after checking rows * cols * 8 for overflow and
 * against max_memory (0 = no limit); `what` names it in errors. */
int mk_matrix_new(int64_t rows, int64_t cols, uint64_t max_memory, const char *what,
		  mk_matrix *out);
void mk_matrix_release(mk_matrix *m); /* frees data, zeroes *m; NULL-safe */

/* P = E E^T in double precision (cblas_dsyrk), full and symmetric. */
int mk_matrix_gram(const mk_matrix *e, uint64_t max_memory, mk_matrix *p);

/* ---- trained weights (weights_open.c, weights.c, weights_st.c) ----------- */

/* Weights open for reading, from any of:
 *  - a HuggingFace model directory: config.json and model.safetensors, or
 *    model.safetensors.index.json and the shards it names (plain file names
 *    in the directory), or tf_model.h5;
 *  - a .safetensors file (config.json beside it is read when present);
 *  - an HDF5 file (Keras/TensorFlow checkpoints, h5py dumps of PyTorch
 *    state dicts; config.json beside a tf_model.h5 is read when present);
 *  - a .npy file holding one 2-D float array (a bare E_P, n x d).
 * Names are paths from a root '/': HDF5 datasets as HDF5 has them
 * ("/bert/embeddings/position_embeddings/embeddings:0"), safetensors
 * tensors as '/' + the tensor's name
 * ("/embeddings.position_embeddings.weight",
 * "/bert.encoder.layer.0.attention.self.query.weight"), and an .npy file's
 * one array "/".  PyTorch pickles (.bin, .pt, .pth, pytorch_model.bin) are
 * refused with a one-line recipe for converting them to safetensors.
 * Errors: MK_EIO when the path cannot be read, MK_EFORMAT (naming the file
 * and, for safetensors, the tensor) for a damaged or unknown file, a
 * config.json that cannot be read. */
typedef struct mk_weights mk_weights;

int mk_weights_open(const char *path, mk_weights **out);
void mk_weights_close(mk_weights *w); /* NULL-safe */
const char *mk_weights_file(const mk_weights *w); /* the path given to open */
/* The model's config.json (see mk_weights_open), or NULL when there is none. */
const mk_model_config *mk_weights_config(const mk_weights *w);

/* Every dataset of the given rank (0 = any rank) whose name (with its
 * leading '/') contains all of the NULL-terminated needles; *out is a
 * NULL-terminated array sorted by name, freed with mk_weights_list_free. */
int mk_weights_list(mk_weights *w, int rank, const char *const *needles, char ***out,
		    size_t *count);
void mk_weights_list_free(char **list);

/* The one 2-D dataset whose name contains needle.  None or several: an
 * MK_EFORMAT error naming `what` and listing the candidates (the matches,
 * or every 2-D dataset when nothing matched).  An .npy file's one array
 * answers every needle. */
int mk_weights_find(mk_weights *w, const char *needle, const char *what, char **path);

/* Reads a dataset of rank 1 (into a 1 x len matrix) or 2 of any float
 * (float16, bfloat16, float32/64) or integer type into doubles.  Errors
 * (MK_EFORMAT) name the file and dataset: a missing dataset, another rank
 * than `rank`, an empty one, a non-numeric type, NaN or Inf (with the first
 * bad element). */
int mk_weights_read(mk_weights *w, const char *dataset, int rank, uint64_t max_memory,
		    mk_matrix *out);

/* Reads a dataset of rank 1 to 4 as float32 without a double copy: *out
 * (malloc'd, row-major, freed with free()) holds dims[0] x .. x
 * dims[*rank - 1] floats.  The same errors as mk_weights_read, and
 * MK_EFORMAT for a float64 value beyond float32's range; max_memory bounds
 * *out (0 = MK_DEFAULT_MAX_MEMORY). */
int mk_weights_read_f32(mk_weights *w, const char *name, uint64_t max_memory, float **out,
			int *rank, int64_t dims[4]);

/* ---- Toeplitz analysis (analysis/toeplitz.c) ------------------------------ */

/* The least-squares Toeplitz fit T of the leading k x k block of A: T is
 * constant along each diagonal d = j - i, equal to A's mean along it.
 * R^2 = 1 - RSS / TSS, RSS = sum (A - T)^2, TSS = sum (A - mean A)^2; a
 * constant block (TSS = 0) has RSS = 0 and R^2 = 1. */
typedef struct mk_toeplitz {
	int64_t k;   /* the block analysed */
	double r2, rss, tss;
	double mean; /* mean of the block */
} mk_toeplitz;

/* A is row-major with leading dimension lda >= k.  symmetric: A is known to
 * be symmetric (only the lower triangle is read, which halves the work).
 * profile, when not NULL, gets the 2k - 1 diagonal means: profile[k - 1 + d]
 * for d in [-(k - 1), k - 1]. */
int mk_toeplitz_fit(const double *a, int64_t lda, int64_t k, bool symmetric, double *profile,
		    mk_toeplitz *out);

/* ---- a model's Toeplitz analysis (analysis/toeplitz_model.c) ---------------- */

/* What `maskkit toeplitz` does for one MODEL, as one call: reads E_P (a model
 * directory, .safetensors, HDF5, .npy: mk_weights_open), forms P = E_P E_P^T
 * in double precision and fits the closest Toeplitz matrix to all of P and
 * to its leading first x first block. */
typedef struct mk_toeplitz_model_opts {
	const char *dataset; /* E_P's path; NULL: FILE.h5:/PATH's, else searched for */
	int64_t first;       /* also fit the leading block (skipped when >= n; 0: none) */
	uint64_t max_memory; /* for E_P and P */
	bool keep;           /* keep P and the fitted profile (for pictures) */
} mk_toeplitz_model_opts;

typedef struct mk_toeplitz_model {
	const char *file;    /* as given (not owned) */
	char *dataset;       /* the dataset read, from the root */
	int64_t n, d;
	mk_toeplitz all, first; /* first.k == 0: no smaller leading block */
	mk_matrix p;         /* with keep: P (n x n) */
	double *profile;     /* with keep: the 2n - 1 diagonal means of P */
} mk_toeplitz_model;

/* Errors name the file; MK_EFORMAT with the `dataset` parameter when E_P is
 * not found or ambiguous. */
int mk_toeplitz_model_run(const char *file, const mk_toeplitz_model_opts *o,
			  mk_toeplitz_model *out);
/* The same for an E_P in memory (e: n x d doubles, n >= 2, finite, else
 * MK_EINVAL): what a binding (Python's maskkit.toeplitz) calls.  o->dataset
 * is not used; out->file and out->dataset are NULL (null in JSON). */
int mk_toeplitz_model_fit(const mk_matrix *e, const mk_toeplitz_model_opts *o,
			  mk_toeplitz_model *out);
void mk_toeplitz_model_release(mk_toeplitz_model *m);
/* The result's fields (result.h): file, dataset, n, d, r2, rss, tss, mean,
 * first (k, r2, rss, tss, mean, or null). */
extern const struct mk_record mk_toeplitz_model_record;

/* ---- TISA kernel fits (analysis/tisa_fit.c) ------------------------------- */

#define MK_TISA_MAX_KERNELS 8

/* f(d) = sum_s a_s exp(-|b_s| (d - c_s)^2), the TISA paper's positional
 * scoring function, fitted to a Toeplitz profile. */
typedef struct mk_tisa {
	int kernels;
	double a[MK_TISA_MAX_KERNELS], b[MK_TISA_MAX_KERNELS], c[MK_TISA_MAX_KERNELS];
	double r2;      /* 1 - wRSS / wTSS of the fit against the profile */
	double wrss;    /* sum_d w_d (t_d - f(d))^2 */
	int starts;     /* starting points tried */
	int iterations; /* of the winning start */
	bool capped;    /* the winning start stopped at the iteration cap, not
			 * converged: theta may still be improvable */
	int outside;    /* "trend" kernels: centre c outside [d0, d0 + m - 1]
			 * with a visible amplitude (see mk_tisa_fit) */
} mk_tisa;

/* Fits S = kernels (1..MK_TISA_MAX_KERNELS) kernels to profile[0..m-1] at
 * d = d0 + index, weighted by w (NULL: all 1), by nonlinear least squares
 * (GSL, trust region) from several deterministic starting points, keeping
 * the best.  b is reported as |b|; kernels come ordered by centre c; r2 is
 * never negative; unused kernels have a ~ 0.  A flat profile is fitted
 * exactly without a search (starts = iterations = 0).  A kernel may settle
 * far outside the data with a tiny b: there it acts as a smooth trend over
 * the range, not a local bump; `outside` counts them (kernels whose a is
 * below 1e-6 of max |profile| are not counted).  `capped` says the best
 * start ran out of iterations before it converged. */
int mk_tisa_fit(const double *profile, const double *w, int64_t m, int64_t d0, int kernels,
		mk_tisa *out);
double mk_tisa_eval(const mk_tisa *t, double d);

/* ---- the positional attention term (analysis/positional.c) ---------------- */

typedef enum mk_layout {
	MK_LAYOUT_AUTO = 0, /* from the dataset's name: "kernel" in x out, "weight" out x in */
	MK_LAYOUT_IN_OUT,   /* TensorFlow/Keras kernels: x W */
	MK_LAYOUT_OUT_IN    /* PyTorch nn.Linear weights: x W^T */
} mk_layout;

enum {
	MK_POS_POSITION, MK_POS_WORD, MK_POS_QUERY, MK_POS_KEY, MK_POS_QUERY_BIAS,
	MK_POS_KEY_BIAS, MK_POS_PROJ, MK_POS_PROJ_BIAS, MK_POS_NROLES
};

typedef struct mk_positional_opts {
	int64_t layer;     /* 0-based */
	int64_t heads;     /* 0: config.json's num_attention_heads, else an error */
	bool no_bias;      /* leave the query and key biases out */
	mk_layout layout;
	/* dataset paths by role (MK_POS_*); NULL: searched for by name */
	const char *dataset[MK_POS_NROLES];
	uint64_t max_memory;
} mk_positional_opts;

typedef struct mk_positional {
	int64_t n;       /* positions */
	int64_t e;       /* embedding size (before any projection) */
	int64_t hidden;  /* size of the query and key projections */
	int64_t heads, dk;
	int64_t layers;  /* layers with query weights found in the file */
	double *f;       /* heads x n x n: head h's F_P at f + h * n * n */
	double *profile; /* heads x (2n - 1) diagonal means */
	mk_toeplitz *fit;  /* heads */
	char *used[MK_POS_NROLES]; /* the datasets read (NULL: not used) */
} mk_positional;

/* The TISA paper's positional term per head of one layer (see positional.c
 * for how biases and embedding projections enter). */
int mk_positional_compute(const char *file, const mk_positional_opts *o, mk_positional *out);
void mk_positional_release(mk_positional *p);
const char *mk_positional_role(int role); /* "position", "word", ... */

/* ---- the positional term, per head, with TISA fits (analysis/positional_report.c) */

/* One head's TISA fit, in the report's shape. */
typedef struct mk_positional_fit {
	const double *a, *b, *c; /* theta: kernels values each (a, |b|, c) */
	int64_t kernels;
	double r2;               /* against the profile */
	double r2_matrix;        /* as a model of F_P: 1 - (RSS + wRSS) / TSS */
	int starts, iterations;
	bool capped;
	int trend_kernels;       /* mk_tisa's outside */
} mk_positional_fit;

typedef struct mk_positional_head {
	int64_t head;
	double r2, rss, tss;          /* the Toeplitz fit of the head's F_P */
	const mk_positional_fit *fit; /* NULL without kernels */
} mk_positional_head;

typedef struct mk_positional_report {
	const char *file;   /* as given (not owned) */
	int64_t layer;
	bool bias;          /* a query or key bias was read */
	int kernels;        /* TISA kernels per head (0: no fit) */
	mk_positional p;
	mk_tisa *fits;      /* p.heads, with kernels */
	mk_positional_head *per_head;   /* p.heads */
	mk_positional_fit *fit_views;   /* p.heads, with kernels */
	int64_t params_per_layer;       /* 3 S H, with kernels */
	double params;                  /* 3 S H L; NaN when the layers are unknown */
} mk_positional_report;

/* What `maskkit positional` does for one MODEL: the positional term of
 * o->layer per head (mk_positional_compute) and, with kernels in
 * 1..MK_TISA_MAX_KERNELS, a TISA fit of each head's profile (diagonal d
 * weighted by its length n - |d|: the least-squares fit of f(j - i) to the
 * whole matrix).  Release *out also after an error. */
int mk_positional_run(const char *file, const mk_positional_opts *o, int kernels,
		      mk_positional_report *out);
void mk_positional_report_release(mk_positional_report *r);
/* The result's fields (result.h): file, layer, layers, n, embedding, hidden,
 * heads, dk, bias, datasets (by role), per_head (head, r2, rss, tss, fit: a,
 * b, c, r2, r2_matrix, starts, iterations, capped, trend_kernels), and with
 * kernels positional_parameters_per_layer and positional_parameters. */
extern const struct mk_record mk_positional_record;

#ifdef __cplusplus
}
#endif
#endif /* MK_WEIGHTS_H */
