/*
 * What a read of an HDF5 dataset may trust, checked before it: the layout
 * (chunks within the dataset's maximum extent, no external raw files, data
 * that was written), and what reading costs (one decompressed chunk and a
 * chunk cache that decompresses each chunk once, against --max-memory);
 * and the lengths datasets read that way.
 */
#include "config.h"
#include <assert.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "h5util.h"

/* ---- lengths ------------------------------------------------------------ */

int mk_h5_read_lengths(hid_t file, const char *path, const char *name, int64_t want,
		       int64_t **out, int64_t *count)
{
	return mk_h5_read_lengths_within(file, path, name, want, 0, 0, out, count);
}

int mk_h5_read_lengths_within(hid_t file, const char *path, const char *name, int64_t want,
			      uint64_t max_memory, uint64_t used, int64_t **out, int64_t *count)
{
	hid_t dset = H5Dopen2(file, name, H5P_DEFAULT), space = H5I_INVALID_HID, type;
	hsize_t dims[1] = {0};
	int rank = -1, ret = MK_OK;
	H5T_class_t cls = H5T_NO_CLASS;
	size_t size = 0;
	char what[MK_H5_MESSAGE];

	if (dset < 0)
		return mk_error_set(MK_EFORMAT, "'%s': no lengths dataset '%s' in the file", path, name);
	space = H5Dget_space(dset);
	rank = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
	if (rank == 1)
		H5Sget_simple_extent_dims(space, dims, NULL);
	type = H5Dget_type(dset);
	cls = type >= 0 ? H5Tget_class(type) : H5T_NO_CLASS;
	/* a file may declare integers of any size; converting one of 4 GB
	 * would allocate that much, whatever --max-memory says */
	size = type >= 0 ? H5Tget_size(type) : 0;
	if (type >= 0)
		H5Tclose(type);
	snprintf(what, sizeof what, "'%s': lengths '%s'", path, name);
	if (rank != 1 || cls != H5T_INTEGER)
		ret = mk_error_set(MK_EFORMAT, "'%s': lengths '%s' must be a 1-D integer dataset "
				   "[samples]", path, name);
	else if (size == 0 || size > 8)
		ret = mk_error_set(MK_EFORMAT, "'%s': lengths '%s' are integers of %zu bytes (at "
				   "most 8)", path, name, size);
	else if (want >= 0 && (int64_t)dims[0] != want)
		ret = mk_error_set(MK_EFORMAT, "'%s': lengths '%s' has %llu entries for %" PRId64
				   " samples", path, name, (unsigned long long)dims[0], want);
	else if (dims[0] == 0 || dims[0] > (hsize_t)MK_LENGTHS_MAX)
		ret = mk_error_set(MK_EFORMAT, "'%s': lengths '%s' has %llu entries (1 to %" PRId64
				   " allowed)", path, name, (unsigned long long)dims[0], MK_LENGTHS_MAX);
	else if ((ret = mk_check_memory(used + dims[0] * sizeof **out, max_memory ? max_memory
					: MK_DEFAULT_MAX_MEMORY, what)))
		;
	else if ((ret = mk_h5_prepare_read(&dset, path, name, 1, dims, &(mk_h5_reads){
			.count = dims, .steps = {-1, -1}, .max_memory = max_memory,
			.used = used + dims[0] * sizeof **out})))
		;
	else if (!(*out = malloc((size_t)dims[0] * sizeof **out)))
		ret = mk_error_set(MK_ENOMEM, "out of memory");
	else if (H5Dread(dset, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, *out) < 0) {
		ret = mk_error_set(MK_EFORMAT, "'%s': cannot read lengths '%s'", path, name);
		free(*out);
		*out = NULL;
	} else
		*count = (int64_t)dims[0];
	if (space >= 0)
		H5Sclose(space);
	if (dset >= 0)
		H5Dclose(dset);
	return ret;
}

/* ---- layout ------------------------------------------------------------- */

#define MK_H5_CACHE_ENTRY 128 /* bytes libhdf5 keeps per cached chunk besides its data */

static uint64_t mk_h5_ceil(uint64_t a, uint64_t b)
{
	return a / b + (a % b != 0);
}

