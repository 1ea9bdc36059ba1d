/*
 * maskkit attention maps: statistics of attention probabilities per layer and
 * head (attn-stats), and what is derived from them: mean maps (importance
 * matrices for prune) and AAA-style row and column indicators (for axis).
 * They read data sets (data.h).
 */
#ifndef MK_ATTN_MAPS_H
#define MK_ATTN_MAPS_H

#include "core.h"
#include "data.h"
#include "result.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- attention statistics (analysis/attn_stats.c) --------------------------- */

/*
 * Statistics of attention probabilities P (rows: queries i, columns: keys j)
 * per layer and head, over the real len x len block of each sample only
 * (rows i < len, keys j < len; padded rows and keys never count).  Every
 * mean is cell-weighted: the cells of all samples are pooled, so a sample
 * of length len weighs len (rows) or len^2 (cells), not 1.
 *   diag     sum P[i][i] / rows                      rows = sum of len
 *   off      sum P[i][j], j != i / sum len (len - 1)
 *   first    sum P[i][0] / rows                      (the [CLS] token)
 *   last     sum P[i][len - 1] / rows                (the sample's [SEP])
 *   entropy  sum over rows of -sum_j P[i][j] ln P[i][j] / rows (nats, 0 ln 0 = 0)
 *   mass_min, mass_max  the least and greatest row sum over real keys (1 for
 *            a softmax over the real keys; less reveals mass on padding)
 *   profile[k], k = j - i in -(n-1)..n-1: sum P[i][i+k] over real cells at
 *            offset k / count[k], count[k] = sum over samples of
 *            max(len - |k|, 0); NaN where count[k] = 0
 * A mean with no cells (off when every len is 1, anything of a layer that
 * got no blocks) is NaN.  The per-layer values are the plain means over
 * heads (mass_min / mass_max: the least / greatest).
 */
typedef struct mk_attn_head_summary {
	double diag, off, first, last, entropy, mass_min, mass_max;
} mk_attn_head_summary;

typedef struct mk_attn_summary {
	int64_t layers, heads, n;
	int64_t width;               /* 2n - 1: offset k is entry k + n - 1 */
	uint64_t *blocks;            /* [layers]: blocks added (samples seen) */
	uint64_t *rows;              /* [layers]: real rows per head, the sum of len */
	uint64_t *count;             /* [layers * width]: real cells per head at each offset */
	mk_attn_head_summary *head;  /* [layers * heads], layer-major */
	mk_attn_head_summary *layer; /* [layers]: over heads */
	double *profile;             /* [layers * heads * width] */
	double *layer_profile;       /* [layers * width]: mean over heads */
} mk_attn_summary;

void mk_attn_summary_release(mk_attn_summary *r);
/* Reads every block of d (float data only, else MK_EINVAL naming the file,
 * the dataset and its type) and returns their statistics (release out with
 * mk_attn_summary_release); progress gets (samples done, samples).  Each
 * block is summed from zero and then added, in block order, so that under
 * MPI (d opened with `parallel`: collective, the blocks shared by the ranks)
 * rank 0 gets the same sums for any number of ranks; the other ranks get an
 * empty summary. */
int mk_attn_summary_dataset(mk_dataset *d, uint64_t max_memory, mk_progress_fn progress,
			    void *parg, mk_attn_summary *out);

/* ---- maskkit attn-stats as one call (analysis/attn_stats_run.c) ------------- */

typedef struct mk_attn_stats_opts {
	mk_dataset_opts d;       /* the data set (`parallel` is set: every rank calls) */
	int64_t max_offset;      /* the profile reported: offsets -k..k, k = min(this, n - 1) */
	mk_progress_fn progress; /* (samples done, samples); may be NULL */
	void *parg;
} mk_attn_stats_opts;

/* One layer's or head's statistics as reported: its profile at -k..k. */
typedef struct mk_attn_report_item {
	int64_t layer, head;        /* head -1: the layer's mean over its heads */
	mk_attn_head_summary s;
	const double *profile;      /* width entries, offsets -k..k (into sum) */
	int64_t width;
	struct mk_attn_report_item *heads; /* a layer's: its heads (into by_head), else NULL */
	int64_t nheads;
} mk_attn_report_item;

typedef struct mk_attn_report {
	char *file, *dataset, *lengths; /* lengths: its dataset, NULL for none */
	const char *dtype, *weighting;  /* as stored; "cells" */
	int64_t samples, layers, heads, n;
	uint64_t rows;                 /* real rows per head */
	int64_t len_min, len_max;
	double len_mean;
	int64_t k, width;              /* offsets -k..k: width = 2k + 1 */
	int64_t *offsets;              /* [width]: -k..k */
	const int64_t *count;          /* [width]: cells per head at each offset */
	mk_attn_report_item *per_layer; /* [layers], each with its heads */
	mk_attn_report_item *by_head;   /* [layers * heads], layer-major */
	mk_attn_report_item *table;     /* [table_rows]: each layer's heads, then its mean
					* when it has several */
	int64_t nhead, table_rows;
	mk_attn_summary sum;           /* everything, the whole profiles included */
} mk_attn_report;

