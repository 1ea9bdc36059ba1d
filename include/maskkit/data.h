/*
 * maskkit data sets: per-sample, per-layer and per-head masks and attention
 * maps read from HDF5, their sparsity (the AAA paper's Eq. 9), pruning
 * importance matrices to masks and adaptive axis masks (attention statistics:
 * attn_maps.h).
 */
#ifndef MK_DATA_H
#define MK_DATA_H

#include "core.h"
#include "mask.h"
#include "result.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- data sets (dataset.c) ------------------------------------------------ */

/*
 * A data set is one HDF5 dataset of shape [samples, layers, heads, N, N]
 * whose leading axes may be absent (rank 4: [layers, heads, N, N], rank 3:
 * [heads, N, N], rank 2: [N, N]; `axes` names them otherwise), holding masks
 * (integers, booleans: nonzero is set) or attention probabilities (float16,
 * float32, float64), and an optional integer dataset `lengths` [samples]
 * giving each sample's real length N_i (1 <= N_i <= N).  It is read one
 * (sample, layer) block of heads x N x N at a time.
 */
typedef struct mk_dataset mk_dataset;

typedef struct mk_dataset_opts {
	const char *dataset;  /* path of the data; NULL: see mk_dataset_open */
	const char *lengths;  /* path of the lengths; NULL: "lengths" when present;
			       * "" or "none": every sample is N long */
	const char *axes;     /* the leading axes in order, letters from "slh" (samples,
			       * layers, heads), e.g. "sh" for [samples, heads, N, N];
			       * NULL: by rank ("slh", "lh", "h", "") */
	uint64_t max_memory;  /* cap for what reading the data keeps (a block, the
			       * per-sample and per-head results, HDF5's chunk cache);
			       * 0 = MK_DEFAULT_MAX_MEMORY */
	bool shape_only;      /* a look at the shape: the lengths are not read (their
			       * name is found) and mk_dataset_lengths gives NULL */
	bool parallel;        /* under MPI: every rank opens the file at once through MPI-IO
			       * (open, reads with `collective` and close are then
			       * collective) and the ranks must see the same data */
	bool collective;      /* reads are collective MPI-IO transfers (every rank reads,
			       * mk_dataset_read_none where it has no block) */
} mk_dataset_opts;

typedef struct mk_dataset_info {
	const char *path;         /* the file */
	const char *name;         /* the data's path in the file */
	const char *lengths_name; /* NULL when every sample is N long */
	mk_dtype dtype;           /* as stored: MK_DTYPE_U8, MK_DTYPE_BOOL, MK_DTYPE_F16 ... */
	int rank;
	int64_t samples, layers, heads, n; /* absent axes count 1 */
	bool is_float;            /* attention probabilities rather than masks */
	uint64_t bytes;           /* stored size of the data */
} mk_dataset_info;

/* One (sample, layer) block; the pointers stay valid until the next read. */
typedef struct mk_dataset_block {
	int64_t sample, layer, heads, n; /* n: the stored N */
	int64_t len;                     /* this sample's N_i */
	const float *p;   /* probabilities: heads x n x n (padding included), else NULL */
	float min;        /* the smallest real probability, or 0 (and 0 for masks) */
	const uint8_t *m; /* masks: heads x n x n, 0 or 1, else NULL */
} mk_dataset_block;

/* Opens a data set.  The data is o->dataset, else the dataset "masks",
 * "mask", "attentions", "attention", "attn" or "probs" (first found), else the only
 * dataset of rank 2 to 5 other than the lengths.  Errors (MK_EFORMAT unless
 * said): the file missing (MK_EIO) or not HDF5, no or several candidates, a
 * rank outside 2..5 or not matching `axes`, non-square last two axes, an
 * empty axis, a non-numeric type, a damaged layout, external storage, data
 * never or only partly written, lengths that are not a 1-D integer dataset
 * of `samples` entries, a length < 1 or > N (naming the first bad sample);
 * MK_ERANGE when a block, the per-sample and per-head results (32 bytes a
 * sample, 64 a head of a layer), one decompressed chunk or the chunk cache
 * that decompresses each chunk once would take more than max_memory, all
 * checked before anything is allocated or read. */
