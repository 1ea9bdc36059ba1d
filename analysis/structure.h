/* Row-level structure checks used by the streaming measurement. */
#ifndef MK_STRUCTURE_H
#define MK_STRUCTURE_H

#include <stdbool.h>
#include <stdint.h>

/* True when cur[j+1] == prev[j] for 0 <= j < n-1: rows i-1 and i agree along
 * every diagonal (the Toeplitz condition M[i][j] = M[i+1][j+1]). */
bool mk_rows_toeplitz(const uint64_t *prev, const uint64_t *cur, int64_t n);

/* Accumulates the rows of one block-row of tiles of size `block` and turns
 * them into tile counts.  A larger tile size that is a multiple of a smaller
 * one is fed the smaller one's closed block-rows instead of every row, which
 * saves a pass over each row per extra tile size. */
typedef struct mk_tile_acc {
	int64_t block, n;    /* tile size, columns (a row's length) */
	int64_t rows;        /* rows: the last block-row closes at rows - 1 */
	uint64_t *any, *all; /* OR and AND of the rows seen in the current block-row */
	uint64_t nonempty, full, cells;
	int64_t start;       /* first row of the current block-row */
	bool all_zero;       /* no tile of this block-row can be full */
	bool closed;         /* the last merge closed a block-row (any/all still hold it) */
} mk_tile_acc;

int mk_tile_acc_init(mk_tile_acc *a, int64_t block, int64_t rows, int64_t cols);
void mk_tile_acc_release(mk_tile_acc *a);
/* Merges rows [first, last] given as their OR (any) and AND (all; NULL when
 * known empty); closes the block-row when last is its final row (or rows-1). */
void mk_tile_acc_merge(mk_tile_acc *a, int64_t first, int64_t last, const uint64_t *any,
		       const uint64_t *all);

#endif
