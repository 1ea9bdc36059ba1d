/*
 * Stacks of masks in one HDF5 dataset "mask" (uint8 0/1, H5T_STD_U8LE):
 * [layers, heads, n, n], [heads, n, n] (layers 0), or, for layers = heads =
 * 0, one plain [n, n] mask that the 2-D mask reader (io_h5.c) reads back.
 * Each chunk is one row block of one mask, sized as the 2-D writer sizes
 * its chunks, so reading one (layer, head) touches only its own chunks;
 * deflated at level 1 when the library has the filter.  Attributes: "expr"
 * (UTF-8), "n", "layers", "heads" (int64), "count" (uint64, set cells over
 * all masks) and "sparsity" (double, the mean over masks of 1 - count_k/n^2).
 * Masks are streamed one chunk at a time, through a temporary file renamed
 * over the target on success.
 */
#include "config.h"
#include <inttypes.h>
#include <string.h>
#include "h5util.h"
#include "h5write.h"

struct mk_stack_job {
	const mk_stack *s;
	int rank;         /* 2, 3 or 4 */
	int64_t masks;    /* max(layers, 1) * max(heads, 1) */
	hsize_t dims[MK_H5_MASK_MAX_RANK];
};

static int mk_stack_check(const char *path, const mk_stack *s, struct mk_stack_job *job)
{
	uint64_t masks, cells;
	int ret;

	if (!s || !s->row)
		return mk_error_set(MK_EINVAL, "'%s': no masks to write", path);
	if ((ret = mk_check_n(s->n, "n")))
		return ret;
	if (s->layers < 0 || s->heads < 0 || (s->layers > 0 && s->heads == 0))
		return mk_error_set(MK_EINVAL, "'%s': a stack of %" PRId64 " layers of %" PRId64
				    " heads", path, s->layers, s->heads);
	ret = mk_mul_u64((uint64_t)(s->layers ? s->layers : 1), (uint64_t)(s->heads ? s->heads : 1),
			 &masks);
	if (ret == MK_OK)
		ret = mk_mul_u64(masks, (uint64_t)s->n * (uint64_t)s->n, &cells);
	if (ret == MK_OK && masks > (uint64_t)INT64_MAX)
		ret = MK_ERANGE;
	if (ret)
		return mk_error_set(MK_ERANGE, "'%s': %" PRId64 " x %" PRId64 " masks of n = %" PRId64
				    " are too many", path, s->layers, s->heads, s->n);
	*job = (struct mk_stack_job){.s = s, .masks = (int64_t)masks};
	if (s->layers > 0)
		job->dims[job->rank++] = (hsize_t)s->layers;
	if (s->heads > 0)
		job->dims[job->rank++] = (hsize_t)s->heads;
	job->dims[job->rank++] = (hsize_t)s->n;
	job->dims[job->rank++] = (hsize_t)s->n;
	return MK_OK;
}

void mk_stack_row(void *ctx, int64_t i, uint64_t *dst)
{
	const struct mk_stack_rows *r = ctx;
	r->s->row(r->s->ctx, r->k, i, dst);
}

/* Streams every mask; *count gets the set cells, *sparsity the mean of
 * 1 - count_k / n^2. */
static int mk_stack_write_masks(hid_t dset, const struct mk_stack_job *job, uint64_t *count,
				double *sparsity)
{
	const mk_stack *s = job->s;
	struct mk_stack_rows src = {.s = s};
	mk_rows rows = {.n = s->n, .cols = s->n, .row = mk_stack_row, .ctx = &src};
	int64_t chunk_rows = mk_h5_chunk_rows(s->n);
	double n2 = (double)s->n * (double)s->n, sum = 0.0;
	hsize_t lead[2];
	int ret = MK_OK;

	*count = 0;
	for (int64_t k = 0; k < job->masks && ret == MK_OK; k++) {
		uint64_t ck = 0;
		/* [layers, heads, ...] or [heads, ...]: k splits as layer * heads + head */
		lead[0] = (hsize_t)(job->rank == 4 ? k / s->heads : k);
		lead[1] = (hsize_t)(job->rank == 4 ? k % s->heads : 0);
		src.k = k;
		ret = mk_h5_write_rows(&rows, dset, job->rank, lead, chunk_rows, &ck);
		*count += ck;
		sum += 1.0 - (double)ck / n2;
	}
	*sparsity = sum / (double)job->masks;
	return ret;
}

static int mk_stack_write_attrs(hid_t dset, const struct mk_stack_job *job, uint64_t count,
				double sparsity)
{
	const mk_stack *s = job->s;
	int ret = mk_h5_attr_str(dset, "expr", s->expr);
	if (ret == MK_OK)
		ret = mk_h5_attr(dset, "n", H5T_STD_I64LE, H5T_NATIVE_INT64, &s->n);
	if (ret == MK_OK)
		ret = mk_h5_attr(dset, "layers", H5T_STD_I64LE, H5T_NATIVE_INT64, &s->layers);
	if (ret == MK_OK)
		ret = mk_h5_attr(dset, "heads", H5T_STD_I64LE, H5T_NATIVE_INT64, &s->heads);
	if (ret == MK_OK)
		ret = mk_h5_attr(dset, "count", H5T_STD_U64LE, H5T_NATIVE_UINT64, &count);
	if (ret == MK_OK)
		ret = mk_h5_attr(dset, "sparsity", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &sparsity);
	return ret;
}

static int mk_stack_write_tmp(const char *tmp_path, void *arg)
{
	const struct mk_stack_job *job = arg;
	hid_t dset;
	uint64_t count = 0;
	double sparsity = 0.0;
	mk_h5w w;
	int ret;

	if ((ret = mk_h5w_create(&w, tmp_path)))
		return ret;
	dset = mk_h5_create_mask(w.file, job->rank, job->dims, mk_h5_chunk_rows(job->s->n));
	if (dset < 0)
		ret = mk_error_set(MK_ESYS, "HDF5 cannot create the dataset 'mask'");
	if (ret == MK_OK)
		ret = mk_stack_write_masks(dset, job, &count, &sparsity);
	if (ret == MK_OK)
		ret = mk_stack_write_attrs(dset, job, count, sparsity);
	/* closes dset too */
	return mk_h5w_close(&w, ret);
}

int mk_write_stack_h5(const char *path, const mk_stack *s)
{
	struct mk_stack_job job;
	int ret;

	if (!path)
		return mk_error_set(MK_EINVAL, "no output file for the masks");
	ret = mk_stack_check(path, s, &job);
	if (ret == MK_OK)
		ret = mk_io_atomic(path, mk_stack_write_tmp, &job);
	/* HDF5 sees only the temporary file: name the real one */
	return mk_io_name_error(ret, path);
}
