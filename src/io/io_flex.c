/*
 * FlexAttention block layouts as a NumPy .npz (--format flex): the arrays
 * that torch's BlockMask.from_kv_blocks takes, with the tile rules of the
 * blocks format (io_blocks.c computes the layout for both):
 *   kv_num_blocks       int32 [1, H, nb_q]         partial key blocks of each
 *                                                  query block
 *   kv_indices          int32 [1, H, nb_q, nb_kv]  those blocks, ascending,
 *                                                  then every other block,
 *                                                  ascending
 *   full_kv_num_blocks, full_kv_indices            the same for full blocks
 *   q_len, kv_len       int32 scalars              seq_lengths
 *   block_size          int32 [2]                  BLOCK_SIZE: (Q, KV)
 * H is 1 for a mask and the number of heads for a stack.  The padding after
 * a row's count is never read by a kernel; it is the rest of the blocks in
 * ascending order because that is what create_block_mask gives (a stable
 * descending sort of each row of the block mask), so our arrays equal
 * FlexAttention's own for the same mask.
 */
#include "config.h"
#include <assert.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "blocks.h"
#include "npz.h"

struct mk_flex {
	const mk_block_layout *L;
	int kind;          /* MK_LAYOUT_PARTIAL or MK_LAYOUT_FULL */
	int32_t values[2]; /* a scalar, or block_size */
	size_t nvalues;
	uint64_t *bits;    /* one query block's key blocks */
	uint8_t *row;      /* one row of kv_indices, little-endian */
	int32_t *order;    /* the same as numbers */
};

static void mk_flex_counts(void *ctx, mk_npz_sink *s)
{
	struct mk_flex *x = ctx;
	const mk_block_layout *L = x->L;

	for (int64_t h = 0; h < L->heads; h++)
		for (int64_t qb = 0; qb < L->nb_q; qb++) {
			mk_block_layout_row(L, x->kind, h, qb, x->bits);
			mk_npz_put_i32(s, (int32_t)mk_bits_count(x->bits, L->stride));
		}
}

static void mk_flex_store(uint8_t *p, int64_t v)
{
	for (int b = 0; b < 4; b++)
		p[b] = (uint8_t)((uint64_t)v >> (8 * b));
}

/* A row of kv_indices from the bits of its listed blocks: those ascending,
 * then the others ascending (a stable descending sort of the row, as
 * create_block_mask has it).  Returns how many are listed. */
static int32_t mk_flex_order(const uint64_t *bits, size_t stride, int64_t nb_kv, int32_t *dst)
{
	size_t listed = 0, rest = (size_t)mk_bits_count(bits, stride);
	int32_t count = (int32_t)rest;

	for (int64_t kb = 0; kb < nb_kv; kb++)
		dst[mk_bit_test(bits, kb) ? listed++ : rest++] = (int32_t)kb;
	return count;
}

static void mk_flex_indices(void *ctx, mk_npz_sink *s)
{
	struct mk_flex *x = ctx;
	const mk_block_layout *L = x->L;

	for (int64_t h = 0; h < L->heads; h++)
		for (int64_t qb = 0; qb < L->nb_q; qb++) {
			mk_block_layout_row(L, x->kind, h, qb, x->bits);
			mk_flex_order(x->bits, L->stride, L->nb_kv, x->order);
			for (int64_t kb = 0; kb < L->nb_kv; kb++)
				mk_flex_store(x->row + 4 * kb, x->order[kb]);
			mk_npz_put(s, x->row, 4 * (size_t)L->nb_kv);
		}
}

static void mk_flex_values(void *ctx, mk_npz_sink *s)
{
	struct mk_flex *x = ctx;
	for (size_t k = 0; k < x->nvalues; k++)
		mk_npz_put_i32(s, x->values[k]);
}

