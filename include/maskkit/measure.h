/*
 * maskkit measurement: sparsity, row counts, structure (symmetric, causal,
 * Toeplitz) and tile statistics of a mask, streamed from an expression.
 */
#ifndef MK_MEASURE_H
#define MK_MEASURE_H

#include "core.h"
#include "expr.h"
#include "result.h"

#ifdef __cplusplus
extern "C" {
#endif

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
	int64_t n;             /* rows: queries */
	int64_t kv_len;        /* columns: keys (n when square) */
	uint64_t count;        /* |M| */
	uint64_t diag;         /* set cells on the main diagonal: each query's own key
				* position, (i, i + kv_len - n) bottom-right, (i, i)
				* top-left, when rectangular */
	double sparsity;       /* 1 - |M| / (n kv_len) */
	double sparsity_nodiag;/* 1 - |M \ I| / (n kv_len): the mask without its diagonal */
	int64_t row_min, row_max;
	double row_mean;
	int64_t empty_rows, first_empty_row; /* -1 when none */
	bool symmetric, causal, toeplitz; /* causal: j <= the query's own position */
	bool symmetric_known;  /* false when bound without need_cols and not symmetric by construction */
	size_t ntiles;
	mk_tile_stats tiles[MK_MEASURE_MAX_TILES];
	mk_align align;        /* where the queries sit (mk_expr_align; last, so the
				* fields before it keep their offsets) */
} mk_measure;

/* Streams the rows of a bound expression and fills *out (symmetry is
 * checked only when it was bound with need_cols or is symmetric by
 * construction: see symmetric_known), in O(n) memory per thread.  blocks lists
 * ntiles tile sizes.  progress (may be NULL) is called from one thread. */
int mk_measure_expr(const mk_expr *e, const int64_t *blocks, size_t ntiles,
		    mk_progress_fn progress, void *parg, mk_measure *out);

/* ---- the results as `maskkit measure`, gen and compose report them ------- */

/* A mask's measure with its expression (mk_mask_measure_record): expr,
 * params, n, kv_len, align (rectangular masks only), count, sparsity,
 * sparsity_nodiag, diagonal, rows (min, mean, max, empty, first_empty),
 * symmetric, causal, toeplitz and tiles (a list of mk_tile_stats_record:
 * block, tiles, nonempty, full, density, effective_sparsity). */
typedef struct mk_mask_measure {
	char *expr;                 /* mk_expr_text's copy (the expression may go) */
	char *params;               /* mk_expr_params' copy */
	mk_measure m;
	const mk_tile_stats *tiles; /* m.tiles, as the record's list: a copy of the struct
				     * still points at the original's */
	int64_t ntiles;             /* m.ntiles */
	const char *align;          /* mk_align_name(m.align) when rectangular, else NULL */
} mk_mask_measure;

/* mk_measure_expr of a bound expression, with its text: what `maskkit
 * measure` reports for one MASK.  Released with mk_mask_measure_release. */
int mk_measure_mask(const mk_expr *e, const int64_t *blocks, size_t ntiles,
		    mk_progress_fn progress, void *parg, mk_mask_measure *out);
void mk_mask_measure_release(mk_mask_measure *m);
extern const struct mk_record mk_mask_measure_record;
extern const struct mk_record mk_tile_stats_record;

/* A mask's summary (mk_mask_summary_record), as gen and compose --json
 * print it: expr, params, n, kv_len and align (rectangular masks only),
 * seed (an exact integer), count = |M|, sparsity, output and format (null
 * when not written). */
typedef struct mk_mask_summary {
	const char *expr, *params; /* valid while the expression lives */
	int64_t n, kv_len;
	uint64_t seed;             /* the seed it was bound with */
	uint64_t count;
	double sparsity;
	const char *output;        /* the file written, or NULL */
	const char *format;        /* its format's name (mk_format_name), or NULL */
	const char *align;         /* mk_align_name when rectangular, else NULL */
} mk_mask_summary;

/* Counts the bound expression's cells (output and format are left NULL). */
int mk_mask_summarize(const mk_expr *e, uint64_t seed, mk_progress_fn progress, void *parg,
		      mk_mask_summary *out);
extern const struct mk_record mk_mask_summary_record;

/* ---- per-head masks, measured (analysis/heads.c) --------------------------- */

/* A head's mask (mk_heads_summary's masks). */
typedef struct mk_head_mask {
	int64_t layer;        /* -1: the heads file is a flat list */
	int64_t head;
	const char *expr, *params; /* canonical, and with every parameter */
	uint64_t seed;        /* it was bound with */
	uint64_t count;       /* |M| */
	double sparsity;
} mk_head_mask;

/* What gen and compose --heads-file made (mk_heads_summary_record). */
typedef struct mk_heads_summary {
	const char *heads_file;
	int64_t layers, heads, n;
	uint64_t count;       /* |M| summed over the heads */
	double sparsity;      /* the mean over the heads */
	const char *output;   /* where the masks were written, or NULL */
	mk_head_mask *masks;
	int64_t nmasks;
} mk_heads_summary;

struct mk_heads;
/* |M| and the sparsity of each head's mask (io.h's mk_heads); output is
 * recorded as given.  Errors name the file and the head. */
int mk_heads_measure(const struct mk_heads *h, const char *output, mk_heads_summary *out);
void mk_heads_summary_release(mk_heads_summary *s);
extern const struct mk_record mk_heads_summary_record;

#ifdef __cplusplus
}
#endif
#endif /* MK_MEASURE_H */