/* A compact dataset keeps its data in its header.  libhdf5 before 1.14.1
 * copies as many bytes as the dataspace needs, whatever size the header
 * gives (HDF5 GitHub #2606). */
static bool mk_h5_compact_ok(hid_t dset, int rank, const hsize_t *dims)
{
	hid_t ftype = H5Dget_type(dset);
	uint64_t bytes = ftype >= 0 ? H5Tget_size(ftype) : 0;

	if (ftype >= 0)
		H5Tclose(ftype);
	for (int k = 0; k < rank && bytes; k++)
		bytes = dims[k] && bytes > UINT64_MAX / dims[k] ? 0 : bytes * dims[k];
	return bytes > 0 && H5Dget_storage_size(dset) == bytes;
}

/* Chunk dimensions above the current ones are how a resizable dataset
 * grows (h5py's maxshape=(None, ...) with its default chunks); above the
 * maximum ones they are a damaged layout, which libhdf5 reads out of
 * bounds. */
static bool mk_h5_chunk_ok(hid_t dset, hid_t dcpl, int rank, const hsize_t *dims, hsize_t *chunk)
{
	hid_t space = H5Dget_space(dset);
	hsize_t cur[H5S_MAX_RANK], max[H5S_MAX_RANK];
	bool ok = space >= 0 && H5Sget_simple_extent_ndims(space) == rank &&
		  H5Sget_simple_extent_dims(space, cur, max) == rank &&
		  H5Pget_chunk(dcpl, rank, chunk) == rank;

	if (space >= 0)
		H5Sclose(space);
	for (int k = 0; ok && k < rank; k++) {
		bool unlimited = max[k] == H5S_UNLIMITED;
		ok = cur[k] == dims[k] && (unlimited || dims[k] <= max[k]) && chunk[k] >= 1 &&
		     (unlimited || chunk[k] <= max[k]);
	}
	return ok;
}

/* External storage keeps the raw data in other files, named relative to
 * the working directory (or $HDF5_EXTFILE_PREFIX), not to the HDF5 file:
 * what is read would depend on where maskkit runs, the name may be any
 * file, device or FIFO on the machine, and libhdf5 reads a missing or
 * short one as zeros without an error.  No tool stores masks, attention
 * maps or weights that way unless asked to, so it is refused rather than
 * followed. */
static int mk_h5_external(hid_t dcpl, const char *path, const char *name)
{
	char ext[256] = "";
	off_t offset = 0;
	hsize_t size = 0;

	if (H5Pget_external_count(dcpl) <= 0)
		return MK_OK;
	if (H5Pget_external(dcpl, 0, sizeof ext, ext, &offset, &size) < 0)
		ext[0] = '\0';
	ext[sizeof ext - 1] = '\0';
	return mk_error_set(MK_EFORMAT, "'%s': dataset '%s' keeps its data in the external file "
			    "'%s'; external storage is not read (store the data in the HDF5 file "
			    "itself)", path, name, ext);
}

/* Storage that was never written reads as the fill value, as fast as
 * libhdf5 can fill buffers: a 1 KB file may declare terabytes of it, and a
 * reader would spend hours producing numbers that were never there.  So a
 * dataset with no storage allocated, or a chunked one missing some of its
 * chunks (a writer that stopped early), is refused, whatever its size; a
 * written one costs at most what its stored chunks decompress to.  (libhdf5
 * 1.10's H5Dget_space_status calls every compressed dataset "partly
 * allocated", so the chunks are counted.) */
