/*
 * Block layouts with the fields and meaning of FlexAttention's BlockMask, as JSON:
 *   {"format":"maskkit-blocks","version":1,"expr":...,"params":...,"n":N,
 *    "seed":S,"block":B,"num_blocks":nb,
 *    "kv_num_blocks":[...],"kv_indices":[[kb,...],...],            partial blocks
 *    "full_kv_num_blocks":[...],"full_kv_indices":[[kb,...],...],  full blocks
 *    "nonempty_num_blocks":[...],"nonempty_indices":[[kb,...],...]} both
 * As in BlockMask, kv_indices and full_kv_indices are disjoint (a kernel
 * applies the mask only inside partial blocks and skips empty ones), and a
 * block cut by the end of the sequence is never full: FlexAttention pads it
 * with masked-out cells.
 *
 * Rows are streamed: each query block's B rows are ORed (any cell set) and
 * ANDed (every cell set) into two accumulator rows, and each key block's
 * range is tested in those.  The layout is kept as two nb x nb bit matrices
 * (nb^2 / 4 bytes, checked against max_memory) and written at the end.
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
	uint64_t *list;            /* one query block's key blocks */
	mk_mask *nonempty, *full;  /* nb x nb: key blocks of each query block */
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

/* Records the non-empty and full key blocks of query block qb. */
static void mk_blocks_query(struct mk_blocks *b, int64_t qb)
{
	int64_t n = b->r->n;
	bool ragged_q = (qb + 1) * b->block > n;

	mk_blocks_reduce(b, qb);
	for (int64_t kb = 0; kb < b->nb; kb++) {
		int64_t j0 = kb * b->block, j1 = j0 + b->block < n ? j0 + b->block : n;
		if (!mk_bits_any_range(b->any, j0, j1))
			continue;
		mk_bit_set(mk_mask_row(b->nonempty, qb), kb);
		if (!ragged_q && j1 - j0 == b->block && mk_bits_all_range(b->all, j0, j1))
			mk_bit_set(mk_mask_row(b->full, qb), kb);
	}
}

/* Writes "<prefix>num_blocks" and "<prefix>indices" for the rows of sel,
 * minus the rows of drop when drop is given. */
static void mk_blocks_lists(struct mk_blocks *b, const char *prefix, const mk_mask *sel,
			    const mk_mask *drop, bool last)
{
	size_t nw = mk_words(b->nb);

	fprintf(b->f, "\"%snum_blocks\":[", prefix);
	for (int64_t qb = 0; qb < b->nb; qb++) {
		memcpy(b->list, mk_mask_crow(sel, qb), nw * sizeof *b->list);
		if (drop)
			mk_bits_andnot(b->list, mk_mask_crow(drop, qb), nw);
		fprintf(b->f, qb ? ",%" PRIu64 : "%" PRIu64, mk_bits_count(b->list, nw));
	}
	fprintf(b->f, "],\n\"%sindices\":[\n", prefix);
	for (int64_t qb = 0; qb < b->nb; qb++) {
		int64_t count = 0;
		memcpy(b->list, mk_mask_crow(sel, qb), nw * sizeof *b->list);
		if (drop)
			mk_bits_andnot(b->list, mk_mask_crow(drop, qb), nw);
		fputc('[', b->f);
		for (size_t k = 0; k < nw; k++)
			for (uint64_t x = b->list[k]; x; x &= x - 1)
				fprintf(b->f, count++ ? ",%zu" : "%zu",
					k * 64 + (size_t)__builtin_ctzll(x));
		fputs(qb + 1 < b->nb ? "],\n" : "]\n", b->f);
	}
	fputs(last ? "]}\n" : "],\n", b->f);
}

static int mk_blocks_alloc(struct mk_blocks *b, uint64_t max_memory)
{
	size_t nw = mk_words(b->r->n);
	uint64_t bytes;
	char what[96];
	int ret;

	snprintf(what, sizeof what, "the block layout of n = %" PRId64 " at block %" PRId64,
		 b->r->n, b->block);
	ret = mk_mul_u64((uint64_t)b->nb, 2 * mk_words(b->nb) * sizeof(uint64_t), &bytes);
	if (ret == MK_OK)
		ret = mk_check_memory(bytes, max_memory, what);
	if (ret == MK_OK)
		ret = mk_mask_new(b->nb, max_memory, &b->full);
	if (ret == MK_OK)
		ret = mk_mask_new(b->nb, max_memory, &b->nonempty);
	if (ret)
		return ret;
	b->row = malloc(nw * sizeof *b->row);
	b->any = malloc(nw * sizeof *b->any);
	b->all = malloc(nw * sizeof *b->all);
	b->list = malloc(mk_words(b->nb) * sizeof *b->list);
	if (!b->row || !b->any || !b->all || !b->list)
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
	for (int64_t qb = 0; qb < b.nb; qb++)
		mk_blocks_query(&b, qb);
	mk_blocks_lists(&b, "kv_", b.nonempty, b.full, false);
	mk_blocks_lists(&b, "full_kv_", b.full, NULL, false);
	mk_blocks_lists(&b, "nonempty_", b.nonempty, NULL, true);
	if (ferror(f))
		ret = mk_error_set(MK_ESYS, "write failed: %s", strerror(errno));
out:
	free(b.row);
	free(b.any);
	free(b.all);
	free(b.list);
	mk_mask_free(b.nonempty);
	mk_mask_free(b.full);
	return ret;
}