int mk_dataset_open(const char *path, const mk_dataset_opts *o, mk_dataset **out);
void mk_dataset_close(mk_dataset *d);
const mk_dataset_info *mk_dataset_get_info(const mk_dataset *d);
/* samples entries: each sample's N_i (N when there are no lengths). */
const int64_t *mk_dataset_lengths(const mk_dataset *d);
/* Reads block (sample, layer); MK_EFORMAT when the file cannot be read
 * there (a truncated file) or a probability among the sample's real N_i x N_i
 * cells is NaN or infinite (naming the first such cell; in padding they read
 * as 0), MK_EINVAL for indices out of range.  The block's buffers are
 * allocated at the first read. */
int mk_dataset_read(mk_dataset *d, int64_t sample, int64_t layer, mk_dataset_block *out);
/* A collective read of nothing, for a rank with no block in a round. */
int mk_dataset_read_none(mk_dataset *d);

/* A data set in the caller's memory (dataset_mem.c): data holds samples x
 * layers x heads x n x n elements in C order (a numpy array [samples,
 * layers, heads, N, N]) of dtype MK_DTYPE_F32, F64 or F16 (IEEE halves:
 * probabilities) or MK_DTYPE_BOOL, U8, I8 (masks: nonzero is set), and
 * lengths nlengths entries (must be samples; NULL: every sample is n long).
 * It reads as a file's data set does, its blocks copied (the caller's
 * memory is never written to and must outlive the data set).  path and
 * name stand for the file and the dataset in messages and reports (NULL:
 * "memory", "data"), lengths_name for the lengths' (NULL: "lengths").
 * Errors: MK_EINVAL for an axis < 1 (naming it), another dtype (`dtype`),
 * lengths not one per sample or outside [1, n] (`lengths`); MK_ERANGE as
 * mk_dataset_open's, before anything is allocated. */
typedef struct mk_dataset_mem {
	const void *data;
	mk_dtype dtype;
	int64_t samples, layers, heads, n;
	const int64_t *lengths;
	int64_t nlengths;
	const char *path, *name, *lengths_name;
} mk_dataset_mem;
int mk_dataset_wrap(const mk_dataset_mem *m, uint64_t max_memory, mk_dataset **out);

/* Reads sample lengths from "FILE.h5" (dataset "lengths", else the only 1-D
 * integer dataset), "FILE.h5:/path", "FILE.npy" (1-D integers) or a text
 * file of integers separated by white space or commas.  Each must be in
 * [1, n_max] (n_max 0: MK_N_MAX); at most MK_LENGTHS_MAX of them.  *out is
 * malloc'd. */
#define MK_LENGTHS_MAX ((int64_t)1 << 26)
int mk_lengths_read(const char *spec, int64_t n_max, int64_t **out, int64_t *count);

/* ---- which cells of an attention map count (dataset.c) --------------------- */

typedef enum mk_keep_rule {
	MK_KEEP_NONZERO = 0, /* masks: nonzero */
	MK_KEEP_THRESHOLD,   /* p >= value */
	MK_KEEP_TOP_P        /* per row, the fewest keys whose mass reaches value times the
			      * row's mass over its real keys (ties: lower index first) */
} mk_keep_rule;

typedef struct mk_keep {
	mk_keep_rule rule;
	double value;
} mk_keep;

/* ---- Eq. 9 sparsity over a data set (analysis/dataset_measure.c) ----------- */

/*
 * rho = mean over samples i, layers l, heads a of 1 - |B_ila| / N_i^2, with
 * B restricted to the sample's N_i x N_i real tokens; rho_classic counts the
 * whole stored N x N (for patterns: the pattern at n_classic), as if every
 * sample were N long.
 */
/* YES: M[i][j] = M[i+1][j+1] everywhere; INTERIOR: on rows and columns
 * 1..N-2 only (as DAM_s masks, which keep the first and last rows and
 * columns whole); NO: neither, or not checked (top-p). */
enum { MK_TOEPLITZ_NO = 0, MK_TOEPLITZ_INTERIOR = 1, MK_TOEPLITZ_YES = 2 };

typedef struct mk_ds_measure {
	int64_t samples, layers, heads, n;
	double rho, rho_classic;
	double *by_sample;  /* [samples]: mean over layers and heads */
	double *by_layer;   /* [layers]: mean over samples and heads */
	double *by_head;    /* [layers * heads]: mean over samples */
	int64_t *lengths;   /* [samples] */
	uint8_t *toeplitz;  /* [layers * heads]: the least MK_TOEPLITZ_* level over the
			     * samples' N_i x N_i blocks */
	uint64_t empty_rows; /* real rows with no key kept, all blocks together */
	uint64_t bytes;     /* data read */
} mk_ds_measure;