/* The two lists of one kind: "<prefix>kv_num_blocks", "<prefix>kv_indices". */
static int mk_flex_lists(mk_npz_writer *z, struct mk_flex *x, const char *prefix, int kind)
{
	const mk_block_layout *L = x->L;
	int64_t shape[4] = {1, L->heads, L->nb_q, L->nb_kv};
	char name[32];
	int ret;

	x->kind = kind;
	snprintf(name, sizeof name, "%skv_num_blocks", prefix);
	ret = mk_npz_add(z, name, "<i4", 4, 3, shape, mk_flex_counts, x);
	snprintf(name, sizeof name, "%skv_indices", prefix);
	return ret ? ret : mk_npz_add(z, name, "<i4", 4, 4, shape, mk_flex_indices, x);
}

static int mk_flex_value(mk_npz_writer *z, struct mk_flex *x, const char *name, int64_t a,
			 int64_t b, int ndim)
{
	int64_t shape[1] = {2};

	x->values[0] = (int32_t)a;
	x->values[1] = (int32_t)b;
	x->nvalues = ndim ? 2 : 1;
	return mk_npz_add(z, name, "<i4", 4, ndim, shape, mk_flex_values, x);
}

static int mk_flex_write(const mk_block_layout *L, FILE *f)
{
	struct mk_flex x = {.L = L, .bits = malloc(L->stride * sizeof *x.bits),
			    .row = malloc(4 * (size_t)L->nb_kv),
			    .order = malloc(sizeof(int32_t) * (size_t)L->nb_kv)};
	mk_npz_writer z = {.f = f};
	int ret = x.bits && x.row && x.order ? MK_OK : mk_error_set(MK_ENOMEM, "out of memory");

	/* every length and index fits in an int32 */
	assert(L->q_len <= MK_N_MAX && L->kv_len <= MK_N_MAX && MK_N_MAX <= INT32_MAX);
	if (ret == MK_OK)
		ret = mk_flex_lists(&z, &x, "", MK_LAYOUT_PARTIAL);
	if (ret == MK_OK)
		ret = mk_flex_lists(&z, &x, "full_", MK_LAYOUT_FULL);
	if (ret == MK_OK)
		ret = mk_flex_value(&z, &x, "q_len", L->q_len, 0, 0);
	if (ret == MK_OK)
		ret = mk_flex_value(&z, &x, "kv_len", L->kv_len, 0, 0);
	if (ret == MK_OK)
		ret = mk_flex_value(&z, &x, "block_size", L->q_block, L->kv_block, 1);
	ret = mk_npz_finish(&z, ret);
	free(x.bits);
	free(x.row);
	free(x.order);
	return ret;
}

int mk_io_write_flex(const mk_rows *r, FILE *f, const mk_write_opts *o)
{
	int64_t q_len = r->n, kv_len = r->cols;
	mk_block_layout L;
	int ret = mk_block_layout_init(&L, 1, q_len, kv_len, o->block, o->max_memory);

	if (ret == MK_OK)
		ret = mk_block_layout_scan(&L, 0, r);
	if (ret == MK_OK)
		ret = mk_flex_write(&L, f);
	mk_block_layout_release(&L);
	return ret;
}

/* ---- in memory: mk_expr_flex_blocks ------------------------------------------ */

void mk_flex_blocks_free(mk_flex_blocks *b)
{
	if (!b)
		return;
	free(b->kv_num_blocks);
	free(b->kv_indices);
	free(b->full_kv_num_blocks);
	free(b->full_kv_indices);
	free(b);
}

/* Both kinds' counts and ordered rows from the layout's bits. */
static int mk_flex_fill(const mk_block_layout *L, mk_flex_blocks *b)
{
	uint64_t *bits = malloc(L->stride * sizeof *bits);

	if (!bits)
		return mk_error_set(MK_ENOMEM, "out of memory");
	for (int64_t qb = 0; qb < L->nb_q; qb++) {
		size_t at = (size_t)qb * (size_t)L->nb_kv;
		mk_block_layout_row(L, MK_LAYOUT_PARTIAL, 0, qb, bits);
		b->kv_num_blocks[qb] = mk_flex_order(bits, L->stride, L->nb_kv, b->kv_indices + at);
		mk_block_layout_row(L, MK_LAYOUT_FULL, 0, qb, bits);
		b->full_kv_num_blocks[qb] =
			mk_flex_order(bits, L->stride, L->nb_kv, b->full_kv_indices + at);
	}
	free(bits);
	return MK_OK;
}

