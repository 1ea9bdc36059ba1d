/*
 * Data sets of masks and attention maps in HDF5: [samples, layers, heads,
 * N, N] with optional leading axes, read one (sample, layer) block at a
 * time through a hyperslab, so memory is bounded by heads x N x N, the
 * per-sample results and a chunk cache that decompresses each chunk once,
 * whatever the file's size; all of it is checked against max_memory from
 * the sizes the file declares, before anything is allocated or read.
 * Masks of any integer, enum (h5py's bool) or bitfield type are read in
 * their native form and turned into 0/1 bytes; floats are read as float32
 * (HDF5 converts float16 and float64).
 */
#include "config.h"
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "par.h"
#include "dataset_internal.h"
#include "h5write.h"

/* "attn": what maskkit encode writes */
static const char *const ds_default_names[] = {"masks", "mask", "attentions", "attention",
					       "attn", "probs", NULL};

/* name with a leading '/', as the listing gives names. */
static void ds_slash(char *buf, size_t cap, const char *name)
{
	snprintf(buf, cap, "%s%s", name[0] == '/' ? "" : "/", name);
}

/* Datasets of rank 2..5 other than the lengths, for the default choice. */
static int ds_candidates(mk_dataset *d, char **pick)
{
	char **all[4] = {NULL, NULL, NULL, NULL}, list[320], *names[64];
	size_t counts[4] = {0, 0, 0, 0}, total = 0;
	int ret = MK_OK;

	for (int r = 0; r < 4 && ret == MK_OK; r++)
		ret = mk_h5_datasets(d->file, d->path, r + 2, NULL, "; name the data", &all[r],
				     &counts[r]);
	if (ret == MK_EFORMAT) /* the file's datasets could not be listed */
		mk_error_param("dataset");
	for (int r = 0; r < 4 && ret == MK_OK; r++)
		for (size_t k = 0; k < counts[r]; k++)
			if (strcmp(all[r][k], d->lengths_name) && total < 64)
				names[total++] = all[r][k];
	if (ret == MK_OK && total == 0)
		ret = mk_error_set(MK_EFORMAT, "'%s': no dataset of rank 2 to 5 (masks or attention "
				   "maps [samples, layers, heads, N, N]) in the file", d->path);
	else if (ret == MK_OK && total > 1) {
		mk_h5_join(list, sizeof list, names, total);
		mk_error_set(MK_EFORMAT, "'%s': %zu datasets could be the data: %s; name one",
			     d->path, total, list);
		ret = mk_error_param("dataset");
	} else if (ret == MK_OK && !(*pick = strdup(names[0])))
		ret = mk_error_set(MK_ENOMEM, "out of memory");
	for (int r = 0; r < 4; r++)
		mk_h5_names_free(all[r]);
	return ret;
}

static int ds_find(mk_dataset *d, const char *want)
{
	char *pick = NULL;
	int ret = MK_OK;

	if (want) {
		if (!mk_h5_is_dataset(d->file, want))
			return mk_error_set(MK_EFORMAT, "'%s': no dataset '%s' in the file", d->path,
					    want);
		ds_slash(d->name, sizeof d->name, want);
	} else {
		for (const char *const *p = ds_default_names; *p && !d->name[0]; p++)
			if (mk_h5_is_dataset(d->file, *p))
				snprintf(d->name, sizeof d->name, "/%s", *p);
		if (!d->name[0] && (ret = ds_candidates(d, &pick)) == MK_OK)
			snprintf(d->name, sizeof d->name, "%s", pick);
		free(pick);
		if (ret)
			return ret;
	}
	d->dset = H5Dopen2(d->file, d->name, H5P_DEFAULT);
	if (d->dset < 0)
		return mk_error_set(MK_EFORMAT, "'%s': cannot open dataset '%s'", d->path, d->name);
	return MK_OK;
}

/* ---- shape and type ---------------------------------------------------- */

