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
 * range is tested in those.  The layout (blocks.h, shared with the .npz of
 * io_flex.c) is kept as two nb_q x nb_kv bit matrices per head (nb^2 / 4
 * bytes, checked against max_memory) and written at the end.
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <cJSON.h>
#include "blocks.h"

/* ---- the layout ------------------------------------------------------------ */

int mk_block_layout_init(mk_block_layout *L, int64_t heads, int64_t q_len, int64_t kv_len,
			 int64_t block, uint64_t max_memory)
{
	uint64_t rows, bytes;
	char what[96];
	int ret;

	block = block ? block : MK_BLOCKS_DEFAULT;
	*L = (mk_block_layout){.heads = heads, .q_len = q_len, .kv_len = kv_len, .q_block = block,
			 .kv_block = block};
	if (block < 1 || block > MK_N_MAX)
		return mk_error_set(MK_EINVAL, "block size must be from 1 to %" PRId64 ", got %"
				    PRId64, MK_N_MAX, block);
	L->nb_q = (q_len + L->q_block - 1) / L->q_block;
	L->nb_kv = (kv_len + L->kv_block - 1) / L->kv_block;
	L->stride = mk_words(L->nb_kv);
	snprintf(what, sizeof what, "the block layout of n = %" PRId64 " at block %" PRId64,
		 q_len, block);
	ret = mk_mul_u64((uint64_t)heads, (uint64_t)L->nb_q, &rows);
	if (ret == MK_OK)
		ret = mk_mul_u64(rows, 2 * L->stride * sizeof(uint64_t), &bytes);
	if (ret == MK_OK)
		ret = mk_check_memory(bytes, max_memory, what);
	if (ret)
		return ret;
	L->nonempty = calloc((size_t)rows * L->stride, sizeof *L->nonempty);
	L->full = calloc((size_t)rows * L->stride, sizeof *L->full);
	if (!L->nonempty || !L->full)
		return mk_error_set(MK_ENOMEM, "out of memory");
	return MK_OK;
}

void mk_block_layout_release(mk_block_layout *L)
{
	free(L->nonempty);
	free(L->full);
	L->nonempty = L->full = NULL;
}

static size_t mk_layout_at(const mk_block_layout *L, int64_t head, int64_t qb)
{
	return ((size_t)head * (size_t)L->nb_q + (size_t)qb) * L->stride;
}

void mk_block_layout_row(const mk_block_layout *L, int kind, int64_t head, int64_t qb,
			 uint64_t *dst)
{
	size_t at = mk_layout_at(L, head, qb);

	memcpy(dst, (kind == MK_LAYOUT_FULL ? L->full : L->nonempty) + at,
	       L->stride * sizeof *dst);
	if (kind == MK_LAYOUT_PARTIAL)
		mk_bits_andnot(dst, L->full + at, L->stride);
}

struct mk_layout_scan {
	mk_block_layout *L;
	const mk_rows *r;
	uint64_t *row, *any, *all; /* one row and the two accumulators */
};

/* ORs and ANDs the rows of query block qb into s->any and s->all. */
static void mk_layout_reduce(struct mk_layout_scan *s, int64_t qb)
{
	const mk_block_layout *L = s->L;
	int64_t i0 = qb * L->q_block;
	int64_t i1 = i0 + L->q_block < L->q_len ? i0 + L->q_block : L->q_len;
	size_t nw = mk_words(L->kv_len);

	mk_bits_zero(s->any, nw);
	mk_bits_zero(s->all, nw);
	mk_bits_set_range(s->all, 0, L->kv_len);
	for (int64_t i = i0; i < i1; i++) {
		s->r->row(s->r->ctx, i, s->row);
		mk_bits_or(s->any, s->row, nw);
		mk_bits_and(s->all, s->row, nw);
	}
}

/* Records the non-empty and full key blocks of query block qb of a head. */
static void mk_layout_query(struct mk_layout_scan *s, int64_t head, int64_t qb)
{
	const mk_block_layout *L = s->L;
	size_t at = mk_layout_at(L, head, qb);
	bool ragged_q = (qb + 1) * L->q_block > L->q_len;

	mk_layout_reduce(s, qb);
	for (int64_t kb = 0; kb < L->nb_kv; kb++) {
		int64_t j0 = kb * L->kv_block;
		int64_t j1 = j0 + L->kv_block < L->kv_len ? j0 + L->kv_block : L->kv_len;
		if (!mk_bits_any_range(s->any, j0, j1))
			continue;
		mk_bit_set(L->nonempty + at, kb);
		if (!ragged_q && j1 - j0 == L->kv_block && mk_bits_all_range(s->all, j0, j1))
			mk_bit_set(L->full + at, kb);
	}
}

