/*
 * Block layouts in the shape of FlexAttention's BlockMask, as JSON:
 *   {"format":"maskkit-blocks","version":1,"expr":...,"params":...,"n":N,
 *    "seed":S,"block":B,"num_blocks":nb,
 *    "kv_indices":[[kb,...],...],"kv_num_blocks":[...],
 *    "full_kv_indices":[[kb,...],...],"full_kv_num_blocks":[...]}
 * For query block qb, kv_indices[qb] lists every key block holding at least
 * one set cell, in increasing order, and full_kv_indices[qb] those in which
 * every cell that exists is set (the last row and column of blocks are
 * partial when B does not divide n).
 *
 * Rows are streamed: each query block's B rows are ORed (any cell set) and
 * ANDed (every cell set) into two accumulator rows, and each key block's
 * range is tested in those.  kv_indices is written as it is found; the full
 * blocks are kept as an nb x nb bit matrix (nb^2 / 8 bytes, checked against
 * max_memory) and written after, so nothing else grows with n^2.
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <cJSON.h>
#include "internal.h"

#define MK_BLOCKS_DEFAULT 128

struct mk_blocks {
	const mk_rows *r;
	FILE *f;
	int64_t block, nb;
	uint64_t *row, *any, *all; /* one row and the two accumulators */
	int64_t *nonempty, *nfull; /* kv_num_blocks, full_kv_num_blocks */
	mk_mask *full;             /* nb x nb: full key blocks of each query block */
};

/* A JSON literal for s (null when s is NULL), escaped by cJSON. */
static char *mk_blocks_quote(const char *s)
{
	cJSON *item = s ? cJSON_CreateString(s) : cJSON_CreateNull();
	char *text = item ? cJSON_PrintUnformatted(item) : NULL;
	cJSON_Delete(item);
	return text;
}

static int mk_blocks_header(struct mk_blocks *b, const mk_write_opts *o)
{
	char *expr = mk_blocks_quote(b->r->expr), *params = mk_blocks_quote(b->r->params);
	int ret = MK_OK;

	if (!expr || !params)
		ret = mk_error_set(MK_ENOMEM, "out of memory");
	else
		fprintf(b->f, "{\"format\":\"maskkit-blocks\",\"version\":1,\"expr\":%s,"
			"\"params\":%s,\"n\":%" PRId64 ",\"seed\":%" PRIu64 ",\"block\":%" PRId64
			",\"num_blocks\":%" PRId64 ",\n", expr, params, b->r->n, o->seed, b->block,
			b->nb);
	cJSON_free(expr);
	cJSON_free(params);
	return ret;
}

/* ORs and ANDs the rows of query block qb into b->any and b->all. */
static void mk_blocks_reduce(struct mk_blocks *b, int64_t qb)
{
	int64_t n = b->r->n, i0 = qb * b->block;
	int64_t i1 = i0 + b->block < n ? i0 + b->block : n;
	size_t nw = mk_words(n);

	mk_bits_zero(b->any, nw);
	mk_bits_zero(b->all, nw);
	mk_bits_set_range(b->all, 0, n);
	for (int64_t i = i0; i < i1; i++) {
		b->r->row(b->r->ctx, i, b->row);
		mk_bits_or(b->any, b->row, nw);
		mk_bits_and(b->all, b->row, nw);
	}
}

/* Writes kv_indices[qb] and records its count and full blocks. */
static void mk_blocks_query(struct mk_blocks *b, int64_t qb)
{
	int64_t n = b->r->n, count = 0;

	mk_blocks_reduce(b, qb);
	fputc('[', b->f);
	for (int64_t kb = 0; kb < b->nb; kb++) {
		int64_t j0 = kb * b->block, j1 = j0 + b->block < n ? j0 + b->block : n;
		if (!mk_bits_any_range(b->any, j0, j1))
			continue;
		fprintf(b->f, count++ ? ",%" PRId64 : "%" PRId64, kb);
		if (mk_bits_all_range(b->all, j0, j1))
			mk_bit_set(mk_mask_row(b->full, qb), kb);
	}
	fputs(qb + 1 < b->nb ? "],\n" : "]\n", b->f);
	b->nonempty[qb] = count;
}

