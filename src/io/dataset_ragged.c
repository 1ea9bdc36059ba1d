/*
 * The ragged layout of a data set, as maskkit encode --layout ragged writes
 * it: /attn [layers, T] holds in layer l's row each sample's [heads, len_i,
 * len_i] block in turn, from offsets[i] to offsets[i + 1] (/offsets, int64
 * [samples + 1]), with the attributes layout = "ragged", heads and n (the
 * longest sample).  A block is read as one stretch of a row and laid out
 * as the padded layout's heads x n x n, zeros outside len_i x len_i, so
 * that every reader sees the same block from either layout.  The offsets
 * are checked against the lengths and the data's size before any block is
 * read: a wrong one would read another sample's probabilities, or beyond.
 * Also here: float16 data (either layout) converted to float32.
 */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "dataset_internal.h"

#define DR_HEADS_MAX ((int64_t)1 << 20)

bool mk_ds_ragged_is(const mk_dataset *d)
{
	char layout[16];

	mk_h5_attr_text(d->dset, "layout", layout, sizeof layout);
	return !strcmp(layout, "ragged");
}

/* The entries of the 1-D dataset /offsets, or -1 (with the error set). */
static int64_t dr_offsets_count(mk_dataset *d)
{
	hid_t o = mk_h5_is_dataset(d->file, "offsets") ? H5Dopen2(d->file, "offsets", H5P_DEFAULT)
						       : H5I_INVALID_HID;
	hid_t sp = o >= 0 ? H5Dget_space(o) : H5I_INVALID_HID;
	hid_t t = o >= 0 ? H5Dget_type(o) : H5I_INVALID_HID;
	hsize_t dims[1] = {0};
	int64_t count = -1;

	if (o < 0)
		mk_error_set(MK_EFORMAT, "'%s': the ragged dataset '%s' has no '/offsets' (where each "
			     "sample's block starts)", d->path, d->name);
	else if (sp < 0 || t < 0 || H5Sget_simple_extent_ndims(sp) != 1 ||
		 H5Tget_class(t) != H5T_INTEGER || H5Tget_size(t) > 8 ||
		 H5Sget_simple_extent_dims(sp, dims, NULL) != 1 || dims[0] < 2 ||
		 dims[0] > (hsize_t)MK_LENGTHS_MAX + 1)
		mk_error_set(MK_EFORMAT, "'%s': '/offsets' of the ragged dataset '%s' must be a 1-D "
			     "integer dataset of samples + 1 entries (2 to %" PRId64 ")", d->path,
			     d->name, MK_LENGTHS_MAX + 1);
	else
		count = (int64_t)dims[0];
	if (t >= 0)
		H5Tclose(t);
	if (sp >= 0)
		H5Sclose(sp);
	if (o >= 0)
		H5Dclose(o);
	return count;
}

int mk_ds_ragged_shape(mk_dataset *d, const char *axes)
{
	mk_dataset_info *in = &d->info;
	hid_t space = H5Dget_space(d->dset);
	int rank = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
	int64_t heads = 0, n = 0, entries;

	if (rank == 2)
		H5Sget_simple_extent_dims(space, d->dims, NULL);
	if (space >= 0)
		H5Sclose(space);
	if (axes && strcmp(axes, "slh")) {
		mk_error_set(MK_EINVAL, "'%s': dataset '%s' is ragged, [samples, layers, heads, N, N] "
			     "without padding; its axes are 'slh', not '%s'", d->path, d->name, axes);
		return mk_error_param("axes");
	}
	if (rank != 2 || d->dims[0] == 0 || d->dims[1] == 0)
		return mk_error_set(MK_EFORMAT, "'%s': the ragged dataset '%s' must be [layers, T], "
				    "not empty", d->path, d->name);
	if (!mk_h5_attr_int(d->dset, "heads", &heads) || heads < 1 || heads > DR_HEADS_MAX)
		return mk_error_set(MK_EFORMAT, "'%s': the ragged dataset '%s' needs an integer "
				    "attribute 'heads' in 1..%" PRId64, d->path, d->name, DR_HEADS_MAX);
	if (!mk_h5_attr_int(d->dset, "n", &n) || n < 1 || n > MK_N_MAX)
		return mk_error_set(MK_EFORMAT, "'%s': the ragged dataset '%s' needs an integer "
				    "attribute 'n' (the longest sample) in 1..%" PRId64, d->path,
				    d->name, (int64_t)MK_N_MAX);
	if ((entries = dr_offsets_count(d)) < 0)
		return MK_EFORMAT;
	d->ragged = true;
	d->axis_s = 0;
	d->axis_l = 1;
	d->axis_h = 2;
	in->rank = 5;
	in->samples = entries - 1;
	in->layers = (int64_t)d->dims[0];
	in->heads = heads;
	in->n = n;
	return MK_OK;
}

