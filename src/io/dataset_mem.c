/*
 * A data set in the caller's memory ([samples, layers, heads, N, N], C
 * order: a numpy array from Python), read through the same mk_dataset as
 * a file, so that every analysis of data sets (measure, attn-stats) runs on
 * it unchanged.  Its blocks are copied into the reader's own buffer, which
 * the checks of dataset.c then clean (padding's NaN to 0): the caller's
 * memory is never written to.
 */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "dataset_internal.h"

/* Bytes of an element in memory, for the types the reader takes; 0 else. */
static size_t dm_esize(mk_dtype t)
{
	switch (t) {
	case MK_DTYPE_F32: return 4;
	case MK_DTYPE_F64: return 8;
	case MK_DTYPE_F16: return 2;
	case MK_DTYPE_BOOL: case MK_DTYPE_U8: case MK_DTYPE_I8: return 1;
	default: return 0;
	}
}

static int dm_shape(mk_dataset *d, const mk_dataset_mem *m)
{
	mk_dataset_info *in = &d->info;
	const int64_t dims[4] = {m->samples, m->layers, m->heads, m->n};
	static const char *const names[4] = {"samples", "layers", "heads", "n"};

	for (int k = 0; k < 4; k++)
		if (dims[k] < 1) {
			mk_error_set(MK_EINVAL, "'%s': %s must be positive, got %" PRId64, d->path,
				     names[k], dims[k]);
			return mk_error_param(names[k]);
		}
	if (m->n > MK_N_MAX)
		return mk_error_set(MK_ERANGE, "'%s': N = %" PRId64 " is larger than %" PRId64,
				    d->path, m->n, MK_N_MAX);
	if (!(d->fsize = dm_esize(m->dtype))) {
		mk_error_set(MK_EINVAL, "'%s': %s data; attention probabilities are float16, float32 "
			     "or float64, masks bool, uint8 or int8", d->path, mk_dtype_name(m->dtype));
		return mk_error_param("dtype");
	}
	in->samples = m->samples;
	in->layers = m->layers;
	in->heads = m->heads;
	in->n = m->n;
	in->rank = 5;
	in->dtype = m->dtype;
	in->is_float = m->dtype == MK_DTYPE_F32 || m->dtype == MK_DTYPE_F64 ||
		       m->dtype == MK_DTYPE_F16;
	d->half = m->dtype == MK_DTYPE_F16;
	d->msize = in->is_float ? sizeof(float) : 1;
	return MK_OK;
}

static int dm_lengths(mk_dataset *d, const mk_dataset_mem *m)
{
	const mk_dataset_info *in = &d->info;
	char what[1100];

	if (m->lengths && m->nlengths != in->samples) {
		mk_error_set(MK_EINVAL, "'%s': %" PRId64 " lengths for %" PRId64 " samples", d->path,
			     m->nlengths, in->samples);
		return mk_error_param("lengths");
	}
	if (!(d->lengths = malloc((size_t)in->samples * sizeof *d->lengths)))
		return mk_error_set(MK_ENOMEM, "out of memory");
	for (int64_t i = 0; i < in->samples; i++)
		d->lengths[i] = m->lengths ? m->lengths[i] : in->n;
	if (!m->lengths)
		return MK_OK;
	snprintf(d->lengths_name, sizeof d->lengths_name, "%s",
		 m->lengths_name ? m->lengths_name : "lengths");
	d->info.lengths_name = d->lengths_name;
	snprintf(what, sizeof what, "'%s'", d->path);
	if (mk_lengths_check(d->lengths, in->samples, in->n, what, " (the data's N)"))
		return mk_error_param("lengths");
	return MK_OK;
}

int mk_dataset_wrap(const mk_dataset_mem *m, uint64_t max_memory, mk_dataset **out)
{
	mk_dataset *d = calloc(1, sizeof *d);
	int ret;

	*out = NULL;
	if (!d)
		return mk_error_set(MK_ENOMEM, "out of memory");
	d->file = d->dset = d->mtype = H5I_INVALID_HID;
	d->dxpl = H5P_DEFAULT;
	d->mem = m->data;
	snprintf(d->path, sizeof d->path, "%s", m->path ? m->path : "memory");
	snprintf(d->name, sizeof d->name, "%s", m->name ? m->name : "data");
	d->info.path = d->path;
	d->info.name = d->name;
	if (!m->data)
		ret = mk_error_set(MK_EINVAL, "'%s': no data", d->path);
	else if ((ret = dm_shape(d, m)) == MK_OK && (ret = mk_ds_sizes(d, max_memory)) == MK_OK)
		ret = dm_lengths(d, m);
	if (ret) {
		mk_dataset_close(d);
		return ret;
	}
	*out = d;
	return MK_OK;
}

void mk_ds_mem_read(mk_dataset *d, int64_t sample, int64_t layer)
{
	const mk_dataset_info *in = &d->info;
	uint64_t cells = (uint64_t)in->heads * (uint64_t)in->n * (uint64_t)in->n;
	const uint8_t *src = d->mem + ((uint64_t)sample * (uint64_t)in->layers + (uint64_t)layer) *
				      cells * d->fsize;

	if (in->dtype == MK_DTYPE_F64) {
		float *dst = (float *)d->raw;
		for (uint64_t c = 0; c < cells; c++) {
			double v;
			memcpy(&v, src + c * 8, 8);
			dst[c] = (float)v; /* as HDF5 converts float64 for the file's reader */
		}
		return;
	}
	memcpy(d->raw, src, (size_t)(cells * d->fsize));
	if (d->half)
		mk_ds_halves(d->raw, cells);
}