static int ds_axes(mk_dataset *d, const char *axes, int rank)
{
	static const char *const by_rank[] = {"", "h", "lh", "slh"};
	const char *a = axes ? axes : rank >= 2 && rank <= 5 ? by_rank[rank - 2] : "";

	if (rank < 2 || rank > DS_MAX_RANK)
		return mk_error_set(MK_EFORMAT, "'%s': dataset '%s' has %d dimensions; expected 2 to 5 "
				    "([samples, layers, heads, N, N] with optional leading axes)",
				    d->path, d->name, rank);
	if ((int)strlen(a) != rank - 2) {
		mk_error_set(MK_EFORMAT, "'%s': dataset '%s' has %d dimensions, but the axes '%s' "
			     "name %zu leading axes where it needs %d", d->path, d->name, rank, a,
			     strlen(a), rank - 2);
		return mk_error_param("axes");
	}
	d->axis_s = d->axis_l = d->axis_h = -1;
	for (int k = 0; a[k]; k++) {
		int *slot = a[k] == 's' ? &d->axis_s : a[k] == 'l' ? &d->axis_l
			  : a[k] == 'h' ? &d->axis_h : NULL;
		if (!slot || *slot >= 0) {
			if (!slot)
				mk_error_set(MK_EINVAL, "axes '%s': unknown axis '%c'; use s, l, h for "
					     "samples, layers, heads", a, a[k]);
			else
				mk_error_set(MK_EINVAL, "axes '%s': axis '%c' given twice", a, a[k]);
			return mk_error_param("axes");
		}
		*slot = k;
	}
	return MK_OK;
}

static int ds_shape(mk_dataset *d, const char *axes)
{
	hsize_t dims[DS_MAX_RANK + 1];
	hid_t space = H5Dget_space(d->dset);
	int rank = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1, ret;
	mk_dataset_info *in = &d->info;

	if (rank >= 0 && rank <= DS_MAX_RANK)
		H5Sget_simple_extent_dims(space, dims, NULL);
	if (space >= 0)
		H5Sclose(space);
	if (mk_ds_ragged_is(d))
		return mk_ds_ragged_shape(d, axes);
	if ((ret = ds_axes(d, axes, rank)))
		return ret;
	for (int k = 0; k < rank; k++)
		if (dims[k] == 0)
			return mk_error_set(MK_EFORMAT, "'%s': dataset '%s' has an empty dimension",
					    d->path, d->name);
	if (dims[rank - 1] != dims[rank - 2])
		return mk_error_set(MK_EFORMAT, "'%s': dataset '%s' ends in %llu x %llu; masks and "
				    "attention maps must be square (N x N)", d->path, d->name,
				    (unsigned long long)dims[rank - 2],
				    (unsigned long long)dims[rank - 1]);
	if (dims[rank - 1] > (hsize_t)MK_N_MAX)
		return mk_error_set(MK_ERANGE, "'%s': dataset '%s' has N = %llu, larger than %" PRId64,
				    d->path, d->name, (unsigned long long)dims[rank - 1], MK_N_MAX);
	in->rank = rank;
	in->n = (int64_t)dims[rank - 1];
	in->samples = d->axis_s >= 0 ? (int64_t)dims[d->axis_s] : 1;
	in->layers = d->axis_l >= 0 ? (int64_t)dims[d->axis_l] : 1;
	in->heads = d->axis_h >= 0 ? (int64_t)dims[d->axis_h] : 1;
	memcpy(d->dims, dims, (size_t)rank * sizeof *dims);
	return MK_OK;
}

