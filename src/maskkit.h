/*
 * maskkit: design and measure Transformer attention masks.
 *
 * A mask is an n x n boolean matrix; row i is query token i, column j is key
 * token j.  Masks are bit-packed: each row is ceil(n/64) 64-bit words, bit j
 * of a row lives in word j/64 at bit position j%64, and bits at or beyond n
 * are always zero.
 *
 * Every function that can fail returns MK_OK (0) or a negative MK_E* status
 * and leaves a one-line message for mk_error().  The library never prints
 * and never exits.
 */
#ifndef MASKKIT_H
#define MASKKIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status and errors --------------------------------------------------- */

enum {
	MK_OK = 0,
	MK_ENOMEM = -1,   /* allocation failed */
	MK_EINVAL = -2,   /* bad argument, parameter or expression (user error) */
	MK_EIO = -3,      /* a file cannot be opened or created: missing, no permission, bad path */
	MK_EFORMAT = -4,  /* a file's contents are malformed */
	MK_ERANGE = -5,   /* a size is too large or overflows (user error) */
	MK_EGPU = -6,     /* a GPU call failed */
	MK_EINTERNAL = -7, /* a bug */
	MK_ESYS = -8       /* the system failed: a write or read error, a full disk */
};

const char *mk_status_str(int status);
/* The last message set by mk_error_set() in this thread ("" if none). */
const char *mk_error(void);
/* Sets this thread's message and returns status, so error paths read
 * `return mk_error_set(MK_EINVAL, "n must be positive, got %lld", n);` */
