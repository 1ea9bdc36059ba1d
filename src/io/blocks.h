/*
 * Block layouts (io_blocks.c), private to src/io: which key blocks of each
 * query block hold a set cell and which are full, for one mask or for each
 * head of a stack.  The blocks (JSON) and flex (.npz) formats write them.
 */
#ifndef MK_IO_BLOCKS_H
#define MK_IO_BLOCKS_H

#include "internal.h"

#define MK_BLOCKS_DEFAULT 128

/* Rows are q_len long in q_block steps, columns kv_len in kv_block steps (a
 * mask is square today: both pairs are equal).  A block cut by the end of
 * either axis is never full: FlexAttention pads it with masked-out cells. */
typedef struct mk_block_layout {
	int64_t heads, q_len, kv_len, q_block, kv_block, nb_q, nb_kv;
	size_t stride;             /* words per bit row: mk_words(nb_kv) */
	uint64_t *nonempty, *full; /* heads * nb_q bit rows each */
} mk_block_layout;

/* Sizes and allocates an empty layout of `heads` masks (block 0: 128),
 * checked against max_memory; release it with mk_block_layout_release, on
 * failure too. */
int mk_block_layout_init(mk_block_layout *L, int64_t heads, int64_t q_len, int64_t kv_len,
			 int64_t block, uint64_t max_memory);
void mk_block_layout_release(mk_block_layout *L);
/* Streams r's q_len rows (of kv_len bits) into head `head` of L. */
int mk_block_layout_scan(mk_block_layout *L, int64_t head, const mk_rows *r);

enum { MK_LAYOUT_PARTIAL, MK_LAYOUT_FULL, MK_LAYOUT_NONEMPTY };
/* Copies into dst (L->stride words) the key blocks of query block qb of a
 * head that are partial (a set cell, not full), full, or non-empty (both). */
void mk_block_layout_row(const mk_block_layout *L, int kind, int64_t head, int64_t qb,
			 uint64_t *dst);

#endif