static int ds_type(mk_dataset *d)
{
	hid_t ftype = H5Dget_type(d->dset);
	H5T_class_t cls = ftype >= 0 ? H5Tget_class(ftype) : H5T_NO_CLASS;
	size_t size = ftype >= 0 ? H5Tget_size(ftype) : 0;

	if (cls == H5T_INTEGER || cls == H5T_ENUM || cls == H5T_BITFIELD) {
		if (size <= 8)
			d->mtype = H5Tget_native_type(ftype, H5T_DIR_ASCEND);
	} else if (cls == H5T_FLOAT && size >= 2 && size <= 8) {
		/* libhdf5 converts float16 on a general path, 10 times slower than
		 * reading the data (a minute for encode's 1 GB of padded maps) */
		d->half = mk_ds_is_half(ftype);
		d->mtype = d->half ? mk_h5_type_f16() : H5Tcopy(H5T_NATIVE_FLOAT);
		d->info.is_float = true;
	}
	if (ftype >= 0) {
		d->info.dtype = mk_h5_dtype(ftype);
		H5Tclose(ftype);
	}
	if (d->ragged && !d->info.is_float)
		return mk_error_set(MK_EFORMAT, "'%s': the ragged dataset '%s' must hold attention "
				    "probabilities (float16/32/64)", d->path, d->name);
	if (d->mtype < 0)
		return mk_error_set(MK_EFORMAT, "'%s': dataset '%s' does not hold masks (integers or "
				    "booleans) or attention probabilities (float16/32/64)", d->path,
				    d->name);
	d->msize = d->half ? sizeof(float) : H5Tget_size(d->mtype); /* in d->raw, once converted */
	d->fsize = size;
	return MK_OK;
}

/* ---- lengths ------------------------------------------------------------- */

static int ds_lengths(mk_dataset *d, const char *want, uint64_t max_memory, bool shape_only)
{
	const mk_dataset_info *in = &d->info;
	int64_t count = 0;
	char what[1300];
	int ret;

	if ((want && (!*want || !strcmp(want, "none"))) ||
	    (!want && !mk_h5_is_dataset(d->file, "lengths"))) {
		/* a ragged block's size is its length's */
		if (d->ragged && want) {
			mk_error_set(MK_EINVAL, "'%s': the ragged dataset '%s' cannot be read without "
				     "its lengths", d->path, d->name);
			return mk_error_param("lengths");
		}
		if (d->ragged)
			return mk_error_set(MK_EFORMAT, "'%s': the ragged dataset '%s' needs the file's "
					    "'lengths', which it lacks", d->path, d->name);
		goto fixed;
	}
	ds_slash(d->lengths_name, sizeof d->lengths_name, want ? want : "lengths");
	if (!strcmp(d->lengths_name, d->name))
		return mk_error_set(MK_EINVAL, "'%s': the lengths and the data are the same dataset "
				    "'%s'", d->path, d->name);
	if (shape_only) {
		d->info.lengths_name = d->lengths_name;
		return MK_OK;
	}
	/* the lengths' bytes are counted in d->used already */
	ret = mk_h5_read_lengths_within(d->file, d->path, d->lengths_name, in->samples, max_memory,
					d->used - (uint64_t)in->samples * sizeof *d->lengths,
					&d->lengths, &count);
	if (ret)
		return ret;
	snprintf(what, sizeof what, "'%s'", d->path);
	d->info.lengths_name = d->lengths_name;
	return mk_lengths_check(d->lengths, count, in->n, what, " (the data's N)");
fixed:
	if (shape_only)
		return MK_OK;
	if (!(d->lengths = malloc((size_t)in->samples * sizeof *d->lengths)))
		return mk_error_set(MK_ENOMEM, "out of memory");
	for (int64_t i = 0; i < in->samples; i++)
		d->lengths[i] = in->n;
	return MK_OK;
}

/* ---- open, read, close --------------------------------------------------- */

/* Everything the readers keep, against the limit before anything is
 * allocated or read (a 1 KB file may declare any shape): one block's
 * buffers, per sample and per (layer, head) what DS_PER_SAMPLE and
 * DS_PER_HEAD say.  The block buffers are allocated at the first read, so
 * that opening a file only to look at its shape costs little. */
