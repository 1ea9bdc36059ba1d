/* Materialised bit-packed masks and their tile layouts. */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "core.h"
#include "mask.h"

struct mk_mask {
	int64_t n;     /* rows (queries) */
	int64_t cols;  /* columns (keys); n for a square mask */
	size_t stride; /* words per row */
	uint64_t *bits;
};

int mk_mask_new_rect(int64_t rows, int64_t cols, uint64_t max_memory, mk_mask **out)
{
	mk_mask *m;
	uint64_t bytes;
	int ret;
	*out = NULL;
	if ((ret = mk_check_n(rows, "q_len")) || (ret = mk_check_n(cols, "kv_len")))
		return ret;
	if ((ret = mk_mul_u64((uint64_t)rows, mk_words(cols) * sizeof(uint64_t), &bytes)))
		return ret;
	if ((ret = mk_check_memory(bytes, max_memory, "a materialised mask")))
		return ret;
	m = malloc(sizeof *m);
	if (!m)
		return mk_error_set(MK_ENOMEM, "out of memory for a %" PRId64 " x %" PRId64
				    " mask", rows, cols);
	m->n = rows;
	m->cols = cols;
	m->stride = mk_words(cols);
	m->bits = calloc((size_t)rows * m->stride, sizeof *m->bits);
	if (!m->bits) {
		free(m);
		return mk_error_set(MK_ENOMEM, "out of memory for a %" PRId64 " x %" PRId64
				    " mask", rows, cols);
	}
	*out = m;
	return MK_OK;
}

int mk_mask_new(int64_t n, uint64_t max_memory, mk_mask **out)
{
	int ret = mk_check_n(n, "n");
	return ret ? ret : mk_mask_new_rect(n, n, max_memory, out);
}

void mk_mask_free(mk_mask *m)
{
	if (!m)
		return;
	free(m->bits);
	free(m);
}

int mk_mask_clone(const mk_mask *m, mk_mask **out)
{
	int ret = mk_mask_new_rect(m->n, m->cols, UINT64_MAX, out);
	if (ret)
		return ret;
	memcpy((*out)->bits, m->bits, (size_t)m->n * m->stride * sizeof *m->bits);
	return MK_OK;
}

int64_t mk_mask_n(const mk_mask *m) { return m->n; }
int64_t mk_mask_cols(const mk_mask *m) { return m->cols; }
bool mk_mask_square(const mk_mask *m) { return m->n == m->cols; }
size_t mk_mask_stride(const mk_mask *m) { return m->stride; }
uint64_t *mk_mask_row(mk_mask *m, int64_t i) { return m->bits + (size_t)i * m->stride; }
const uint64_t *mk_mask_crow(const mk_mask *m, int64_t i) { return m->bits + (size_t)i * m->stride; }

void mk_mask_set(mk_mask *m, int64_t i, int64_t j, bool v)
{
	uint64_t *w = mk_mask_row(m, i) + (j >> 6);
	uint64_t bit = (uint64_t)1 << (j & 63);
	*w = v ? (*w | bit) : (*w & ~bit);
}

bool mk_mask_test(const mk_mask *m, int64_t i, int64_t j)
{
	return mk_bit_test(mk_mask_crow(m, i), j);
}

static int mk_mask_same_size(const mk_mask *a, const mk_mask *b)
{
	if (a->n == a->cols && b->n == b->cols && a->n != b->n)
		return mk_error_set(MK_EINVAL, "mask sizes differ: n = %" PRId64 " and n = %"
				    PRId64, a->n, b->n);
	if (a->n != b->n || a->cols != b->cols)
		return mk_error_set(MK_EINVAL, "mask sizes differ: %" PRId64 " x %" PRId64
				    " and %" PRId64 " x %" PRId64, a->n, a->cols, b->n, b->cols);
	return MK_OK;
}

#define MK_MASK_BINOP(name, fn)                                          \
	int name(mk_mask *dst, const mk_mask *src)                       \
	{                                                                \
		int ret = mk_mask_same_size(dst, src);                   \
		if (ret)                                                 \
			return ret;                                      \
		fn(dst->bits, src->bits, (size_t)dst->n * dst->stride); \
		return MK_OK;                                            \
	}
MK_MASK_BINOP(mk_mask_or, mk_bits_or)
MK_MASK_BINOP(mk_mask_and, mk_bits_and)
MK_MASK_BINOP(mk_mask_andnot, mk_bits_andnot)

void mk_mask_not(mk_mask *m)
{
	for (int64_t i = 0; i < m->n; i++)
		mk_bits_not(mk_mask_row(m, i), m->cols);
}

/* Transposes 64x64 bit blocks (Hacker's Delight's recursive swap), so a
 * transpose costs O(n^2/64) word operations, not n^2 bit tests. */