int mk_error_set(int status, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* True for statuses caused by user input (exit code 2 in the CLI). */
bool mk_status_is_user(int status);

/* ---- sizes --------------------------------------------------------------- */

#define MK_N_MAX ((int64_t)1 << 20)             /* largest n anywhere */
#define MK_DEFAULT_MAX_MEMORY ((uint64_t)4 << 30) /* 4 GiB */

/* Words in one packed row of n bits. */
static inline size_t mk_words(int64_t n) { return (size_t)((n + 63) / 64); }
/* Checks 0 < n <= MK_N_MAX, with a message naming `what`. */
int mk_check_n(int64_t n, const char *what);
/* *out = a * b, or MK_ERANGE on overflow. */
int mk_mul_u64(uint64_t a, uint64_t b, uint64_t *out);
/* MK_ERANGE with a clear message when `bytes` exceeds `limit` (0 = no limit). */
int mk_check_memory(uint64_t bytes, uint64_t limit, const char *what);
/* Parses "4G", "512M", "1024" (bytes); K/M/G/T are powers of 1024. */
int mk_parse_size(const char *s, uint64_t *out);

/* ---- packed rows --------------------------------------------------------- */

static inline void mk_bit_set(uint64_t *w, int64_t j)
{
	w[j >> 6] |= (uint64_t)1 << (j & 63);
}
static inline bool mk_bit_test(const uint64_t *w, int64_t j)
{
	return (w[j >> 6] >> (j & 63)) & 1;
}
/* Sets bits [lo, hi) (clipped to [0, n) by the caller). */
void mk_bits_set_range(uint64_t *w, int64_t lo, int64_t hi);
/* True if any bit in [lo, hi) is set / all bits in [lo, hi) are set. */
bool mk_bits_any_range(const uint64_t *w, int64_t lo, int64_t hi);
bool mk_bits_all_range(const uint64_t *w, int64_t lo, int64_t hi);
uint64_t mk_bits_count(const uint64_t *w, size_t nwords);
void mk_bits_zero(uint64_t *w, size_t nwords);
void mk_bits_or(uint64_t *dst, const uint64_t *src, size_t nwords);
void mk_bits_and(uint64_t *dst, const uint64_t *src, size_t nwords);
void mk_bits_andnot(uint64_t *dst, const uint64_t *src, size_t nwords);
/* dst &= src; returns non-zero iff any bit of dst is still set. */
uint64_t mk_bits_and_any(uint64_t *dst, const uint64_t *src, size_t nwords);
/* Complements n bits and keeps the tail beyond n zero. */
void mk_bits_not(uint64_t *w, int64_t n);
/* Calls fn(j, arg) for each set bit j in increasing order; stops early and
 * returns fn's value if it is non-zero. */
int mk_bits_foreach(const uint64_t *w, size_t nwords,
		    int (*fn)(int64_t j, void *arg), void *arg);

/* ---- materialised masks -------------------------------------------------- */

typedef struct mk_mask mk_mask;

/* An all-zero n x n mask; fails with MK_ERANGE if n*n/8 bytes would exceed
 * max_memory (0 = MK_DEFAULT_MAX_MEMORY). */
int mk_mask_new(int64_t n, uint64_t max_memory, mk_mask **out);
void mk_mask_free(mk_mask *m);
int mk_mask_clone(const mk_mask *m, mk_mask **out);
int64_t mk_mask_n(const mk_mask *m);
size_t mk_mask_stride(const mk_mask *m); /* words per row */
uint64_t *mk_mask_row(mk_mask *m, int64_t i);
const uint64_t *mk_mask_crow(const mk_mask *m, int64_t i);
void mk_mask_set(mk_mask *m, int64_t i, int64_t j, bool v);
bool mk_mask_test(const mk_mask *m, int64_t i, int64_t j);
/* dst = dst OP src; MK_EINVAL when sizes differ. */
int mk_mask_or(mk_mask *dst, const mk_mask *src);
int mk_mask_and(mk_mask *dst, const mk_mask *src);
int mk_mask_andnot(mk_mask *dst, const mk_mask *src);
void mk_mask_not(mk_mask *m);
int mk_mask_transpose(const mk_mask *m, mk_mask **out);
uint64_t mk_mask_count(const mk_mask *m);
bool mk_mask_equal(const mk_mask *a, const mk_mask *b);
/* counts[i] = number of set bits in row i (caller supplies n entries). */
void mk_mask_row_counts(const mk_mask *m, int64_t *counts);

/* ---- tile (block) layouts ------------------------------------------------ */

enum { MK_TILE_EMPTY = 0, MK_TILE_PARTIAL = 1, MK_TILE_FULL = 2 };

/* The mask reduced to nb x nb tiles of block x block cells.  When block does
 * not divide n the last row and column of tiles are cut short; such a tile is
 * never FULL, as in FlexAttention and block-sparse kernels, which pad it with
 * masked-out cells. */
typedef struct mk_tiles {
	int64_t n, block, nb;
	uint8_t *state; /* nb*nb entries, row-major, MK_TILE_* */
} mk_tiles;

int mk_mask_tiles(const mk_mask *m, int64_t block, mk_tiles **out);
void mk_tiles_free(mk_tiles *t);
/* Number of cells of tile (bi, bj) that exist (clipped at n). */
uint64_t mk_tiles_area(const mk_tiles *t, int64_t bi, int64_t bj);

/* ---- patterns ------------------------------------------------------------ */

/* Read-only description of the registered patterns, for `maskkit patterns`. */
typedef struct mk_param_info {
	const char *name;
	const char *kind; /* "int", "list" or "bool" */
	const char *def;  /* default as text, NULL when required */
	const char *doc;
} mk_param_info;

typedef struct mk_pattern_info {
	const char *name;
	const char *summary;   /* one-line definition */
	const char *shorthand; /* parameter set by a numeric suffix (local2), or NULL */
	const mk_param_info *params;
	size_t nparams;
} mk_pattern_info;

size_t mk_pattern_count(void);
const mk_pattern_info *mk_pattern_get(size_t k);
const mk_pattern_info *mk_pattern_find(const char *name);

/* ---- expressions: the mask language -------------------------------------- */

/*
 *   expr   := prod { ('+' | '-') prod }        left to right
 *   prod   := term { '&' term }                '&' binds tighter, like a product
 *   term   := NAME [ '(' args ')' ] | FILE | '(' expr ')' | '~' term
 *   NAME   := pattern name, optionally with a numeric suffix (local2)
 *   args   := [ value { ',' value } ] | key '=' value { ',' value } { ',' key '=' ... }
 *   FILE   := path ending in .json .h5 .npy .txt
 * '+' is OR, '&' is AND, '-' is AND-NOT, '~' is NOT.
 */
typedef struct mk_expr mk_expr;

enum { MK_OP_OR = 1, MK_OP_AND, MK_OP_ANDNOT, MK_OP_NOT };

/* Parses text; unknown names and bad parameters are reported with the
 * column (1-based) of the offending character. */
int mk_expr_parse(const char *text, mk_expr **out);
/* A leaf that reads a mask file (format from its extension). */
int mk_expr_file(const char *path, mk_expr **out);
/* Joins a and b under op (takes ownership of both; frees them on failure). */
int mk_expr_join(int op, mk_expr *a, mk_expr *b, mk_expr **out);
void mk_expr_free(mk_expr *e);
/* The expression as text, in a canonical form. */
const char *mk_expr_text(const mk_expr *e);

typedef struct mk_bind_opts {
	int64_t n;           /* size; 0 = take it from the mask files in the expression */
	uint64_t seed;       /* seed for random terms that give none */
	uint64_t max_memory; /* cap for materialised data; 0 = default */
	bool need_cols;      /* prepare column access (mk_cursor_col) */
} mk_bind_opts;

/* Resolves n, loads files, validates parameters against n and precomputes
 * what the row generators need.  Must be called once before cursors. */
int mk_expr_bind(mk_expr *e, const mk_bind_opts *o);
int64_t mk_expr_n(const mk_expr *e);
/* A canonical description of the bound leaves and their parameters, as
 * text like "local(w=2,block=1) + random(size=1,seed=0)". */
const char *mk_expr_params(const mk_expr *e);
/* True when the expression was bound with need_cols. */
bool mk_expr_has_cols(const mk_expr *e);
/* True when every leaf is symmetric by construction (sound, not complete). */
bool mk_expr_known_symmetric(const mk_expr *e);

/* A cursor generates rows (and columns) of a bound expression.  Cursors are
 * not shared between threads; make one per thread. */
typedef struct mk_cursor mk_cursor;
int mk_cursor_new(const mk_expr *e, mk_cursor **out);
void mk_cursor_free(mk_cursor *c);
/* Fills dst (mk_words(n) words) with row i / column j; every word is written.
 * Columns need the expression bound with need_cols, else MK_EINVAL. */
void mk_cursor_row(mk_cursor *c, int64_t i, uint64_t *dst);
int mk_cursor_col(mk_cursor *c, int64_t j, uint64_t *dst);

/* Materialises a bound expression (checked against its max_memory). */
int mk_expr_to_mask(const mk_expr *e, mk_mask **out);

/* ---- measuring ----------------------------------------------------------- */

#define MK_MEASURE_MAX_TILES 8

typedef struct mk_tile_stats {
	int64_t block;
	uint64_t tiles, nonempty, full;
	uint64_t cells_in_nonempty; /* exact cell area of the non-empty tiles */
	double density;             /* nonempty / tiles */
	double effective_sparsity;  /* 1 - cells_in_nonempty / n^2 */
} mk_tile_stats;

typedef struct mk_measure {
	int64_t n;
	uint64_t count;        /* |M| */
	uint64_t diag;         /* set cells on the main diagonal */
	double sparsity;       /* 1 - |M| / n^2 */
	double sparsity_nodiag;/* 1 - |M \ I| / n^2: the mask without its diagonal */
	int64_t row_min, row_max;
	double row_mean;
	int64_t empty_rows, first_empty_row; /* -1 when none */
	bool symmetric, causal, toeplitz;
	bool symmetric_known;  /* false when bound without need_cols and not symmetric by construction */
	size_t ntiles;
	mk_tile_stats tiles[MK_MEASURE_MAX_TILES];
} mk_measure;

typedef void (*mk_progress_fn)(int64_t rows_done, int64_t n, void *arg);

/* Streams the rows of a bound expression and fills *out (symmetry is
 * checked only when it was bound with need_cols or is symmetric by
 * construction: see symmetric_known), in O(n) memory per thread.  blocks lists
 * ntiles tile sizes.  progress (may be NULL) is called from one thread. */
int mk_measure_expr(const mk_expr *e, const int64_t *blocks, size_t ntiles,
		    mk_progress_fn progress, void *parg, mk_measure *out);

/* ---- files --------------------------------------------------------------- */

typedef enum mk_format {
	MK_FMT_NONE = 0,
	MK_FMT_TXT,
	MK_FMT_JSON,
	MK_FMT_PNG,
	MK_FMT_H5,
	MK_FMT_NPY,
	MK_FMT_BLOCKS
} mk_format;

/* From a name ("txt", "json", ...) or a path's extension (.txt, .json, .png,
 * .h5/.hdf5, .npy; blocks have no extension of their own). */
mk_format mk_format_from_name(const char *name);
mk_format mk_format_from_path(const char *path);
const char *mk_format_name(mk_format f);

typedef struct mk_write_opts {
	mk_format format;
	int64_t block;       /* for MK_FMT_BLOCKS; 0 = 128 */
	uint64_t seed;       /* recorded in metadata */
	uint64_t max_memory; /* cap for dense outputs (txt, npy, h5) and JSON */
	int64_t png_max_px;  /* PNG side limit before downsampling; 0 = 1024 */
} mk_write_opts;

/* Writes the rows of a bound expression to path, atomically: the data goes
 * to a temporary file in the same directory that is renamed over path only
 * on success, so a failure never truncates an existing file. */
int mk_write_expr(const mk_expr *e, const char *path, const mk_write_opts *o);
/* The same, to an already-open stream (no atomicity; txt, json, blocks). */
int mk_write_expr_stream(const mk_expr *e, void *file, const mk_write_opts *o);

/* Reads a mask file; the format comes from the extension. */
int mk_mask_load(const char *path, uint64_t max_memory, mk_mask **out);

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

/* ---- weights in HDF5 files (weights.c) ----------------------------------- */

typedef struct mk_weights mk_weights; /* an HDF5 file open for reading */

int mk_weights_open(const char *path, mk_weights **out);
void mk_weights_close(mk_weights *w); /* NULL-safe */
const char *mk_weights_file(const mk_weights *w);

/* Every dataset of the given rank (0 = any rank) whose path (with its
 * leading '/') contains all of the NULL-terminated needles; *out is a
 * NULL-terminated array sorted by path, freed with mk_weights_list_free. */
int mk_weights_list(mk_weights *w, int rank, const char *const *needles, char ***out,
		    size_t *count);
void mk_weights_list_free(char **list);

/* The one 2-D dataset whose path contains needle.  None or several: an
 * MK_EFORMAT error naming `what` and listing the candidates (the matches,
 * or every 2-D dataset when nothing matched). */
int mk_weights_find(mk_weights *w, const char *needle, const char *what, char **path);

/* Reads a dataset of rank 1 (into a 1 x len matrix) or 2 of any float
 * (float16/32/64) or integer type into doubles.  Errors (MK_EFORMAT) name
 * the file and dataset: a missing dataset, another rank than `rank`, an
 * empty one, a non-numeric type, NaN or Inf (with the first bad element). */
int mk_weights_read(mk_weights *w, const char *dataset, int rank, uint64_t max_memory,
		    mk_matrix *out);

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
} mk_tisa;