/* Measures every block of d under rule k (masks: MK_KEEP_NONZERO only);
 * progress is called with (samples done, samples).  Under MPI (d opened with
 * `parallel`) collective: the ranks share the blocks and rank 0 adds their
 * counts in block order, so its result is the same for any number of ranks
 * (the other ranks' is incomplete). */
int mk_dataset_measure(mk_dataset *d, const mk_keep *k, mk_progress_fn progress, void *parg,
		       mk_ds_measure *out);
/* Eq. 9 for patterns: exprs[l * heads + a] is the text of layer l, head a's
 * expression, measured at each sample's length (bound with seed + l * heads
 * + a, as `gen --heads-file` builds them); n_classic 0: the longest.  What it
 * keeps (per sample, and per head at each distinct length) is checked
 * against max_memory (0: no limit) before it is allocated. */
int mk_lengths_measure(const char *const *exprs, int64_t layers, int64_t heads,
		       const int64_t *lengths, int64_t samples, int64_t n_classic, uint64_t seed,
		       uint64_t max_memory, mk_ds_measure *out);
void mk_ds_measure_release(mk_ds_measure *m);

/* ---- the data-set measure in one call (analysis/dataset_report.c) ---------- */

/* What `maskkit measure` does with a data set: a data file (every block
 * under a keep rule) or patterns measured at each sample's length, with
 * what was measured named and the breakdowns as rows for mk_emit. */
typedef struct mk_ds_report_opts {
	const char *dataset;  /* files: the data's path; NULL: FILE.h5:/PATH's, else searched */
	const char *lengths;  /* files: mk_dataset_opts.lengths; patterns: a lengths file
			       * (mk_lengths_read), NULL: every sample is n long */
	const char *axes;     /* files: mk_dataset_opts.axes */
	mk_keep keep;         /* files: which cells count */
	int64_t n;            /* files: the data's N, checked when not 0; patterns: the
			       * classic figure's N (0: the longest) and, without lengths,
			       * the one sample's length */
	uint64_t seed;        /* patterns: as mk_lengths_measure's */
	uint64_t max_memory;
	bool collective;      /* files under MPI: collective reads */
	mk_progress_fn progress; /* files: (samples done, samples) */
	void *parg;
} mk_ds_report_opts;

typedef struct mk_ds_layer_row {
	int64_t layer;
	double sparsity;
} mk_ds_layer_row;

typedef struct mk_ds_head_row {
	int64_t layer, head;
	double sparsity;
	const char *toeplitz; /* "yes", "interior", "no"; NULL: not checked (top-p) */
} mk_ds_head_row;

typedef struct mk_ds_sample_row {
	int64_t sample, length;
	double sparsity;
} mk_ds_sample_row;

/* The report (mk_ds_report_record): data, lengths_from (null: none), cells,
 * samples, layers, heads, n, sparsity, sparsity_classic, empty_rows (files
 * only), by_layer, by_head (mk_ds_head_record), by_sample, lengths. */
typedef struct mk_ds_report {
	char *data;          /* what was measured */
	char *lengths_from;  /* where the lengths came from; NULL: every sample is N long */
	char *cells;         /* which cells count */
	mk_ds_measure m;
	bool file;           /* a data file (empty_rows counted), else patterns */
	int64_t len_min, len_max;
	double len_mean;
	int64_t nheads;      /* layers * heads */
	mk_ds_layer_row *by_layer;   /* [layers] */
	mk_ds_head_row *by_head;     /* [layers * heads] */
	mk_ds_sample_row *by_sample; /* [samples] */
} mk_ds_report;

/* Whether spec, an operand of `maskkit measure`, is a data set: an HDF5
 * file (.h5, .hdf5) or a dataset of one (FILE.h5:/PATH) that is not one
 * plain 2-D mask without lengths (a file HDF5 cannot open counts as a data
 * set, whose error is then the data set's; FILE.h5:/PATH of a file not there
 * too; an expression naming one, 'local2 & a.h5:/m', does not). */
bool mk_ds_is_data_set(const char *spec);
/* spec is FILE.h5 or FILE.h5:/PATH (then not o->dataset: MK_EINVAL naming
 * `dataset`).  Under MPI collective, as mk_dataset_measure: every rank
 * calls it and rank 0's report is complete.  MK_EINVAL naming `n` when n
 * is not the data's N. */
int mk_ds_report_file(const char *spec, const mk_ds_report_opts *o, mk_ds_report *out);
/* The same over a data set already open (mk_dataset_open, mk_dataset_wrap),
 * which it reads whole and leaves open; o->dataset, lengths and axes are
 * the opener's and not read here. */
