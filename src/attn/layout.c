/* The attention engine's view of a mask at one tile size: the bit rows, the
 * non-empty tiles listed by rows and by columns, and the entries in CSR form.
 * Built once per (mask, tile) and shared read-only by every kernel and every
 * (batch, head) slice.  Everything is O(n * stride + nnz + non-empty tiles):
 * tiles are found from the OR and AND of each row of tiles, never by testing
 * nt^2 tiles one by one, since sweeps reach n = 65536 at small tiles. */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "attn_internal.h"
#include "internal.h"

static int64_t layout_min(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* Bytes the layout holds for nnz entries and `tiles` non-empty tiles, checked
 * for overflow and against the limit.  Called before anything that size is
 * allocated: first with the counts at zero, again once they are known. */
static int layout_check_bytes(int64_t n, size_t stride, int64_t nt, int64_t nt_kv, uint64_t nnz,
			      uint64_t tiles, uint64_t max_memory)
{
	uint64_t bits, cols, tl, total;
	int ret;
	if ((ret = mk_mul_u64((uint64_t)n, stride * sizeof(uint64_t), &bits)) ||
	    (ret = mk_mul_u64(nnz, sizeof(int32_t), &cols)) ||
	    (ret = mk_mul_u64(tiles, 2 * (sizeof(int64_t) + sizeof(uint8_t)), &tl)))
		return ret;
	/* each term is below 2^62 (n <= 2^20, nnz <= n^2), so the sum cannot wrap */
	total = sizeof(mk_attn_layout) + bits + cols + tl +
		((uint64_t)n + 1 + (uint64_t)nt + (uint64_t)nt_kv + 2) * sizeof(int64_t);
	return mk_check_memory(total, max_memory, "the attention mask layout");
}

/* One row of tiles r: ORs and ANDs its bit rows into any and all (scratch of
 * 2 * stride words), then walks the set bits of any a tile at a time.
 * Returns the number of non-empty tiles; with rcol set, also lists them in
 * increasing order and flags the full ones (never a ragged edge tile, as in
 * mk_mask_tiles). */
static int64_t layout_scan_row(const mk_attn_layout *l, int64_t r, uint64_t *scratch,
			       int64_t *rcol, uint8_t *rfull)
{
	int64_t lo = r * l->tile, hi = layout_min(lo + l->tile, l->n), k = 0;
	bool tall = hi - lo == l->tile;
	const uint64_t *any = l->bits + (size_t)lo * l->stride, *all = any;
	if (hi - lo > 1) { /* a single row is its own OR and AND */
		uint64_t *ors = scratch, *ands = scratch + l->stride;
		mk_bits_zero(ors, l->stride);
		memset(ands, 0xff, l->stride * sizeof *ands);
		for (int64_t i = lo; i < hi; i++) {
			mk_bits_or(ors, l->bits + (size_t)i * l->stride, l->stride);
			mk_bits_and(ands, l->bits + (size_t)i * l->stride, l->stride);
		}
		any = ors;
		all = ands;
	}
	for (int64_t j = mk_bits_next(any, l->kv, 0, true); j < l->kv;) {
		int64_t c = j / l->tile, clo = c * l->tile, chi = layout_min(clo + l->tile, l->kv);
		if (rcol) {
			rcol[k] = c;
			rfull[k] = tall && chi - clo == l->tile && mk_bits_all_range(all, clo, chi);
		}
		k++;
		j = mk_bits_next(any, l->kv, chi, true);
	}
	return k;
}

/* Counts (fill = false: rptr[r + 1] = tiles in row r) or lists (fill = true,
 * rptr already prefix-summed) the non-empty tiles of every row of tiles. */
static int layout_rows(mk_attn_layout *l, bool fill)
{
	int err = 0;
#pragma omp parallel reduction(| : err)
	{
		uint64_t *scratch = malloc(2 * l->stride * sizeof *scratch);
		if (!scratch)
			err = 1;
#pragma omp for schedule(dynamic, 16)
		for (int64_t r = 0; r < l->nt; r++) {
			if (!scratch)
				continue;
			if (fill)
				layout_scan_row(l, r, scratch, l->rcol + l->rptr[r],
						l->rfull + l->rptr[r]);
			else
				l->rptr[r + 1] = layout_scan_row(l, r, scratch, NULL, NULL);
		}
		free(scratch);
	}
	return err ? mk_error_set(MK_ENOMEM, "out of memory for tile scratch rows") : MK_OK;
}

/* The column view is the row view transposed: a counting sort by key tile,
 * visiting query tiles in increasing order so each column's list is sorted.
 * cptr serves as the insertion cursor and is shifted back afterwards. */
static void layout_cols(mk_attn_layout *l)
{
	int64_t nt = l->nt, nc = l->nt_kv;
	memset(l->cptr, 0, ((size_t)nc + 1) * sizeof *l->cptr);
	for (int64_t k = 0; k < l->nonempty_tiles; k++)
		l->cptr[l->rcol[k] + 1]++;
	for (int64_t c = 0; c < nc; c++)
		l->cptr[c + 1] += l->cptr[c];
	for (int64_t r = 0; r < nt; r++) {
		for (int64_t k = l->rptr[r]; k < l->rptr[r + 1]; k++) {
			int64_t at = l->cptr[l->rcol[k]]++;
			l->crow[at] = r;
			l->cfull[at] = l->rfull[k];
		}
	}
	for (int64_t c = nc; c > 0; c--)
		l->cptr[c] = l->cptr[c - 1];
	l->cptr[0] = 0;
}

/* Copies the bit rows and counts the entries of each row into ptr[i + 1]. */
static void layout_copy_rows(mk_attn_layout *l, const mk_mask *m)
{
	l->ptr[0] = 0;
#pragma omp parallel for schedule(static)
	for (int64_t i = 0; i < l->n; i++) {
		uint64_t *dst = l->bits + (size_t)i * l->stride;
		memcpy(dst, mk_mask_crow(m, i), l->stride * sizeof *dst);
		l->ptr[i + 1] = (int64_t)mk_bits_count(dst, l->stride);
	}
}

/* Lists each row's columns in increasing order (ptr already prefix-summed). */
static void layout_fill_csr(mk_attn_layout *l)
{
#pragma omp parallel for schedule(dynamic, 64)
	for (int64_t i = 0; i < l->n; i++) {
		const uint64_t *row = l->bits + (size_t)i * l->stride;
		int32_t *dst = l->col + l->ptr[i];
		for (size_t w = 0; w < l->stride; w++) {
			for (uint64_t x = row[w]; x; x &= x - 1)
				*dst++ = (int32_t)(w * 64 + (size_t)__builtin_ctzll(x));
		}
	}
}

/* Turns per-row counts in p[1..len] into offsets; returns the total. */
static int64_t layout_prefix(int64_t *p, int64_t len)
{
	p[0] = 0;
	for (int64_t i = 0; i < len; i++)
		p[i + 1] += p[i];
	return p[len];
}

/* The parts whose sizes are known from n and tile alone. */
static int layout_alloc_fixed(mk_attn_layout *l)
{
	l->bits = malloc((size_t)l->n * l->stride * sizeof *l->bits);
	l->ptr = malloc(((size_t)l->n + 1) * sizeof *l->ptr);
	l->rptr = calloc((size_t)l->nt + 1, sizeof *l->rptr);
	l->cptr = calloc((size_t)l->nt_kv + 1, sizeof *l->cptr);
	if (!l->bits || !l->ptr || !l->rptr || !l->cptr)
		return mk_error_set(MK_ENOMEM, "out of memory for the layout of n = %" PRId64, l->n);
	return MK_OK;
}

/* The parts sized by the counts (at least one element each, so that an
 * empty mask never reads as a failed malloc(0)). */
static int layout_alloc_counted(mk_attn_layout *l)
{
	size_t nnz = l->nnz ? (size_t)l->nnz : 1;
	size_t tiles = l->nonempty_tiles ? (size_t)l->nonempty_tiles : 1;
	l->col = malloc(nnz * sizeof *l->col);
	l->rcol = malloc(tiles * sizeof *l->rcol);
	l->crow = malloc(tiles * sizeof *l->crow);
	l->rfull = malloc(tiles);
	l->cfull = malloc(tiles);
	if (!l->col || !l->rcol || !l->crow || !l->rfull || !l->cfull)
		return mk_error_set(MK_ENOMEM, "out of memory for %" PRIu64 " mask entries", l->nnz);
	return MK_OK;
}

static int layout_build(mk_attn_layout *l, const mk_mask *m, uint64_t max_memory)
{
	int ret;
	if ((ret = layout_check_bytes(l->n, l->stride, l->nt, l->nt_kv, 0, 0, max_memory)) ||
	    (ret = layout_alloc_fixed(l)))
		return ret;
	layout_copy_rows(l, m);
	l->nnz = (uint64_t)layout_prefix(l->ptr, l->n);
	if ((ret = layout_rows(l, false)))
		return ret;
	l->nonempty_tiles = layout_prefix(l->rptr, l->nt);
	if ((ret = layout_check_bytes(l->n, l->stride, l->nt, l->nt_kv, l->nnz,
				      (uint64_t)l->nonempty_tiles, max_memory)) ||
	    (ret = layout_alloc_counted(l)))
		return ret;
	layout_fill_csr(l);
	if ((ret = layout_rows(l, true)))
		return ret;
	layout_cols(l);
	for (int64_t i = 0; i < l->n; i++)
		l->empty_rows += l->ptr[i + 1] == l->ptr[i];
	return MK_OK;
}

int mk_attn_layout_new(const mk_mask *m, int64_t tile, uint64_t max_memory,
		       mk_attn_layout **out)
{
	mk_attn_layout *l;
	int64_t n;
	int ret;
	*out = NULL;
	if (!m)
		return mk_error_set(MK_EINVAL, "no mask given for the attention layout");
	if (tile < 1 || tile > MK_N_MAX)
		return mk_error_set(MK_EINVAL, "tile size must be in 1..%" PRId64 ", got %" PRId64,
				    MK_N_MAX, tile);
	n = mk_mask_n(m);
	/* CSR columns are int32 */
	if (n > INT32_MAX || mk_mask_cols(m) > INT32_MAX)
		return mk_error_set(MK_ERANGE, "n = %" PRId64 " is too large for the CSR layout", n);
	l = calloc(1, sizeof *l);
	if (!l)
		return mk_error_set(MK_ENOMEM, "out of memory for the attention layout");
	l->n = n;
	l->tile = tile;
	l->nt = (n + tile - 1) / tile;
	l->kv = mk_mask_cols(m);
	l->nt_kv = (l->kv + tile - 1) / tile;
	l->stride = mk_mask_stride(m);
	if ((ret = layout_build(l, m, max_memory))) {
		mk_attn_layout_free(l);
		return ret;
	}
	*out = l;
	return MK_OK;
}

void mk_attn_layout_free(mk_attn_layout *l)
{
	if (!l)
		return;
	if (l->dev && l->dev_free)
		l->dev_free(l->dev);
	free(l->bits);
	free(l->rptr);
	free(l->rcol);
	free(l->rfull);
	free(l->cptr);
	free(l->crow);
	free(l->cfull);
	free(l->ptr);
	free(l->col);
	free(l);
}

int64_t mk_attn_layout_n(const mk_attn_layout *l)
{
	return l->n;
}

int64_t mk_attn_layout_kv_len(const mk_attn_layout *l)
{
	return l->kv;
}

int64_t mk_attn_layout_tile(const mk_attn_layout *l)
{
	return l->tile;
}

uint64_t mk_attn_layout_nnz(const mk_attn_layout *l)
{
	return l->nnz;
}

double mk_attn_layout_density(const mk_attn_layout *l)
{
	return (double)l->nonempty_tiles / ((double)l->nt * (double)l->nt_kv);
}

int64_t mk_attn_layout_empty_rows(const mk_attn_layout *l)
{
	return l->empty_rows;
}