/* Fits S = kernels (1..MK_TISA_MAX_KERNELS) kernels to profile[0..m-1] at
 * d = d0 + index, weighted by w (NULL: all 1), by nonlinear least squares
 * (GSL, trust region) from several deterministic starting points, keeping
 * the best.  b is reported as |b|; kernels come ordered by centre c; r2 is
 * never negative; unused kernels have a ~ 0.  A flat profile is fitted
 * exactly without a search (starts = iterations = 0).  A kernel may settle
 * far outside the data with a tiny b: there it acts as a smooth trend. */
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
	int64_t heads;     /* 0: hidden size / 64 */
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

/* ---- pictures (plot_png.c, gnuplot.c) ------------------------------------- */

/* Heatmaps of `count` k x k blocks (block c starts at mats[c], leading
 * dimension lda) in a grid `columns` panels wide with a 2-pixel gap, each
 * panel scaled from the minimum to the maximum of what it shows through
 * viridis: one pixel per entry up to max_px (0: 1024) per side, block means
 * beyond (NaN and Inf left out; grey where nothing finite).  Written
 * atomically. */
int mk_png_matrices(const char *path, const double *const *mats, int count, int64_t k,
		    int64_t lda, int columns, int64_t max_px);

/* A gnuplot figure: the template templates/NAME.gp is run by the gnuplot
 * program (MASKKIT_GNUPLOT, else "gnuplot" on PATH) after assignments of
 * datafile, output, title, panels, rows_per_panel, columns (its column
 * names, space-separated, as a string) and any extra assignments in vars.
 * The data table is written as whitespace-separated text, NaN as "NaN",
 * panels as blocks separated by two blank lines (gnuplot's `index`).
 * Templates are compiled in; MASKKIT_TEMPLATES=DIR reads DIR/NAME.gp instead.
 * The PNG is written atomically. */