static void mk_transpose64(uint64_t a[64])
{
	uint64_t m = 0x00000000ffffffffULL;
	for (int j = 32; j != 0; j >>= 1, m ^= m << j) {
		for (int k = 0; k < 64; k = ((k | j) + 1) & ~j) {
			uint64_t t = ((a[k] >> j) ^ a[k | j]) & m;
			a[k] ^= t << j;
			a[k | j] ^= t;
		}
	}
}

int mk_mask_transpose(const mk_mask *m, mk_mask **out)
{
	mk_mask *t;
	int ret = mk_mask_new_rect(m->cols, m->n, UINT64_MAX, &t);
	size_t nbi = mk_words(m->n), nbj = m->stride;
	if (ret)
		return ret;
#pragma omp parallel for schedule(static)
	for (size_t bi = 0; bi < nbi; bi++) {
		uint64_t blk[64];
		for (size_t bj = 0; bj < nbj; bj++) {
			for (int r = 0; r < 64; r++) {
				int64_t i = (int64_t)(bi * 64) + r;
				blk[r] = i < m->n ? mk_mask_crow(m, i)[bj] : 0;
			}
			mk_transpose64(blk);
			for (int r = 0; r < 64; r++) {
				int64_t j = (int64_t)(bj * 64) + r;
				if (j < m->cols)
					mk_mask_row(t, j)[bi] = blk[r];
			}
		}
	}
	*out = t;
	return MK_OK;
}

uint64_t mk_mask_count(const mk_mask *m)
{
	return mk_bits_count(m->bits, (size_t)m->n * m->stride);
}

bool mk_mask_equal(const mk_mask *a, const mk_mask *b)
{
	return a->n == b->n && a->cols == b->cols &&
	       memcmp(a->bits, b->bits, (size_t)a->n * a->stride * sizeof *a->bits) == 0;
}

void mk_mask_row_counts(const mk_mask *m, int64_t *counts)
{
	for (int64_t i = 0; i < m->n; i++)
		counts[i] = (int64_t)mk_bits_count(mk_mask_crow(m, i), m->stride);
}

int mk_mask_tiles(const mk_mask *m, int64_t block, mk_tiles **out)
{
	mk_tiles *t;
	uint64_t *any = NULL, *all = NULL;
	int ret = MK_OK;
	*out = NULL;
	if (block <= 0)
		return mk_error_set(MK_EINVAL, "tile size must be positive, got %" PRId64, block);
	t = calloc(1, sizeof *t);
	any = malloc(m->stride * sizeof *any);
	all = malloc(m->stride * sizeof *all);
	if (!t || !any || !all) {
		ret = mk_error_set(MK_ENOMEM, "out of memory for tiles");
		goto out;
	}
	t->n = m->n;
	t->cols = m->cols;
	t->block = block;
	t->nb = (m->n + block - 1) / block;
	t->nb_kv = (m->cols + block - 1) / block;
	t->state = calloc((size_t)(t->nb * t->nb_kv), 1);
	if (!t->state) {
		ret = mk_error_set(MK_ENOMEM, "out of memory for %" PRId64 " x %" PRId64 " tiles",
				   t->nb, t->nb_kv);
		goto out;
	}
	for (int64_t bi = 0; bi < t->nb; bi++) {
		int64_t hi = bi * block + block < m->n ? bi * block + block : m->n;
		mk_bits_zero(any, m->stride);
		memset(all, 0xff, m->stride * sizeof *all);
		for (int64_t i = bi * block; i < hi; i++) {
			mk_bits_or(any, mk_mask_crow(m, i), m->stride);
			mk_bits_and(all, mk_mask_crow(m, i), m->stride);
		}
		for (int64_t bj = 0; bj < t->nb_kv; bj++) {
			int64_t lo = bj * block, e = lo + block < m->cols ? lo + block : m->cols;
			uint8_t s = MK_TILE_EMPTY;
			bool whole = hi - bi * block == block && e - lo == block;
			if (mk_bits_any_range(any, lo, e))
				s = whole && mk_bits_all_range(all, lo, e) ? MK_TILE_FULL
									   : MK_TILE_PARTIAL;
			t->state[bi * t->nb_kv + bj] = s;
		}
	}
out:
	free(any);
	free(all);
	if (ret) {
		mk_tiles_free(t);
		return ret;
	}
	*out = t;
	return MK_OK;
}

void mk_tiles_free(mk_tiles *t)
{
	if (!t)
		return;
	free(t->state);
	free(t);
}

uint64_t mk_tiles_area(const mk_tiles *t, int64_t bi, int64_t bj)
{
	int64_t h = t->n - bi * t->block, w = t->cols - bj * t->block;
	if (h > t->block)
		h = t->block;
	if (w > t->block)
		w = t->block;
	return (uint64_t)h * (uint64_t)w;
}
