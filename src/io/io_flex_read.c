/*
 * A FlexAttention block layout (.npz, as io_flex.c or numpy writes it) read
 * back as a mask: the cells of every non-empty block, partial or full,
 * clipped to q_len x kv_len.  A partial block counts whole: a layout does
 * not say which of its cells are set (its mask_mod does).
 *
 * Members: kv_num_blocks [1, H, nb_q] and kv_indices [1, H, nb_q, C] and
 * block_size (a scalar or (Q, KV)) are required; full_kv_num_blocks and
 * full_kv_indices come together or not at all; q_len and kv_len default to
 * nb_q * Q and C * KV, as in BlockMask.from_kv_blocks.  int32 or int64.  The
 * first count entries of a row must be distinct key blocks below
 * ceil(kv_len / KV), and no block may be both partial and full; what
 * follows a row's count is padding and is not read.  H must be 1: a mask
 * file holds one mask.
 */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "npz.h"

struct mk_flex_in {
	const char *path;
	mk_npz z;
	mk_npz_ints num, idx, full_num, full_idx, q_len, kv_len, block;
	bool has_full;
	int64_t nb_q, q_block, kv_block, nb_kv;
	uint64_t held; /* bytes of the arrays read so far (--max-memory counts them) */
};

static void mk_flex_in_release(struct mk_flex_in *in)
{
	mk_npz_ints *all[] = {&in->num, &in->idx, &in->full_num, &in->full_idx, &in->q_len,
			      &in->kv_len, &in->block};

	for (size_t k = 0; k < sizeof all / sizeof *all; k++)
		free(all[k]->v);
	mk_npz_close(&in->z);
}

/* Reads member `name` into a; *found says whether the archive has it. */
static int mk_flex_in_member(struct mk_flex_in *in, const char *name, bool required,
			     uint64_t max_memory, mk_npz_ints *a, bool *found)
{
	int ret = mk_npz_read_ints(&in->z, name, max_memory, in->held, found, a);

	in->held += a->count * sizeof *a->v;
	if (ret == MK_OK && required && !*found)
		ret = mk_error_set(MK_EFORMAT, "'%s': no member '%s' (a FlexAttention block layout "
				   "holds kv_num_blocks, kv_indices and block_size)", in->path,
				   name);
	return ret;
}

static int mk_flex_in_read(struct mk_flex_in *in, uint64_t max_memory)
{
	bool found, full_idx;
	int ret = mk_npz_open(in->path, &in->z);

	if (ret == MK_OK)
		ret = mk_flex_in_member(in, "kv_num_blocks", true, max_memory, &in->num, &found);
	if (ret == MK_OK)
		ret = mk_flex_in_member(in, "kv_indices", true, max_memory, &in->idx, &found);
	if (ret == MK_OK)
		ret = mk_flex_in_member(in, "block_size", true, max_memory, &in->block, &found);
	if (ret == MK_OK)
		ret = mk_flex_in_member(in, "full_kv_num_blocks", false, max_memory, &in->full_num,
					&in->has_full);
	if (ret == MK_OK)
		ret = mk_flex_in_member(in, "full_kv_indices", false, max_memory, &in->full_idx,
					&full_idx);
	if (ret == MK_OK && in->has_full != full_idx)
		ret = mk_error_set(MK_EFORMAT, "'%s': %s without %s (give both or neither)", in->path,
				   full_idx ? "full_kv_indices" : "full_kv_num_blocks",
				   full_idx ? "full_kv_num_blocks" : "full_kv_indices");
	if (ret == MK_OK)
		ret = mk_flex_in_member(in, "q_len", false, max_memory, &in->q_len, &found);
	if (ret == MK_OK)
		ret = mk_flex_in_member(in, "kv_len", false, max_memory, &in->kv_len, &found);
	return ret;
}