typedef struct mk_plot {
	const char *template_name;
	const char *output;
	const char *title;
	const double *data;          /* rows x ncols, row-major */
	int64_t rows;
	int ncols;
	const char *const *col_names; /* ncols names */
	int panels;                   /* >= 1; rows split evenly */
	const char *vars;             /* extra gnuplot lines, or NULL */
} mk_plot;
int mk_plot_run(const mk_plot *p);

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
/* Checks the shape, kernel and mask against the backend, then runs it. */
int mk_attn_run(const mk_attn_backend *b, mk_attn_kernel kernel, const mk_norm *norm,
		const mk_attn_shape *s, const float *q, const float *k, const float *v,
		const mk_attn_layout *mask, float *o, mk_attn_stats *st);

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
/* Writes t as dtype to "FILE.npy", "FILE.h5" (dataset `dataset`) or
 * "FILE.h5:/path" (the path wins; groups created), atomically: a failure
 * leaves an existing file untouched.  MK_EINVAL for another extension. */
int mk_tensor_write(const mk_tensor *t, const char *spec, const char *dataset, mk_dtype dtype);
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

/* The reference (analysis/attn_ref.c): masked attention in double precision,
 * with the normalisations defined in the attention engine's section, on the
 * listed rows of every (batch, head).  mask NULL means every entry (what the
 * dense kernel computes).  ref holds batch * heads * nrows * d doubles:
 * row r of slice bh at ref + (bh * nrows + r) * d.  Column scalings need
 * every row, so g is computed over all rows whichever rows are asked for. */
#define MK_REF_MAX_ROWS 512
/* The rows checked: all of them for n <= MK_REF_MAX_ROWS, else 64 evenly
 * spread (first and last included); rows holds MK_REF_MAX_ROWS entries. */
int64_t mk_attn_ref_rows(int64_t n, int64_t *rows);
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
	int64_t tile;
	int reps;              /* timed runs after one warm-up */
	uint64_t seed;         /* tensors and random patterns */
	uint64_t max_memory;   /* 0 = MK_DEFAULT_MAX_MEMORY */
	/* called before each step (a mask and normalisation); may be NULL */
	void (*progress)(int64_t done, int64_t total, const char *what, void *arg);
	void *arg;
} mk_sweep_opts;

/* One result.  dense ignores the mask: it is timed once per normalisation and
 * its row repeated for every mask, with |M| = n^2 in gflops_actual. */
typedef struct mk_sweep_row {
	const char *pattern, *param;
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
} mk_machine;
void mk_machine_describe(mk_machine *out);

/* ---- version -------------------------------------------------------------- */
const char *mk_version(void);

#ifdef __cplusplus
}
#endif
#endif /* MASKKIT_H */
