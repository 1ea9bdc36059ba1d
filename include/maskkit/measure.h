/*
 * maskkit measurement: sparsity, row counts, structure (symmetric, causal,
 * Toeplitz) and tile statistics of a mask, streamed from an expression.
 */
#ifndef MK_MEASURE_H
#define MK_MEASURE_H

#include "core.h"
#include "expr.h"

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
	uint64_t diag;         /* set cells on the main diagonal: (i, i + kv_len - n),
				* each query's own position, when rectangular */
	double sparsity;       /* 1 - |M| / (n kv_len) */
	double sparsity_nodiag;/* 1 - |M \ I| / (n kv_len): the mask without its diagonal */
	int64_t row_min, row_max;
	double row_mean;
	int64_t empty_rows, first_empty_row; /* -1 when none */
	bool symmetric, causal, toeplitz; /* causal: j <= i + kv_len - n */
	bool symmetric_known;  /* false when bound without need_cols and not symmetric by construction */
	size_t ntiles;
	mk_tile_stats tiles[MK_MEASURE_MAX_TILES];
} mk_measure;

/* Streams the rows of a bound expression and fills *out (symmetry is
 * checked only when it was bound with need_cols or is symmetric by
 * construction: see symmetric_known), in O(n) memory per thread.  blocks lists
 * ntiles tile sizes.  progress (may be NULL) is called from one thread. */
int mk_measure_expr(const mk_expr *e, const int64_t *blocks, size_t ntiles,
		    mk_progress_fn progress, void *parg, mk_measure *out);

#ifdef __cplusplus
}
#endif
#endif /* MK_MEASURE_H */