int mk_io_flex_blocks(const mk_rows *r, int64_t block, uint64_t max_memory,
		      mk_flex_blocks **out)
{
	mk_block_layout L;
	mk_flex_blocks *b = NULL;
	uint64_t cells, bytes;
	int ret = mk_block_layout_init(&L, 1, r->n, r->cols, block, max_memory);

	*out = NULL;
	/* the arrays: two [nb_q, nb_kv] and two [nb_q] of int32, beside the bits */
	if (ret == MK_OK && !(ret = mk_mul_u64((uint64_t)L.nb_q, (uint64_t)L.nb_kv + 1, &cells)) &&
	    !(ret = mk_mul_u64(cells, 2 * sizeof(int32_t), &bytes)))
		ret = mk_check_memory(bytes, max_memory, "the BlockMask arrays");
	if (ret == MK_OK && !(b = calloc(1, sizeof *b)))
		ret = mk_error_set(MK_ENOMEM, "out of memory");
	if (ret == MK_OK) {
		*b = (mk_flex_blocks){.q_len = r->n, .kv_len = r->cols, .block = L.q_block,
				      .nb_q = L.nb_q, .nb_kv = L.nb_kv};
		b->kv_num_blocks = malloc((size_t)L.nb_q * sizeof(int32_t));
		b->full_kv_num_blocks = malloc((size_t)L.nb_q * sizeof(int32_t));
		b->kv_indices = malloc((size_t)(L.nb_q * L.nb_kv) * sizeof(int32_t));
		b->full_kv_indices = malloc((size_t)(L.nb_q * L.nb_kv) * sizeof(int32_t));
		if (!b->kv_num_blocks || !b->full_kv_num_blocks || !b->kv_indices ||
		    !b->full_kv_indices)
			ret = mk_error_set(MK_ENOMEM, "out of memory");
	}
	if (ret == MK_OK)
		ret = mk_block_layout_scan(&L, 0, r);
	if (ret == MK_OK)
		ret = mk_flex_fill(&L, b);
	mk_block_layout_release(&L);
	if (ret)
		mk_flex_blocks_free(b);
	else
		*out = b;
	return ret;
}

/* ---- stacks: one head per mask ------------------------------------------------ */

static int mk_flex_write_file(void *file, void *arg)
{
	return mk_flex_write(arg, file);
}

int mk_write_stack_flex(const char *path, const mk_stack *s, const mk_write_opts *o)
{
	int64_t q_len = s->n, kv_len = s->n; /* square today */
	mk_block_layout L;
	int ret;

	assert(path && s && o);
	if (s->layers > 1)
		return mk_error_set(MK_EINVAL, "'%s': a FlexAttention block mask holds the heads of "
				    "one layer, not %" PRId64 " layers: write one layer at a time",
				    path, s->layers);
	ret = mk_block_layout_init(&L, s->heads, q_len, kv_len, o->block, o->max_memory);
	for (int64_t k = 0; k < s->heads && ret == MK_OK; k++) {
		struct mk_stack_rows head = {.s = s, .k = k};
		mk_rows rows = {.n = s->n, .cols = s->n, .row = mk_stack_row, .ctx = &head,
				.expr = s->expr};
		ret = mk_block_layout_scan(&L, k, &rows);
	}
	if (ret == MK_OK)
		ret = mk_write_atomic(path, mk_flex_write_file, &L);
	mk_block_layout_release(&L);
	return ret;
}