int mk_ds_sizes(mk_dataset *d, uint64_t max_memory)
{
	const mk_dataset_info *in = &d->info;
	uint64_t cap = max_memory ? max_memory : MK_DEFAULT_MAX_MEMORY, cells, bytes, total, lh;
	char what[1600];
	int ret;

	if (in->samples > MK_LENGTHS_MAX || in->layers > MK_LENGTHS_MAX)
		return mk_error_set(MK_ERANGE, "'%s': dataset '%s' claims %" PRId64 " samples and %"
				    PRId64 " layers; at most %" PRId64 " each", d->path, d->name,
				    in->samples, in->layers, MK_LENGTHS_MAX);
	if ((ret = mk_mul_u64((uint64_t)in->n * (uint64_t)in->n, (uint64_t)in->heads, &cells)) ||
	    (ret = mk_mul_u64(cells, d->msize + (in->is_float ? 0 : 1), &bytes)) ||
	    (ret = mk_check_memory(bytes, cap, "one (sample, layer) block of the data")) ||
	    (ret = mk_mul_u64((uint64_t)in->samples, (uint64_t)in->layers, &total)) ||
	    (ret = mk_mul_u64(total, cells, &total)) ||
	    (ret = mk_mul_u64(total, d->fsize, &d->info.bytes)) ||
	    (ret = mk_mul_u64((uint64_t)in->layers, (uint64_t)in->heads, &lh)))
		return ret;
	d->used = mk_h5_add(mk_h5_add(bytes, (uint64_t)in->samples * DS_PER_SAMPLE),
			    mk_h5_mul(lh, DS_PER_HEAD));
	if (d->ragged) { /* the offsets, and what is stored: no padding */
		d->used = mk_h5_add(d->used, (uint64_t)(in->samples + 1) * sizeof *d->offsets);
		d->info.bytes = mk_h5_mul(mk_h5_mul(d->dims[0], d->dims[1]), d->fsize);
	}
	snprintf(what, sizeof what, "'%s': dataset '%s' (one block of %" PRId64 " heads x %" PRId64
		 " x %" PRId64 ", and results for %" PRId64 " samples x %" PRId64 " layers x %" PRId64
		 " heads)", d->path, d->name, in->heads, in->n, in->n, in->samples, in->layers,
		 in->heads);
	return mk_check_memory(d->used, cap, what);
}

/* The layout, and the chunk cache for reads of one (sample, layer) block
 * at a time, samples outermost (as mk_par_ordered hands them out). */
static int ds_prepare(mk_dataset *d, uint64_t max_memory)
{
	const mk_dataset_info *in = &d->info;
	hsize_t count[DS_MAX_RANK];
	uint64_t cache = 0;
	int ret;

	for (int k = 0; k < in->rank; k++)
		count[k] = k == d->axis_s || k == d->axis_l ? 1 : d->dims[k];
	if (d->ragged) { /* [layers, T]: stretches of a row, at most heads x n x n long */
		uint64_t most = mk_h5_mul((uint64_t)in->heads, (uint64_t)in->n * (uint64_t)in->n);
		count[0] = 1;
		count[1] = most < d->dims[1] ? most : d->dims[1];
	}
	ret = mk_h5_prepare_read(&d->dset, d->path, d->name, d->ragged ? 2 : in->rank, d->dims,
				 &(mk_h5_reads){.count = count,
		.steps = {d->ragged ? 1 : d->axis_s >= 0 ? d->axis_s : d->axis_l,
			  d->ragged ? 0 : d->axis_s >= 0 ? d->axis_l : -1},
		.max_memory = max_memory, .used = d->used, .cache = &cache});
	d->used += cache;
	if (ret == MK_OK && cache > 0) {
		hid_t dcpl = H5Dget_create_plist(d->dset);
		d->reused = dcpl >= 0 && H5Pget_nfilters(dcpl) > 0;
		if (dcpl >= 0)
			H5Pclose(dcpl);
	}
	return ret;
}

static int ds_buffers(mk_dataset *d, uint64_t cells)
{
	if (d->raw)
		return MK_OK;
	d->raw = malloc((size_t)cells * d->msize);
	d->m = d->info.is_float ? NULL : malloc((size_t)cells);
	if (!d->raw || (!d->info.is_float && !d->m))
		return mk_error_set(MK_ENOMEM, "out of memory for a %" PRIu64 "-cell block", cells);
	return MK_OK;
}