static int mk_h5_written(hid_t dset, H5D_layout_t layout, int rank, const hsize_t *dims,
			 const hsize_t *chunk, const char *path, const char *name)
{
	H5D_space_status_t status = H5D_SPACE_STATUS_ERROR;
	uint64_t want = 1;
	hsize_t have = 0;
	hid_t space;

	if (layout == H5D_CONTIGUOUS) {
		if (H5Dget_space_status(dset, &status) >= 0 && status != H5D_SPACE_STATUS_NOT_ALLOCATED)
			return MK_OK;
	} else {
		for (int k = 0; k < rank; k++)
			want = mk_h5_mul(want, mk_h5_ceil(dims[k], chunk[k]));
		space = H5Dget_space(dset);
		if (space < 0 || H5Dget_num_chunks(dset, space, &have) < 0)
			have = 0;
		if (space >= 0)
			H5Sclose(space);
		if (have >= want)
			return MK_OK;
		if (have > 0)
			return mk_error_set(MK_EFORMAT, "'%s': dataset '%s' is only partly written (%llu "
					    "of its %llu chunks are stored; the rest would read as its "
					    "fill value)", path, name, (unsigned long long)have,
					    (unsigned long long)want);
	}
	return mk_error_set(MK_EFORMAT, "'%s': dataset '%s' was never written (no storage is "
			    "allocated for it; it would read as its fill value everywhere)", path,
			    name);
}

int mk_h5_check_layout(hid_t dset, const char *path, const char *name, int rank,
		       const hsize_t *dims)
{
	hid_t dcpl = H5Dget_create_plist(dset);
	H5D_layout_t layout = dcpl >= 0 ? H5Pget_layout(dcpl) : H5D_LAYOUT_ERROR;
	hsize_t chunk[H5S_MAX_RANK];
	bool ok = layout != H5D_LAYOUT_ERROR && rank >= 1 && rank <= H5S_MAX_RANK;
	int ret;

	if (ok && layout == H5D_CHUNKED)
		ok = mk_h5_chunk_ok(dset, dcpl, rank, dims, chunk);
	else if (ok && layout == H5D_COMPACT)
		ok = mk_h5_compact_ok(dset, rank, dims);
	if (!ok)
		ret = mk_error_set(MK_EFORMAT, "'%s': dataset '%s' has a damaged layout", path, name);
	else if ((ret = mk_h5_external(dcpl, path, name)) == MK_OK &&
		 (layout == H5D_CONTIGUOUS || layout == H5D_CHUNKED))
		ret = mk_h5_written(dset, layout, rank, dims, chunk, path, name);
	if (dcpl >= 0)
		H5Pclose(dcpl);
	return ret;
}

/* ---- bounded reads -------------------------------------------------------- */

/* Chunks along an axis that `count` elements, starting anywhere, touch. */
static uint64_t mk_h5_touched(hsize_t count, hsize_t chunk, hsize_t dim)
{
	uint64_t all = mk_h5_ceil(dim, chunk), t = count <= 1 ? 1 : (count - 2) / chunk + 2;

	return t < all ? t : all;
}

/* How many chunks must stay cached for each to be decompressed once.  The
 * reads step through steps[0] (outermost) to steps[MK_H5_STEPS - 1], each
 * through its whole extent.  A chunk is read again while the reads stay in
 * its row along the outermost step axis on which it is longer than a read;
 * meanwhile they touch that row of chunks (where the reads lie along the
 * outer step axes, everything along the inner ones and along the axes not
 * stepped through).  0 when no chunk is longer than a read along a step
 * axis: each is then read whole by one read (or two, when the reads do not
 * line up with the chunks). */
static uint64_t mk_h5_working_set(int rank, const hsize_t *dims, const hsize_t *chunk,
				  const mk_h5_reads *r)
{
	int pos[H5S_MAX_RANK], spans = -1;
	uint64_t n = 1;

	for (int a = 0; a < rank; a++)
		pos[a] = -1;
	for (int k = 0; k < MK_H5_STEPS && r->steps[k] >= 0; k++) {
		int a = r->steps[k];
		assert(a < rank);
		pos[a] = k;
		if (spans < 0 && chunk[a] > r->count[a])
			spans = k;
	}
	if (spans < 0)
		return 0;
	for (int a = 0; a < rank; a++) {
		uint64_t all = mk_h5_ceil(dims[a], chunk[a]);
		if (pos[a] < 0)
			n = mk_h5_mul(n, mk_h5_ceil(r->count[a], chunk[a]));
		else if (pos[a] <= spans)
			n = mk_h5_mul(n, mk_h5_touched(r->count[a], chunk[a], dims[a]));
		else
			n = mk_h5_mul(n, all);
	}
	return n;
}

