/* The row arithmetic of the CPU tiled kernels (cpu_rows.c); private to src/attn. */
#ifndef MK_CPU_ROWS_H
#define MK_CPU_ROWS_H

#include <stdint.h>
#include "attn_internal.h"

/* The hot loops are built for several vector levels (attn_internal.h). */
#define TILES_CLONES MK_ATTN_CLONES

/* Adds the negated bias nb to one score row and returns its max. */
float mk_tiles_row_max(float *row, const float *nb, int64_t cols);
/* Replaces the row by exp(row - m) and returns its sum. */
float mk_tiles_row_exp(float *row, float m, int64_t cols);
void mk_tiles_scale(float *row, float c, int64_t d);
/* One score row into a running (max m, sum l); the row becomes the weights
 * that multiply V.  Returns the factor the row's output must be rescaled by. */
float mk_tiles_row_update(float *row, const float *nb, int64_t cols, float *m, double *l);
/* Cells j0 .. j0+cols-1 of a score row whose bit in w (a bit row of stride
 * words) is clear become -inf, 32 at a time. */
void mk_tiles_mask_row(float *row, const uint64_t *w, size_t stride, int64_t j0, int64_t cols);
/* The largest squared norm of rows rows of d. */
float mk_tiles_max_norm2(const float *x, int64_t rows, int64_t d);
/* out[i] = the squared norm of row i of rows rows of d. */
void mk_tiles_norms2(const float *x, int64_t rows, int64_t d, float *out);
/* Each query's upper bound of its scores (malloc'ed; NULL when out of
 * memory); *ok says whether float32 rounding leaves them usable. */
float *mk_tiles_bounds(const mk_attn_slice *x, bool *ok);

/* 32 bits of a bit row from bit j on (bits past the row's end read 0). */
static inline uint32_t mk_tiles_bits32(const uint64_t *w, size_t stride, int64_t j)
{
	size_t k = (size_t)(j >> 6);
	unsigned sh = (unsigned)(j & 63);
	uint64_t lo = w[k] >> sh;

	if (sh > 32 && k + 1 < stride)
		lo |= w[k + 1] << (64 - sh);
	return (uint32_t)lo;
}

#endif