/* What the ranks must agree on: the shape, type and lengths, and the file
 * as this rank's node sees it (its size and first 64 KiB, where HDF5 keeps
 * its superblock and root metadata).  MPI-IO takes the file's size from
 * one rank, so a shorter copy on another node would read as zeros. */
static uint64_t ds_digest(const mk_dataset *d)
{
	const mk_dataset_info *in = &d->info;
	int64_t shape[6] = {in->samples, in->layers, in->heads, in->n, in->is_float, -1};
	unsigned char head[65536];
	struct stat st;
	ssize_t got = -1;
	int fd = open(d->path, O_RDONLY);
	uint64_t h;

	if (stat(d->path, &st) == 0)
		shape[5] = (int64_t)st.st_size;
	if (fd >= 0) {
		got = pread(fd, head, sizeof head, 0);
		close(fd);
	}
	h = mk_par_hash(MK_PAR_HASH_INIT, shape, sizeof shape);
	h = mk_par_hash(h, head, got > 0 ? (size_t)got : 0);
	return d->lengths ? mk_par_hash(h, d->lengths, (size_t)in->samples * sizeof *d->lengths) : h;
}

/* After a parallel open: the ranks agree on success (so that all close the
 * file together when one failed) and on the data they see. */
static int ds_parallel(mk_dataset *d, const mk_dataset_opts *o, int ret)
{
	uint64_t digest = ret ? 0 : ds_digest(d);
	char msg[1200];

	if ((ret = mk_par_agree(ret, NULL)))
		return ret;
	snprintf(msg, sizeof msg, "'%s' differs from the copy the other ranks see (in size, first "
		 "64 KiB, shape or lengths): every node must see the same file", d->path);
	if ((ret = mk_par_same(&digest, sizeof digest, msg)))
		return ret;
	/* allocated here, where a failure is agreed: a collective read must not
	 * be left by one rank */
	ret = ds_buffers(d, (uint64_t)d->info.heads * (uint64_t)d->info.n * (uint64_t)d->info.n);
	if ((ret = mk_par_agree(ret, NULL)))
		return ret;
#ifdef H5_HAVE_PARALLEL
	/* libhdf5's collective reads of filtered chunks bypass the chunk cache
	 * and decompress a chunk again for every block that reads from it
	 * (minutes for one chunk of 8192 samples): such a dataset is read
	 * independently, which gives the same numbers */
	if (o->collective && !d->reused) {
		d->dxpl = H5Pcreate(H5P_DATASET_XFER);
		if (d->dxpl < 0 || H5Pset_dxpl_mpio(d->dxpl, H5FD_MPIO_COLLECTIVE) < 0)
			ret = mk_error_set(MK_EINTERNAL, "cannot ask HDF5 for collective reads");
		return mk_par_agree(ret, NULL);
	}
#else
	(void)o;
#endif
	return MK_OK;
}

int mk_dataset_open(const char *path, const mk_dataset_opts *o, mk_dataset **out)
{
	static const mk_dataset_opts none = {0};
	mk_dataset *d = calloc(1, sizeof *d);
	int ret;

	*out = NULL;
	if (!o)
		o = &none;
	if (!d)
		return mk_error_set(MK_ENOMEM, "out of memory");
	d->dset = d->mtype = H5I_INVALID_HID;
	d->dxpl = H5P_DEFAULT;
	snprintf(d->path, sizeof d->path, "%s", path);
	d->info.path = d->path;
	d->info.name = d->name;
	/* the lengths are never the data, even when they are the only 2-D dataset */
	ds_slash(d->lengths_name, sizeof d->lengths_name,
		 o->lengths && *o->lengths && strcmp(o->lengths, "none") ? o->lengths : "lengths");
	ret = o->parallel ? mk_h5_open_par(path, &d->file) : mk_h5_open(path, &d->file);
	if (ret == MK_OK)
		ret = ds_find(d, o->dataset);
	if (ret == MK_OK)
		ret = ds_shape(d, o->axes);
	if (ret == MK_OK)
		ret = ds_type(d);
	d->lengths_name[0] = '\0';
	if (ret == MK_OK)
		ret = mk_ds_sizes(d, o->max_memory);
	if (ret == MK_OK)
		ret = ds_prepare(d, o->max_memory);
	if (ret == MK_OK)
		ret = ds_lengths(d, o->lengths, o->max_memory, o->shape_only);
	if (ret == MK_OK && d->ragged && !o->shape_only)
		ret = mk_ds_ragged_offsets(d, o->max_memory);
	if (o->parallel && mk_par_size() > 1)
		ret = ds_parallel(d, o, ret);
	if (ret) {
		mk_dataset_close(d);
		return ret;
	}
	*out = d;
	return MK_OK;
}