static void mk_blocks_counts(FILE *f, const char *key, const int64_t *v, int64_t nb,
			     const char *end)
{
	fprintf(f, "\"%s\":[", key);
	for (int64_t k = 0; k < nb; k++)
		fprintf(f, k ? ",%" PRId64 : "%" PRId64, v[k]);
	fputs(end, f);
}

static void mk_blocks_full(struct mk_blocks *b)
{
	size_t nw = mk_words(b->nb);

	fputs("\"full_kv_indices\":[\n", b->f);
	for (int64_t qb = 0; qb < b->nb; qb++) {
		const uint64_t *w = mk_mask_crow(b->full, qb);
		int64_t count = 0;
		fputc('[', b->f);
		for (size_t k = 0; k < nw; k++)
			for (uint64_t x = w[k]; x; x &= x - 1)
				fprintf(b->f, count++ ? ",%zu" : "%zu",
					k * 64 + (size_t)__builtin_ctzll(x));
		fputs(qb + 1 < b->nb ? "],\n" : "]\n", b->f);
		b->nfull[qb] = count;
	}
	fputs("],\n", b->f);
}

static int mk_blocks_alloc(struct mk_blocks *b, uint64_t max_memory)
{
	size_t nw = mk_words(b->r->n);
	uint64_t bytes;
	char what[96];
	int ret;

	snprintf(what, sizeof what, "the block layout of n = %" PRId64 " at block %" PRId64,
		 b->r->n, b->block);
	ret = mk_mul_u64((uint64_t)b->nb, mk_words(b->nb) * sizeof(uint64_t), &bytes);
	if (ret == MK_OK)
		ret = mk_check_memory(bytes, max_memory, what);
	if (ret == MK_OK)
		ret = mk_mask_new(b->nb, max_memory, &b->full);
	if (ret)
		return ret;
	b->row = malloc(nw * sizeof *b->row);
	b->any = malloc(nw * sizeof *b->any);
	b->all = malloc(nw * sizeof *b->all);
	b->nonempty = malloc((size_t)b->nb * sizeof *b->nonempty);
	b->nfull = malloc((size_t)b->nb * sizeof *b->nfull);
	if (!b->row || !b->any || !b->all || !b->nonempty || !b->nfull)
		return mk_error_set(MK_ENOMEM, "out of memory");
	return MK_OK;
}

int mk_io_write_blocks(const mk_rows *r, FILE *f, const mk_write_opts *o)
{
	struct mk_blocks b = {.r = r, .f = f, .block = o->block ? o->block : MK_BLOCKS_DEFAULT};
	int ret;

	if (b.block < 1 || b.block > MK_N_MAX)
		return mk_error_set(MK_EINVAL, "block size must be from 1 to %" PRId64 ", got %"
				    PRId64, MK_N_MAX, b.block);
	b.nb = (r->n + b.block - 1) / b.block;
	ret = mk_blocks_alloc(&b, o->max_memory);
	if (ret == MK_OK)
		ret = mk_blocks_header(&b, o);
	if (ret)
		goto out;
	fputs("\"kv_indices\":[\n", f);
	for (int64_t qb = 0; qb < b.nb && !ferror(f); qb++)
		mk_blocks_query(&b, qb);
	fputs("],\n", f);
	mk_blocks_counts(f, "kv_num_blocks", b.nonempty, b.nb, "],\n");
	mk_blocks_full(&b);
	mk_blocks_counts(f, "full_kv_num_blocks", b.nfull, b.nb, "]}\n");
	if (ferror(f))
		ret = mk_error_set(MK_EIO, "write failed: %s", strerror(errno));
out:
	free(b.row);
	free(b.any);
	free(b.all);
	free(b.nonempty);
	free(b.nfull);
	mk_mask_free(b.full);
	return ret;
}