/* [1, 1, nb_q] counts and [1, 1, nb_q, C] indices, C >= 1. */
static int mk_flex_in_shape(const struct mk_flex_in *in, const char *prefix,
			    const mk_npz_ints *num, const mk_npz_ints *idx)
{
	if (num->ndim != 3 || idx->ndim != 4)
		return mk_error_set(MK_EFORMAT, "'%s': %skv_num_blocks has %d dimensions and %s"
				    "kv_indices %d, expected 3 [B, H, nb_q] and 4 [B, H, nb_q, "
				    "nb_kv]", in->path, prefix, num->ndim, prefix, idx->ndim);
	if (num->shape[0] != 1 || idx->shape[0] != 1)
		return mk_error_set(MK_EFORMAT, "'%s': batch size %" PRId64 " in %skv_num_blocks; "
				    "maskkit reads one mask (B = 1)", in->path,
				    num->shape[0] != 1 ? num->shape[0] : idx->shape[0], prefix);
	if (num->shape[1] != idx->shape[1] || num->shape[1] != in->num.shape[1] ||
	    num->shape[2] != idx->shape[2] || num->shape[2] != in->num.shape[2])
		return mk_error_set(MK_EFORMAT, "'%s': %skv_num_blocks and %skv_indices disagree "
				    "with kv_num_blocks on H or nb_q (the shapes are [B, H, nb_q] "
				    "and [B, H, nb_q, nb_kv])", in->path, prefix, prefix);
	if (num->shape[1] != 1)
		return mk_error_set(MK_EFORMAT, "'%s': a layout of %" PRId64 " heads; a mask file "
				    "holds one (H = 1)", in->path, num->shape[1]);
	if (num->shape[2] < 1 || idx->shape[3] < 1)
		return mk_error_set(MK_EFORMAT, "'%s': %skv_indices is empty", in->path, prefix);
	return MK_OK;
}

/* Element `at` of a scalar or an array of 1 to `most` elements, from 1 to
 * MK_N_MAX, into *v; `fallback` when the member is absent. */
static int mk_flex_in_size(const struct mk_flex_in *in, const char *name, const mk_npz_ints *a,
			   uint64_t at, uint64_t most, int64_t fallback, int64_t *v)
{
	if (!a->v) {
		*v = fallback;
		return mk_check_n(fallback, name);
	}
	if (a->ndim > 1 || a->count == 0 || a->count > most)
		return mk_error_set(MK_EFORMAT, "'%s': %s must be a scalar%s", in->path, name,
				    most > 1 ? " or a pair (Q, KV)" : "");
	*v = a->v[at];
	if (*v < 1 || *v > MK_N_MAX)
		return mk_error_set(MK_EFORMAT, "'%s': %s = %" PRId64 ", not from 1 to %" PRId64,
				    in->path, name, *v, MK_N_MAX);
	return MK_OK;
}

static int mk_flex_in_sizes(struct mk_flex_in *in, int64_t *q_len, int64_t *kv_len)
{
	int64_t nb_q = in->num.shape[2], cols = in->idx.shape[3];
	int ret;

	ret = mk_flex_in_size(in, "block_size", &in->block, 0, 2, 0, &in->q_block);
	if (ret == MK_OK)
		ret = mk_flex_in_size(in, "block_size", &in->block, in->block.count - 1, 2, 0,
				      &in->kv_block);
	if (ret == MK_OK && (nb_q > MK_N_MAX || cols > MK_N_MAX))
		ret = mk_error_set(MK_EFORMAT, "'%s': more than %" PRId64 " blocks", in->path,
				   MK_N_MAX);
	if (ret == MK_OK)
		ret = mk_flex_in_size(in, "q_len", &in->q_len, 0, 1, nb_q * in->q_block, q_len);
	if (ret == MK_OK)
		ret = mk_flex_in_size(in, "kv_len", &in->kv_len, 0, 1, cols * in->kv_block, kv_len);
	if (ret)
		return ret;
	in->nb_q = (*q_len + in->q_block - 1) / in->q_block;
	in->nb_kv = (*kv_len + in->kv_block - 1) / in->kv_block;
	if (in->nb_q != nb_q)
		return mk_error_set(MK_EFORMAT, "'%s': kv_num_blocks has %" PRId64 " query blocks, "
				    "but q_len = %" PRId64 " in blocks of %" PRId64 " makes %" PRId64,
				    in->path, nb_q, *q_len, in->q_block, in->nb_q);
	return MK_OK;
}