void mk_dataset_close(mk_dataset *d)
{
	if (!d)
		return;
	if (d->dxpl >= 0 && d->dxpl != H5P_DEFAULT)
		H5Pclose(d->dxpl);
	if (d->mtype >= 0)
		H5Tclose(d->mtype);
	if (d->dset >= 0)
		H5Dclose(d->dset);
	if (d->file >= 0)
		H5Fclose(d->file);
	free(d->lengths);
	free(d->offsets);
	free(d->raw);
	free(d->m);
	free(d);
}

const mk_dataset_info *mk_dataset_get_info(const mk_dataset *d) { return &d->info; }

const int64_t *mk_dataset_lengths(const mk_dataset *d) { return d->lengths; }

/* Bytes of one element: nonzero anywhere means set (any integer width,
 * either byte order). */
static void ds_to_bits(const uint8_t *raw, size_t size, uint64_t cells, uint8_t *m)
{
	if (size == 1) {
		for (uint64_t c = 0; c < cells; c++)
			m[c] = raw[c] != 0;
		return;
	}
	for (uint64_t c = 0; c < cells; c++, raw += size) {
		uint8_t any = 0;
		for (size_t b = 0; b < size; b++)
			any |= raw[b];
		m[c] = any != 0;
	}
}

/* NaN and infinities in a real cell are an error (they have no place in
 * attention probabilities and would break every count); in padding they
 * become 0 (a softmax over a fully masked row gives NaN).  Finds the least
 * real value on the way. */
static int ds_check_floats(const mk_dataset *d, mk_dataset_block *b)
{
	int64_t n = b->n, len = b->len;
	float lo = 0;

	for (int64_t h = 0; h < b->heads; h++)
		for (int64_t i = 0; i < n; i++) {
			float *row = (float *)d->raw + (h * n + i) * n;
			int64_t real = i < len ? len : 0;
			bool finite = true;
			for (int64_t j = 0; j < real; j++) {
				lo = row[j] < lo ? row[j] : lo;
				finite &= isfinite(row[j]) != 0;
			}
			for (int64_t j = real; j < n; j++)
				row[j] = isfinite(row[j]) ? row[j] : 0;
			for (int64_t j = 0; !finite && j < real; j++)
				if (!isfinite(row[j]))
					return mk_error_set(MK_EFORMAT, "'%s': dataset '%s' holds %g at sample "
							    "%" PRId64 ", layer %" PRId64 ", head %" PRId64
							    ", row %" PRId64 ", column %" PRId64 " (probabilities"
							    " must be finite)", d->path, d->name, (double)row[j],
							    b->sample, b->layer, h, i, j);
		}
	b->min = lo;
	return MK_OK;
}

/* A read that fails before its H5Dread still takes part in a collective
 * one, so that the other ranks are not left inside it. */
static herr_t ds_read_none(mk_dataset *d)
{
	hid_t fspace = H5Dget_space(d->dset), mspace = H5Scopy(fspace);
	herr_t st = -1;
	unsigned char none[8];

	if (fspace >= 0 && mspace >= 0 && H5Sselect_none(fspace) >= 0 && H5Sselect_none(mspace) >= 0)
		st = H5Dread(d->dset, d->mtype, mspace, fspace, d->dxpl, none);
	if (mspace >= 0)
		H5Sclose(mspace);
	if (fspace >= 0)
		H5Sclose(fspace);
	return st;
}