int mk_ds_report_dataset(mk_dataset *d, const mk_ds_report_opts *o, mk_ds_report *out);
/* exprs[l * heads + a]: one expression per layer and head (layers 0: one
 * flat list of heads), measured at each sample's length; name says what
 * they are (an expression, a heads file).  MK_EINVAL naming `lengths` when
 * there are neither lengths nor n. */
int mk_ds_report_patterns(const char *const *exprs, int64_t layers, int64_t heads,
			  const char *name, const mk_ds_report_opts *o, mk_ds_report *out);
void mk_ds_report_release(mk_ds_report *r);

typedef enum mk_ds_by { MK_DS_BY_LAYER, MK_DS_BY_HEAD, MK_DS_BY_SAMPLE } mk_ds_by;
/* A breakdown's rows and their record (mk_ds_layer_record: layer, sparsity;
 * mk_ds_head_record: layer, head, sparsity, toeplitz; mk_ds_sample_record:
 * sample, length, sparsity). */
const struct mk_record *mk_ds_report_rows(const mk_ds_report *r, mk_ds_by by,
					  const void **rows, size_t *count);
extern const struct mk_record mk_ds_report_record;
extern const struct mk_record mk_ds_layer_record;
extern const struct mk_record mk_ds_head_record;
extern const struct mk_record mk_ds_sample_record;

/* ---- prune: importance to masks (analysis/prune.c) -------------------------- */

/*
 * SparseBERT's pruning of an importance matrix P (n x n, one head: e.g. the
 * mean attention map or DAM's sigmoid(alpha)) to a mask of a target sparsity.
 *
 * MK_PRUNE_ENTRY (unstructured, DAM_u): keeps the k cells of largest P, with
 * k the integer nearest (1 - sparsity) * n^2 (a half rounds down, to the
 * sparser mask, also when rounding of a decimal target such as 0.7 makes it
 * 7.500000000000001: counts within 1e-9 + 1e-12 n^2 cells tie); ties in P go
 * to the lower flat index i * n + j, so the masks of several levels are
 * nested.  -0 and +0 are equal.
 *
 * MK_PRUNE_DIAGONAL (structured, DAM_s): each offset d = j - i in
 * [-(n-1), n-1] scores the mean of P along its diagonal (summed in double in
 * row order); offsets are ranked by score, ties to the smaller |d|, then the
 * negative d.  Of the 2n masks that keep the m best offsets (m = 0..2n-1),
 * the one whose sparsity is nearest the target is chosen (a tie, with the
 * same slack, goes to the sparser one, i.e. the smallest m).  With `border` the first and last rows
 * and columns are kept as well (DAM_s keeps [CLS] and [SEP]); the mask is
 * then Toeplitz on its interior (rows and columns 1..n-2) but in general not
 * as a whole.  Without it the mask is exactly Toeplitz.
 */
typedef enum mk_prune_mode { MK_PRUNE_ENTRY = 0, MK_PRUNE_DIAGONAL } mk_prune_mode;

typedef struct mk_prune_result {
	int64_t n;
	double target;          /* the sparsity asked for (NaN for Gumbel masks) */
	double sparsity;        /* achieved: 1 - kept / n^2 */
	uint64_t kept;          /* cells set, counted in the mask */
	int64_t diagonals;      /* MK_PRUNE_DIAGONAL: offsets kept (m); else -1 */
	double expected;        /* Gumbel masks: expected sparsity 1 - mean sigmoid(alpha);
				 * else NaN */
	bool toeplitz;          /* M[i][j] = M[i+1][j+1] over the whole mask */
	bool toeplitz_interior; /* the same on rows and columns 1..n-2 */
} mk_prune_result;

/* Prunes p (n x n, row-major, finite) into out, an n x n mask that is
 * overwritten.  border is for MK_PRUNE_DIAGONAL only (MK_EINVAL otherwise).
 * Errors: MK_EINVAL (sparsity outside [0, 1], a NaN or Inf in p, out of
 * another size), MK_ERANGE (n^2 >= 2^32: n at most 65535). */
int mk_prune(const float *p, int64_t n, double sparsity, mk_prune_mode mode, bool border,
	     mk_mask *out, mk_prune_result *r);
/* The same for several levels from one ranking (SparseBERT's progressive
 * pruning): out[l] and r[l] for sparsity[l], l < levels. */
int mk_prune_levels(const float *p, int64_t n, const double *sparsity, size_t levels,
		    mk_prune_mode mode, bool border, mk_mask *const *out, mk_prune_result *r);