/* Marks the listed key blocks of query block qb in mine, checking them. */
static int mk_flex_in_row(const struct mk_flex_in *in, const char *prefix,
			  const mk_npz_ints *num, const mk_npz_ints *idx, int64_t qb,
			  const uint64_t *other, uint64_t *mine)
{
	int64_t count = num->v[qb], cols = idx->shape[3];
	int64_t most = cols < in->nb_kv ? cols : in->nb_kv;

	if (count < 0 || count > most)
		return mk_error_set(MK_EFORMAT, "'%s': %skv_num_blocks[0, 0, %" PRId64 "] = %" PRId64
				    ", not a count from 0 to %" PRId64, in->path, prefix, qb, count,
				    most);
	for (int64_t t = 0; t < count; t++) {
		int64_t kb = idx->v[qb * cols + t];
		if (kb < 0 || kb >= in->nb_kv)
			return mk_error_set(MK_EFORMAT, "'%s': %skv_indices[0, 0, %" PRId64 ", %"
					    PRId64 "] = %" PRId64 " is not a key block (0 to %"
					    PRId64 ")", in->path, prefix, qb, t, kb, in->nb_kv - 1);
		if (mk_bit_test(mine, kb))
			return mk_error_set(MK_EFORMAT, "'%s': key block %" PRId64 " appears twice in "
					    "%skv_indices[0, 0, %" PRId64 "]", in->path, kb, prefix,
					    qb);
		if (other && mk_bit_test(other, kb))
			return mk_error_set(MK_EFORMAT, "'%s': key block %" PRId64 " of query block %"
					    PRId64 " is both partial and full", in->path, kb, qb);
		mk_bit_set(mine, kb);
	}
	return MK_OK;
}

/* Sets the cells of query block qb's non-empty blocks in m. */
static int mk_flex_in_fill(const struct mk_flex_in *in, int64_t qb, uint64_t *partial,
			   uint64_t *full, uint64_t *cells, int64_t q_len, int64_t kv_len,
			   mk_mask *m)
{
	size_t nw = mk_words(in->nb_kv), cw = mk_words(kv_len);
	int64_t i0 = qb * in->q_block, i1 = i0 + in->q_block < q_len ? i0 + in->q_block : q_len;
	int ret;

	mk_bits_zero(partial, nw);
	mk_bits_zero(full, nw);
	mk_bits_zero(cells, cw);
	ret = mk_flex_in_row(in, "", &in->num, &in->idx, qb, NULL, partial);
	if (ret == MK_OK && in->has_full)
		ret = mk_flex_in_row(in, "full_", &in->full_num, &in->full_idx, qb, partial, full);
	if (ret)
		return ret;
	mk_bits_or(partial, full, nw);
	for (int64_t kb = 0; kb < in->nb_kv; kb++)
		if (mk_bit_test(partial, kb)) {
			int64_t j0 = kb * in->kv_block;
			mk_bits_set_range(cells, j0, j0 + in->kv_block < kv_len ? j0 + in->kv_block
										 : kv_len);
		}
	for (int64_t i = i0; i < i1; i++)
		memcpy(mk_mask_row(m, i), cells, cw * sizeof *cells);
	return MK_OK;
}

static int mk_flex_in_mask(struct mk_flex_in *in, int64_t q_len, int64_t kv_len,
			   uint64_t max_memory, mk_mask **out)
{
	size_t nw = mk_words(in->nb_kv);
	uint64_t *partial = malloc(nw * sizeof *partial), *full = malloc(nw * sizeof *full);
	uint64_t *cells = malloc(mk_words(kv_len) * sizeof *cells);
	int ret = partial && full && cells ? MK_OK : mk_error_set(MK_ENOMEM, "out of memory");

	/* the layout's arrays are held while the mask fills */
	if (ret == MK_OK)
		ret = mk_check_memory(in->held + (uint64_t)q_len * mk_words(kv_len) * 8, max_memory,
				      "the mask beside its layout's arrays");
	if (ret == MK_OK)
		ret = mk_mask_new_rect(q_len, kv_len, max_memory, out);
	for (int64_t qb = 0; qb < in->nb_q && ret == MK_OK; qb++)
		ret = mk_flex_in_fill(in, qb, partial, full, cells, q_len, kv_len, *out);
	free(partial);
	free(full);
	free(cells);
	return ret;
}

int mk_io_read_flex(const char *path, uint64_t max_memory, mk_mask **out)
{
	struct mk_flex_in in = {.path = path};
	int64_t q_len = 0, kv_len = 0;
	mk_mask *m = NULL;
	int ret = mk_flex_in_read(&in, max_memory);

	*out = NULL;
	if (ret == MK_OK)
		ret = mk_flex_in_shape(&in, "", &in.num, &in.idx);
	if (ret == MK_OK && in.has_full)
		ret = mk_flex_in_shape(&in, "full_", &in.full_num, &in.full_idx);
	if (ret == MK_OK)
		ret = mk_flex_in_sizes(&in, &q_len, &kv_len);
	if (ret == MK_OK)
		ret = mk_flex_in_mask(&in, q_len, kv_len, max_memory, &m);
	if (ret == MK_OK) {
		*out = m;
		m = NULL;
	}
	mk_mask_free(m);
	mk_flex_in_release(&in);
	return ret;
}
