/*
 * maskkit masks: packed bit rows and materialised n x n masks with their
 * tile (block) layouts.
 *
 * A mask is an n x n boolean matrix, or q_len x kv_len for a rectangular one
 * (queries x keys: decoding with a KV cache, cross-attention); row i is query
 * token i, column j is key token j.  Masks are bit-packed: each row is
 * ceil(cols/64) 64-bit words, bit j of a row lives in word j/64 at bit
 * position j%64, and bits at or beyond cols are always zero.
 */
#ifndef MK_MASK_H
#define MK_MASK_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

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
/* An all-zero rows x cols mask (q_len x kv_len), checked likewise. */
int mk_mask_new_rect(int64_t rows, int64_t cols, uint64_t max_memory, mk_mask **out);
void mk_mask_free(mk_mask *m);
int mk_mask_clone(const mk_mask *m, mk_mask **out);
/* Rows (queries): n of a square mask. */
int64_t mk_mask_n(const mk_mask *m);
/* Columns (keys); equal to mk_mask_n for a square mask. */
int64_t mk_mask_cols(const mk_mask *m);
bool mk_mask_square(const mk_mask *m);
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
/* A rows x cols mask's transpose is cols x rows. */
int mk_mask_transpose(const mk_mask *m, mk_mask **out);
uint64_t mk_mask_count(const mk_mask *m);
bool mk_mask_equal(const mk_mask *a, const mk_mask *b);
/* counts[i] = number of set bits in row i (caller supplies n entries). */
void mk_mask_row_counts(const mk_mask *m, int64_t *counts);

/* ---- tile (block) layouts ------------------------------------------------ */

enum { MK_TILE_EMPTY = 0, MK_TILE_PARTIAL = 1, MK_TILE_FULL = 2 };

/* The mask reduced to nb x nb_kv tiles of block x block cells.  When block
 * does not divide n (or cols) the last row (column) of tiles is cut short; such a tile is
 * never FULL, as in FlexAttention and block-sparse kernels, which pad it with
 * masked-out cells. */
typedef struct mk_tiles {
	int64_t n, block, nb;   /* rows, tile size, tile rows */
	int64_t cols, nb_kv;    /* columns and tile columns: n and nb when square */
	uint8_t *state; /* nb*nb_kv entries, row-major, MK_TILE_* */
} mk_tiles;

int mk_mask_tiles(const mk_mask *m, int64_t block, mk_tiles **out);
void mk_tiles_free(mk_tiles *t);
/* Number of cells of tile (bi, bj) that exist (clipped at n and cols). */
uint64_t mk_tiles_area(const mk_tiles *t, int64_t bi, int64_t bj);

#ifdef __cplusplus
}
#endif
#endif /* MK_MASK_H */