/* Checks off (samples + 1 entries) against the lengths and the row's size. */
static int dr_check(const mk_dataset *d, const int64_t *off)
{
	const mk_dataset_info *in = &d->info;
	char what[1400];

	snprintf(what, sizeof what, "'%s': the ragged dataset '%s'", d->path, d->name);
	if (off[0] != 0)
		return mk_error_set(MK_EFORMAT, "%s: offsets[0] is %" PRId64 ", not 0", what, off[0]);
	for (int64_t s = 0; s < in->samples; s++) {
		uint64_t need = mk_h5_mul(mk_h5_mul((uint64_t)in->heads, (uint64_t)d->lengths[s]),
					  (uint64_t)d->lengths[s]);
		if (off[s + 1] <= off[s])
			return mk_error_set(MK_EFORMAT, "%s: offsets[%" PRId64 "] = %" PRId64 " does not "
					    "follow offsets[%" PRId64 "] = %" PRId64 " (offsets must "
					    "increase)", what, s + 1, off[s + 1], s, off[s]);
		if ((uint64_t)(off[s + 1] - off[s]) != need)
			return mk_error_set(MK_EFORMAT, "%s: sample %" PRId64 " spans %" PRId64
					    " elements (offsets[%" PRId64 "] - offsets[%" PRId64 "]), but "
					    "its length %" PRId64 " needs heads x length^2 = %" PRIu64,
					    what, s, off[s + 1] - off[s], s + 1, s, d->lengths[s], need);
	}
	if ((uint64_t)off[in->samples] != d->dims[1])
		return mk_error_set(MK_EFORMAT, "%s holds %llu elements a layer, but its offsets end "
				    "at %" PRId64 " (%s)", what, (unsigned long long)d->dims[1],
				    off[in->samples], (uint64_t)off[in->samples] > d->dims[1]
				    ? "data too short" : "data past the last sample");
	return MK_OK;
}

int mk_ds_ragged_offsets(mk_dataset *d, uint64_t max_memory)
{
	int64_t entries = d->info.samples + 1, *off = NULL;
	hsize_t dims[1] = {(hsize_t)entries};
	hid_t o = H5Dopen2(d->file, "offsets", H5P_DEFAULT);
	int ret;

	/* their bytes are counted in d->used (dataset.c's ds_sizes) */
	if (o < 0)
		ret = mk_error_set(MK_EFORMAT, "'%s': cannot open '/offsets'", d->path);
	else if ((ret = mk_h5_prepare_read(&o, d->path, "/offsets", 1, dims, &(mk_h5_reads){
			  .count = dims, .steps = {-1, -1}, .max_memory = max_memory,
			  .used = d->used})))
		;
	else if (!(off = malloc((size_t)entries * sizeof *off)))
		ret = mk_error_set(MK_ENOMEM, "out of memory");
	else if (H5Dread(o, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, off) < 0)
		ret = mk_error_set(MK_EFORMAT, "'%s': cannot read '/offsets'", d->path);
	else
		ret = dr_check(d, off);
	if (o >= 0)
		H5Dclose(o);
	if (ret)
		free(off);
	else
		d->offsets = off;
	return ret;
}

/* The block of heads x len x len at the start of d->raw spread to heads x
 * n x n, from the last row back: each row moves to an address at least its
 * own, past every row still to move. */
static void dr_spread(float *p, int64_t heads, int64_t len, int64_t n)
{
	for (int64_t h = heads; h-- > 0;) {
		memset(p + (h * n + len) * n, 0, (size_t)((n - len) * n) * sizeof *p);
		for (int64_t i = len; i-- > 0;) {
			float *to = p + (h * n + i) * n;
			memmove(to, p + (h * len + i) * len, (size_t)len * sizeof *p);
			memset(to + len, 0, (size_t)(n - len) * sizeof *p);
		}
	}
}

void mk_ds_ragged_spread(mk_dataset *d, int64_t sample)
{
	dr_spread((float *)d->raw, d->info.heads, d->lengths[sample], d->info.n);
}

/* ---- float16 --------------------------------------------------------------- */

bool mk_ds_is_half(hid_t ftype)
{
	size_t spos, epos, esize, mpos, msize;

	return H5Tget_size(ftype) == 2 && H5Tget_fields(ftype, &spos, &epos, &esize, &mpos,
							&msize) >= 0 &&
	       spos == 15 && epos == 10 && esize == 5 && mpos == 0 && msize == 10 &&
	       H5Tget_ebias(ftype) == 15 && H5Tget_norm(ftype) == H5T_NORM_IMPLIED;
}

void mk_ds_halves(uint8_t *raw, uint64_t count)
{
	const uint16_t *h = (const uint16_t *)(const void *)raw;
	float *f = (float *)(void *)raw;

	for (uint64_t k = count; k-- > 0;)
		f[k] = mk_half_to_float(h[k]);
}