/* SparseBERT's Gumbel-sigmoid sample of a mask from logits alpha (n x n,
 * finite): cell (i, j) is kept when sigmoid((alpha + G1 - G2) / tau) > 0.5,
 * G = -log(-log U), U uniform in (0, 1).  For tau > 0 this is alpha + G1 - G2
 * > 0, so tau does not change the mask, and P(kept) = sigmoid(alpha).  The
 * uniforms of row i come from the stream (seed, head * n + i): the mask does
 * not depend on the number of threads.  r (may be NULL) gets the achieved
 * and expected sparsity.  MK_EINVAL for tau <= 0 or not finite. */
int mk_gumbel_mask(const float *logits, int64_t n, double tau, uint64_t seed, uint64_t head,
		   mk_mask *out, mk_prune_result *r);

/* ---- maskkit prune as one call (analysis/prune_run.c) ----------------------- */

typedef struct mk_prune_run_opts {
	const double *levels;       /* target sparsities (none for gumbel) */
	size_t nlevels;
	const char *const *outputs; /* an HDF5 file for each level (one for gumbel) */
	mk_prune_mode mode;
	bool border;                /* MK_PRUNE_DIAGONAL: keep the first and last rows, columns */
	bool gumbel;                /* sample a mask from logits instead (tau, seed) */
	double tau;
	uint64_t seed;
	uint64_t max_memory;        /* for the input and every mask */
} mk_prune_run_opts;

typedef struct mk_prune_head {
	int64_t head;
	mk_prune_result r;
} mk_prune_head;

typedef struct mk_prune_level {
	double target;              /* NaN for gumbel */
	const char *output;
	mk_prune_head *heads;
	int64_t nheads;
} mk_prune_level;

typedef struct mk_prune_report {
	const char *input;          /* as given (not owned) */
	int rank;                   /* of the input: 2 ([n, n]) or 3 ([heads, n, n]) */
	int64_t heads, n;
	const char *dtype, *mode;   /* the input's; "entry", "diagonal" or "gumbel" */
	bool border, gumbel;
	double tau;
	uint64_t seed;
	mk_prune_level *levels;
	int64_t nlevels;
	mk_prune_head *all;         /* [nlevels * heads]: the levels' heads */
} mk_prune_report;

/* What `maskkit prune` does: reads the importance matrices of input (a
 * tensor, [n, n] or [heads, n, n]: mk_tensor_read), makes every level's
 * masks of every head (all held at once, checked against max_memory first)
 * and writes level l's to outputs[l] as a stack (mk_write_stack_h5: [heads,
 * n, n], or [n, n] for a 2-D input).  Errors name the input. */
int mk_prune_run(const char *input, const mk_prune_run_opts *o, mk_prune_report *out);
void mk_prune_report_release(mk_prune_report *r);
/* The result (JSON; text: input, mode): input, rank, heads, n, mode, border,
 * tau and seed (gumbel only), levels (mk_prune_level_record). */
extern const struct mk_record mk_prune_report_record;
/* A level: target (null for gumbel), output, heads (head, sparsity, kept,
 * diagonals when kept by diagonal, expected_sparsity for gumbel, toeplitz,
 * toeplitz_interior; tables show toeplitz as yes, interior or no). */
extern const struct mk_record mk_prune_level_record;

/* ---- adaptive axis masks (analysis/axis.c) ---------------------------------- */

/*
 * The learned pattern of Adaptive Axis Attention: per sample i, layer l (and
 * head a) a row indicator r and a column indicator c over the sample's len
 * real tokens give the axis mask B_jk = r_j + c_k - r_j c_k (row j is whole
 * when token j is row-wise important, column k when token k is column-wise
 * important), OR-ed with a local pattern bound at n = len.
 */
typedef struct mk_axis_opts {
	const char *rows;      /* dataset of the row indicators; NULL: "rows", else "row" */
	const char *cols;      /* of the column indicators; NULL: "cols", "columns", else "col" */
	const char *lengths;   /* dataset of the lengths in the same file; NULL: "lengths"
				* when present; "": none (every sample is N long) */
	const int64_t *given;  /* lengths from elsewhere (replace the file's), or NULL */
	int64_t ngiven;        /* entries in given: must be the number of samples */
	const char *lengths_file; /* else lengths read from this (mk_lengths_read), or NULL */
	double threshold;      /* floats: important when >= threshold (NaN is an error) */
	const char *local;     /* the local pattern's expression; NULL: "local2"; "none" */
	uint64_t seed;         /* for random terms of local that give none */
	uint64_t max_memory;   /* cap for one sample's indicators; 0 = default */
	bool by_sample;        /* fill by_sample and lengths */
	bool by_head;          /* the report (mk_axis_record) lists by_head, always filled */
	mk_progress_fn progress; /* (samples done, samples); may be NULL */
	void *parg;
} mk_axis_opts;

