/* Row-level structure checks used by the streaming measurement. */
#ifndef MK_STRUCTURE_H
#define MK_STRUCTURE_H

#include "maskkit.h"

/* True when cur[j+1] == prev[j] for 0 <= j < n-1: rows i-1 and i agree along
 * every diagonal (the Toeplitz condition M[i][j] = M[i+1][j+1]). */
bool mk_rows_toeplitz(const uint64_t *prev, const uint64_t *cur, int64_t n);

/* Accumulates the rows of one block-row of tiles of size `block` and turns
 * them into tile counts. */
typedef struct mk_tile_acc {
	int64_t block, n;
	uint64_t *any, *all; /* OR and AND of the rows seen in the current block-row */
	uint64_t nonempty, full, cells;
	bool open, all_zero; /* all_zero: no tile of this block-row can be full */
} mk_tile_acc;

int mk_tile_acc_init(mk_tile_acc *a, int64_t block, int64_t n);
void mk_tile_acc_free(mk_tile_acc *a);
/* Adds row i; closes the block-row when i is its last row (or n-1). */
void mk_tile_acc_add(mk_tile_acc *a, int64_t i, const uint64_t *row);

#endif