int mk_block_layout_scan(mk_block_layout *L, int64_t head, const mk_rows *r)
{
	size_t nw = mk_words(L->kv_len);
	struct mk_layout_scan s = {.L = L, .r = r, .row = malloc(nw * sizeof *s.row),
				   .any = malloc(nw * sizeof *s.any),
				   .all = malloc(nw * sizeof *s.all)};
	int ret = MK_OK;

	if (!s.row || !s.any || !s.all)
		ret = mk_error_set(MK_ENOMEM, "out of memory");
	for (int64_t qb = 0; qb < L->nb_q && ret == MK_OK; qb++)
		mk_layout_query(&s, head, qb);
	free(s.row);
	free(s.any);
	free(s.all);
	return ret;
}


/* ---- the JSON file ----------------------------------------------------------- */

struct mk_blocks {
	const mk_rows *r;
	FILE *f;
	mk_block_layout L;
	uint64_t *list; /* one query block's key blocks */
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
			",\"num_blocks\":%" PRId64 ",\n", expr, params, b->r->n, o->seed, b->L.q_block,
			b->L.nb_q);
	cJSON_free(expr);
	cJSON_free(params);
	return ret;
}

/* Writes "<prefix>num_blocks" and "<prefix>indices" for the key blocks of
 * the kind (MK_LAYOUT_*) of each query block. */
static void mk_blocks_lists(struct mk_blocks *b, const char *prefix, int kind, bool last)
{
	size_t nw = b->L.stride;

	fprintf(b->f, "\"%snum_blocks\":[", prefix);
	for (int64_t qb = 0; qb < b->L.nb_q; qb++) {
		mk_block_layout_row(&b->L, kind, 0, qb, b->list);
		fprintf(b->f, qb ? ",%" PRIu64 : "%" PRIu64, mk_bits_count(b->list, nw));
	}
	fprintf(b->f, "],\n\"%sindices\":[\n", prefix);
	for (int64_t qb = 0; qb < b->L.nb_q; qb++) {
		int64_t count = 0;
		mk_block_layout_row(&b->L, kind, 0, qb, b->list);
		fputc('[', b->f);
		for (size_t k = 0; k < nw; k++)
			for (uint64_t x = b->list[k]; x; x &= x - 1)
				fprintf(b->f, count++ ? ",%zu" : "%zu",
					k * 64 + (size_t)__builtin_ctzll(x));
		fputs(qb + 1 < b->L.nb_q ? "],\n" : "]\n", b->f);
	}
	fputs(last ? "]}\n" : "],\n", b->f);
}

int mk_io_write_blocks(const mk_rows *r, FILE *f, const mk_write_opts *o)
{
	/* square: mk_io_check_shape refuses the others for this format */
	int64_t q_len = r->n, kv_len = r->cols;
	struct mk_blocks b = {.r = r, .f = f};
	int ret = mk_block_layout_init(&b.L, 1, q_len, kv_len, o->block, o->max_memory);

	if (ret == MK_OK && !(b.list = malloc(b.L.stride * sizeof *b.list)))
		ret = mk_error_set(MK_ENOMEM, "out of memory");
	if (ret == MK_OK)
		ret = mk_block_layout_scan(&b.L, 0, r);
	if (ret == MK_OK)
		ret = mk_blocks_header(&b, o);
	if (ret)
		goto out;
	mk_blocks_lists(&b, "kv_", MK_LAYOUT_PARTIAL, false);
	mk_blocks_lists(&b, "full_kv_", MK_LAYOUT_FULL, false);
	mk_blocks_lists(&b, "nonempty_", MK_LAYOUT_NONEMPTY, true);
	if (ferror(f))
		ret = mk_error_set(MK_ESYS, "write failed: %s", strerror(errno));
out:
	free(b.list);
	mk_block_layout_release(&b.L);
	return ret;
}