static bool mk_h5_prime(uint64_t p)
{
	for (uint64_t d = 3; d * d <= p; d += 2)
		if (p % d == 0)
			return false;
	return p % 2 == 1;
}

/* Opens the dataset again with a chunk cache of `bytes` over `slots` hash
 * slots; chunks that have been read whole are evicted first (w0 = 1).  It
 * is closed first: libhdf5 shares one cache among the handles of a dataset
 * that is open, made by the first open. */
static int mk_h5_reopen_cached(hid_t *dset, uint64_t slots, uint64_t bytes, const char *path,
			       const char *name)
{
	hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS), file = H5Iget_file_id(*dset);
	hid_t again = H5I_INVALID_HID;

	H5Dclose(*dset);
	if (file >= 0 && dapl >= 0 && H5Pset_chunk_cache(dapl, (size_t)slots, (size_t)bytes, 1.0) >= 0)
		again = H5Dopen2(file, name, dapl);
	if (dapl >= 0)
		H5Pclose(dapl);
	if (file >= 0)
		H5Fclose(file);
	*dset = again;
	return again < 0 ? mk_error_set(MK_EFORMAT, "'%s': cannot open dataset '%s' with a chunk "
					"cache", path, name) : MK_OK;
}

int mk_h5_prepare_read(hid_t *dset, const char *path, const char *name, int rank,
		       const hsize_t *dims, const mk_h5_reads *r)
{
	uint64_t limit = r->max_memory ? r->max_memory : MK_DEFAULT_MAX_MEMORY;
	uint64_t chunk_bytes = 1, nchunks, slots, cache;
	hsize_t chunk[H5S_MAX_RANK];
	hid_t dcpl, ftype;
	char what[MK_H5_MESSAGE];
	bool chunked;
	int ret;

	if (r->cache)
		*r->cache = 0;
	if ((ret = mk_h5_check_layout(*dset, path, name, rank, dims)))
		return ret;
	dcpl = H5Dget_create_plist(*dset);
	chunked = dcpl >= 0 && H5Pget_layout(dcpl) == H5D_CHUNKED &&
		  H5Pget_chunk(dcpl, rank, chunk) == rank;
	if (dcpl >= 0)
		H5Pclose(dcpl);
	if (!chunked)
		return MK_OK;
	ftype = H5Dget_type(*dset);
	chunk_bytes = ftype >= 0 ? H5Tget_size(ftype) : 0;
	if (ftype >= 0)
		H5Tclose(ftype);
	for (int k = 0; k < rank; k++)
		chunk_bytes = mk_h5_mul(chunk_bytes, chunk[k]);
	/* a filtered chunk is decompressed whole, whatever part of it is read */
	snprintf(what, sizeof what, "'%s': one chunk of dataset '%s', decompressed,", path, name);
	if ((ret = mk_check_memory(mk_h5_add(r->used, chunk_bytes), limit, what)))
		return ret;
	nchunks = mk_h5_working_set(rank, dims, chunk, r);
	if (nchunks == 0)
		return MK_OK;
	/* a prime number of slots, at least twice the chunks: a run of
	 * consecutive chunk indices (what the reads need along the file's
	 * leading axes) then never shares a slot */
	slots = mk_h5_add(mk_h5_mul(nchunks, 2), 1);
	cache = mk_h5_add(mk_h5_mul(nchunks, mk_h5_add(chunk_bytes, MK_H5_CACHE_ENTRY)),
			  mk_h5_mul(slots, 2 * sizeof(void *)));
	snprintf(what, sizeof what, "'%s': the chunk cache of dataset '%s' (%llu chunks, each "
		 "decompressed once)", path, name, (unsigned long long)nchunks);
	if ((ret = mk_check_memory(mk_h5_add(r->used, cache), limit, what)))
		return ret;
	for (slots = slots < 521 ? 521 : slots | 1; !mk_h5_prime(slots); slots += 2)
		;
	if ((ret = mk_h5_reopen_cached(dset, slots, mk_h5_mul(nchunks, chunk_bytes), path, name)))
		return ret;
	if (r->cache)
		*r->cache = cache;
	return MK_OK;
}
