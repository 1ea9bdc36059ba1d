/* The block kernel's work plan on a GPU, computed on the host in plain C (so
 * it is tested without a device).  Row of tiles r (rows r*tile .. of the
 * layout) is cut into blocks of `bm` rows, "sub-blocks"; each sub-block
 * visits the tiles of its row's list.  A row with far more tiles than the
 * others (global tokens) is split into pieces of at most `piece` tiles whose
 * partial (max, sum, output) states go to slots and are merged afterwards,
 * so that one long row does not keep a multiprocessor busy alone. */
#ifndef MK_BLOCK_PLAN_H
#define MK_BLOCK_PLAN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MK_BLOCK_MIN_PIECE 8 /* rows are split only above this many tiles */

typedef struct mk_block_item {
	int32_t r, sub;  /* row of tiles, and the bm-row block within it */
	int64_t t0, t1;  /* positions in the row's list: ptr[r] + t0 .. ptr[r] + t1 - 1 */
	int64_t slot;    /* -1: the item writes the result; else its piece's slot */
} mk_block_item;

typedef struct mk_block_split {
	int32_t r, sub;
	int64_t slot0, slot1; /* the pieces' slots, slot0 .. slot1 - 1 */
} mk_block_split;

typedef struct mk_block_plan {
	mk_block_item *items;
	int64_t nitems;
	mk_block_split *splits;
	int64_t nsplits, nslots;
} mk_block_plan;

/* The most tiles one item takes for the tile lists ptr[0..nt]: twice the
 * mean row, at least MK_BLOCK_MIN_PIECE. */
int64_t mk_block_plan_piece(const int64_t *ptr, int64_t nt);
/* Rows lo .. hi - 1 of sub-block sub of row of tiles r (n rows in all). */
void mk_block_plan_rows(int64_t n, int64_t tile, int64_t bm, int64_t r, int64_t sub,
			int64_t *lo, int64_t *hi);
/* The plan for nt = ceil(n / tile) rows of tiles, rows with no tile
 * included (their items have t0 = t1: they write empty results).  Returns
 * MK_OK, MK_EINVAL (bad sizes) or MK_ENOMEM, with a message. */
int mk_block_plan_new(const int64_t *ptr, int64_t n, int64_t tile, int64_t bm, int64_t piece,
		      mk_block_plan *out);
void mk_block_plan_release(mk_block_plan *p); /* NULL-safe; zeroes *p */

#ifdef __cplusplus
}
#endif

#endif
