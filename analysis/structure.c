/* Structure of a mask seen one row at a time: diagonals and tiles. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "core.h"
#include "mask.h"
#include "structure.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"), optimize("O3")))
#endif
static uint64_t mk_shift_diff(const uint64_t *restrict prev, const uint64_t *restrict cur,
			      size_t nw)
{
	uint64_t acc = 0;
	for (size_t k = 1; k < nw; k++)
		acc |= ((prev[k] << 1) | (prev[k - 1] >> 63)) ^ cur[k];
	return acc;
}

bool mk_rows_toeplitz(const uint64_t *prev, const uint64_t *cur, int64_t n)
{
	size_t nw = mk_words(n);
	/* prev shifted one column right lines up with cur along diagonals; column 0
	 * of cur has no predecessor, and the bit shifted past n is not compared */
	uint64_t last = (n & 63) ? ((uint64_t)1 << (n & 63)) - 1 : ~(uint64_t)0;
	uint64_t first = ((prev[0] << 1) ^ cur[0]) & ~(uint64_t)1;
	if (nw == 1)
		return (first & last) == 0;
	if (first)
		return false;
	if ((((prev[nw - 1] << 1) | (prev[nw - 2] >> 63)) ^ cur[nw - 1]) & last)
		return false;
	return mk_shift_diff(prev, cur, nw - 1) == 0;
}

int mk_tile_acc_init(mk_tile_acc *a, int64_t block, int64_t rows, int64_t cols)
{
	size_t nw = mk_words(cols);
	memset(a, 0, sizeof *a);
	a->block = block;
	a->n = cols;
	a->rows = rows;
	a->any = malloc(nw * sizeof *a->any);
	a->all = malloc(nw * sizeof *a->all);
	if (!a->any || !a->all) {
		mk_tile_acc_release(a);
		return mk_error_set(MK_ENOMEM, "out of memory for tile accumulators");
	}
	return MK_OK;
}

void mk_tile_acc_release(mk_tile_acc *a)
{
	free(a->any);
	free(a->all);
	a->any = a->all = NULL;
}

static void mk_tile_acc_close(mk_tile_acc *a, int64_t rows)
{
	for (int64_t lo = 0; lo < a->n; lo += a->block) {
		int64_t hi = lo + a->block < a->n ? lo + a->block : a->n;
		if (!mk_bits_any_range(a->any, lo, hi))
			continue;
		a->nonempty++;
		a->cells += (uint64_t)rows * (uint64_t)(hi - lo);
		/* a tile cut by the end of the sequence is never full (kernels pad it) */
		if (!a->all_zero && rows == a->block && hi - lo == a->block &&
		    mk_bits_all_range(a->all, lo, hi))
			a->full++;
	}
	a->closed = true;
}

void mk_tile_acc_merge(mk_tile_acc *a, int64_t first, int64_t last, const uint64_t *any,
		       const uint64_t *all)
{
	size_t nw = mk_words(a->n);
	a->closed = false;
	if (first % a->block == 0) {
		a->start = first;
		memcpy(a->any, any, nw * sizeof *any);
		a->all_zero = !all;
		if (all)
			memcpy(a->all, all, nw * sizeof *all);
	} else {
		mk_bits_or(a->any, any, nw);
		/* once the AND is empty no tile can be full: skip the pass */
		if (!all)
			a->all_zero = true;
		else if (!a->all_zero)
			a->all_zero = mk_bits_and_any(a->all, all, nw) == 0;
	}
	if ((last + 1) % a->block == 0 || last == a->rows - 1)
		mk_tile_acc_close(a, last + 1 - a->start);
}