/* Sets the defaults above (threshold 0.5, local "local2"). */
void mk_axis_opts_init(mk_axis_opts *o);

/* Means over the (sample, layer, head) blocks of a group. */
typedef struct mk_axis_stat {
	int64_t layer, head, sample, length; /* the group's place, where it has one */
	double rho;          /* Eq. 9: mean of 1 - |B| / len^2 */
	double rho_axis;     /* the same for the axis part alone */
	double rho_local;    /* the same for the local pattern alone */
	double rows_pct;     /* 100 rows / tokens: % of real tokens row-wise important */
	double cols_pct;     /* the same for columns */
	uint64_t rows, cols, tokens; /* summed over the blocks */
	int64_t blocks;
} mk_axis_stat;

typedef struct mk_axis_result {
	const char *file;          /* as given (not owned) */
	int64_t samples, layers, heads, n; /* absent axes count 1 */
	int64_t blocks;            /* layers * heads */
	int rank;
	char *rows_name, *cols_name; /* the datasets read */
	char *lengths_name;        /* the lengths' dataset, else lengths_file; NULL: none */
	mk_dtype dtype;            /* of the row indicators: MK_DTYPE_U8, MK_DTYPE_BOOL ... */
	const char *dtype_name;    /* its name */
	bool is_float;
	double threshold;          /* with is_float: important when >= threshold */
	char *local;               /* the local pattern's canonical text; NULL for none */
	int64_t len_min, len_max;
	double len_mean;
	mk_axis_stat all;
	mk_axis_stat *by_layer;    /* [layers] */
	mk_axis_stat *by_head;     /* [layers * heads] */
	bool list_by_head;         /* opts.by_head */
	mk_axis_stat *by_sample;   /* [samples] with opts.by_sample, else NULL */
	int64_t *lengths;          /* [samples] with opts.by_sample, else NULL */
} mk_axis_result;

/*
 * Reads the indicators of path one sample at a time ([samples, N],
 * [samples, layers, N] or [samples, layers, heads, N], the same shape for
 * rows and cols; integers, booleans or floats) and measures every block.
 * Errors (MK_EFORMAT unless said): the file missing (MK_EIO) or not HDF5, a
 * missing dataset (naming what the file holds), a rank outside 2..4, rows
 * and cols of different shapes, an empty axis, a non-numeric type, a
 * damaged layout, lengths that are not one integer per sample or fall
 * outside [1, N] (naming the first bad sample), NaN, a sample that cannot
 * be read (a truncated file), a local pattern that cannot be bound at some
 * length (MK_EINVAL, naming it), N > MK_N_MAX or a sample larger than
 * max_memory (MK_ERANGE).
 */
int mk_axis_measure(const char *path, const mk_axis_opts *o, mk_axis_result *out);
void mk_axis_result_release(mk_axis_result *r);
/* The result (JSON; text: file, indicators, lengths, important, local, the
 * percentages and sparsities): file, rows_dataset, cols_dataset, dtype,
 * lengths_from, threshold (floats only), local, samples, layers, heads, n,
 * length_min, length_mean, length_max, rows_pct, cols_pct, rows, cols,
 * tokens, rho, rho_axis, rho_local, by_layer, by_head and by_sample (when
 * filled: the group's place, then the same statistics). */
extern const struct mk_record mk_axis_record;
/* A group as a table's or CSV's row: its place (layer; layer, head; sample,
 * length), rows_pct, cols_pct, rho, rho_axis, rho_local. */
extern const struct mk_record mk_axis_layer_record;
extern const struct mk_record mk_axis_head_record;
extern const struct mk_record mk_axis_sample_record;

/* Writes sample k's masks B (the axis part OR the local pattern), each
 * len x len, with mk_write_stack_h5 as [layers, heads, len, len] (layers
 * and heads 1 where the indicators lack those axes).  Errors as mk_axis_measure's, and
 * MK_EINVAL for k outside the samples. */
int mk_axis_write(const char *path, const mk_axis_opts *o, int64_t sample, const char *out);

#ifdef __cplusplus
}
#endif
#endif /* MK_DATA_H */