static int ds_read_failed(mk_dataset *d, int ret)
{
	if (d->dxpl != H5P_DEFAULT)
		(void)ds_read_none(d); /* the first failure is the one told */
	return ret;
}

/* Block (sample, layer) from the file into d->raw, float16 converted. */
static int ds_read_h5(mk_dataset *d, int64_t sample, int64_t layer, uint64_t cells)
{
	const mk_dataset_info *in = &d->info;
	hsize_t start[DS_MAX_RANK] = {0}, count[DS_MAX_RANK];
	hid_t fspace, mspace;
	herr_t st = -1;

	for (int k = 0; k < in->rank; k++)
		count[k] = k < in->rank - 2 ? 1 : (hsize_t)in->n;
	if (d->axis_s >= 0)
		start[d->axis_s] = (hsize_t)sample;
	if (d->axis_l >= 0)
		start[d->axis_l] = (hsize_t)layer;
	if (d->axis_h >= 0)
		count[d->axis_h] = (hsize_t)in->heads;
	if (d->ragged) { /* one stretch of layer's row */
		start[0] = (hsize_t)layer;
		start[1] = (hsize_t)d->offsets[sample];
		count[0] = 1;
		count[1] = (hsize_t)(d->offsets[sample + 1] - d->offsets[sample]);
	}
	fspace = H5Dget_space(d->dset);
	/* the selection's own shape: a 1-D memory space makes libhdf5 copy
	 * element by element (15-20 times slower) */
	mspace = H5Screate_simple(d->ragged ? 2 : in->rank, count, NULL);
	if (fspace >= 0 && mspace >= 0 &&
	    H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL) >= 0)
		st = H5Dread(d->dset, d->mtype, mspace, fspace, d->dxpl, d->raw);
	else
		ds_read_failed(d, MK_OK);
	if (mspace >= 0)
		H5Sclose(mspace);
	if (fspace >= 0)
		H5Sclose(fspace);
	if (st < 0)
		return mk_error_set(MK_EFORMAT, "'%s': cannot read sample %" PRId64 ", layer %" PRId64
				    " of dataset '%s' (truncated or damaged file?)", d->path, sample,
				    layer, d->name);
	if (d->half)
		mk_ds_halves(d->raw, d->ragged ? count[1] : cells);
	return MK_OK;
}

int mk_dataset_read(mk_dataset *d, int64_t sample, int64_t layer, mk_dataset_block *out)
{
	const mk_dataset_info *in = &d->info;
	uint64_t cells = (uint64_t)in->heads * (uint64_t)in->n * (uint64_t)in->n;
	int ret;

	if (sample < 0 || sample >= in->samples || layer < 0 || layer >= in->layers)
		return ds_read_failed(d, mk_error_set(MK_EINVAL, "block (sample %" PRId64 ", layer %"
						      PRId64 ") is outside the data", sample, layer));
	if ((ret = ds_buffers(d, cells)))
		return ds_read_failed(d, ret);
	if (d->mem)
		mk_ds_mem_read(d, sample, layer);
	else if ((ret = ds_read_h5(d, sample, layer, cells)))
		return ret;
	*out = (mk_dataset_block){.sample = sample, .layer = layer, .heads = in->heads,
				  .n = in->n, .len = d->lengths[sample]};
	if (d->ragged)
		mk_ds_ragged_spread(d, sample);
	if (in->is_float) {
		out->p = (const float *)d->raw;
		return ds_check_floats(d, out);
	}
	ds_to_bits(d->raw, d->msize, cells, d->m);
	out->m = d->m;
	return MK_OK;
}

int mk_dataset_read_none(mk_dataset *d)
{
	return ds_read_none(d) < 0 ? mk_error_set(MK_EFORMAT, "'%s': an empty collective read "
						  "of '%s' failed", d->path, d->name) : MK_OK;
}