/* What `maskkit attn-stats` does: opens spec (FILE.h5, or FILE.h5:/PATH naming
 * the dataset: o->d.dataset must then be NULL, else MK_EINVAL with the
 * `dataset` parameter) on every rank together and summarises it
 * (mk_attn_summary_dataset).  Collective under MPI; the result is complete on
 * rank 0 only (the others get it empty). */
int mk_attn_stats_run(const char *spec, const mk_attn_stats_opts *o, mk_attn_report *out);
void mk_attn_report_release(mk_attn_report *s);
/* The profile over offsets -k..k as CSV: offset, count, each layer's mean
 * over heads (layerL), then every head (layerL_headH); atomically. */
int mk_attn_report_write_profile(const mk_attn_report *s, const char *path);
/* The result (JSON; text: data, lengths, rows): file, dataset, dtype, lengths,
 * samples, layers, heads, n, rows, weighting, max_offset, offsets, count,
 * per_layer (layer, diag, off, first, last, entropy, mass_min, mass_max,
 * profile, heads: the same with head for layer). */
extern const struct mk_record mk_attn_report_record;
/* A row of table or by_head (tables, CSV): layer, head ("mean" in tables
 * for a layer's mean), diag, off, first, last, entropy, mass_min, mass_max
 * (not in tables). */
extern const struct mk_record mk_attn_report_row_record;

/* ---- inputs derived from attention (analysis/attn_derive.c) ---------------- */

/* The mean attention map of every (layer, head) over the samples at least m
 * tokens long, on their leading m x m block (positions 0..m-1: [CLS] and the
 * first words), an importance matrix in the manner of SparseBERT's DAM, which
 * learns one mask per head for all inputs.  *out: [layers, heads, m, m]
 * doubles (free()), *used the samples averaged.  MK_EINVAL when no sample is
 * m long or d holds masks. */
int mk_attn_mean_map(mk_dataset *d, int64_t m, uint64_t max_memory, mk_progress_fn progress,
		     void *parg, double **out, int64_t *used);

/* Row and column indicators read off attention, in the manner of Adaptive
 * Axis Attention (which learns them): for each sample, layer, head and real
 * token t of the sample's N_i, col = 1 when the attention t receives, averaged
 * over the real queries, is at least col_factor / N_i (col_factor times a
 * uniform share: a key most queries look at), row = 1 when t's attention row
 * has entropy at least row_entropy * ln N_i (a query that looks everywhere).
 * *rows, *cols: [samples, layers, heads, N] uint8, 0 past N_i (free()). */
int mk_attn_indicators(mk_dataset *d, double col_factor, double row_entropy,
		       uint64_t max_memory, mk_progress_fn progress, void *parg, uint8_t **rows,
		       uint8_t **cols);

/* What `maskkit attn-derive` does, as one call (analysis/attn_derive_run.c). */
typedef struct mk_attn_derive_opts {
	mk_dataset_opts d;       /* the data set; d.max_memory caps the work too */
	const char *mean_map;    /* the mean map of each layer L as dataset layer_L [heads, M,
				  * M] (float32) of this HDF5 file, or NULL */
	int64_t size;            /* M; 0: the median sample length */
	const char *png;         /* with mean_map: heatmaps of layer `layer`'s heads, or NULL */
	int64_t layer;
	const char *indicators;  /* 'rows' and 'cols' [samples, layers, heads, N] (float32 0/1)
				  * of this HDF5 file (mk_attn_indicators), or NULL */
	double col_factor, row_entropy;
	mk_progress_fn progress; /* (samples done, samples); may be NULL */
	void *parg;
} mk_attn_derive_opts;

typedef struct mk_attn_derive_map {
	const char *output;      /* NULL: not made */
	int64_t size, samples, layers; /* M, the samples averaged, the layers */
} mk_attn_derive_map;

typedef struct mk_attn_derive_ind {
	const char *output;      /* NULL: not made */
	double row_share, col_share; /* of the real tokens, indicated */
} mk_attn_derive_ind;

typedef struct mk_attn_derive {
	mk_attn_derive_map mean_map;
	mk_attn_derive_ind indicators;
} mk_attn_derive;

/* Opens path (the data set) and writes the outputs o names, each file
 * complete or not at all (a temporary file renamed).  MK_EINVAL with the
 * `layer` parameter, before any work, when png's layer is not in the data. */
int mk_attn_derive_run(const char *path, const mk_attn_derive_opts *o, mk_attn_derive *out);
/* The result (JSON): mean_map (output, size, samples, layers) and indicators
 * (output, row_share, col_share), each only when made. */
extern const struct mk_record mk_attn_derive_record;

#ifdef __cplusplus
}
#endif
#endif /* MK_ATTN_MAPS_H */
