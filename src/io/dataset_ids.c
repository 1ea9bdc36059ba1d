/*
 * The token ids and the model name that `maskkit encode` writes beside the
 * attention maps.  Both are optional to their readers: a file without them
 * (another tool's maps, `maskkit gen` masks) is no error, only less to say.
 */
#include "config.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "h5util.h"
#include "dataset_ids.h"

/* Whether dset is integers [samples, >= len_max]: dims gets its shape, why
 * the reason when not. */
static bool ids_usable(hid_t dset, int64_t samples, int64_t len_max, hsize_t *dims, char *why,
		       size_t cap)
{
	hid_t space = H5Dget_space(dset), type = H5Dget_type(dset);
	int rank = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
	bool integer = type >= 0 && H5Tget_class(type) == H5T_INTEGER && H5Tget_size(type) <= 8;

	if (rank == 2)
		H5Sget_simple_extent_dims(space, dims, NULL);
	if (space >= 0)
		H5Sclose(space);
	if (type >= 0)
		H5Tclose(type);
	if (rank != 2 || !integer) {
		snprintf(why, cap, "/ids is not a 2-D integer dataset [samples, N]");
		return false;
	}
	if ((int64_t)dims[0] != samples || (int64_t)dims[1] < len_max) {
		snprintf(why, cap, "/ids is %llu x %llu, not %" PRId64 " samples of at least %"
			 PRId64 " tokens", (unsigned long long)dims[0], (unsigned long long)dims[1],
			 samples, len_max);
		return false;
	}
	return true;
}

int mk_dataset_ids_read(const char *path, int64_t samples, int64_t len_max,
			uint64_t max_memory, int32_t **ids, int64_t *cols, char *why, size_t cap)
{
	hid_t file = H5I_INVALID_HID, dset = H5I_INVALID_HID;
	hsize_t dims[2] = {0, 0};
	uint64_t bytes;
	int ret;

	*ids = NULL;
	*cols = 0;
	if ((ret = mk_h5_open(path, &file))) /* loads HDF5 and silences it */
		return ret;
	if (!mk_h5_is_dataset(file, "/ids")) {
		snprintf(why, cap, "the file has no /ids (token ids)");
		goto out;
	}
	dset = H5Dopen2(file, "/ids", H5P_DEFAULT);
	if (dset < 0 || !ids_usable(dset, samples, len_max, dims, why, cap))
		goto out;
	bytes = mk_h5_mul(mk_h5_mul(dims[0], dims[1]), sizeof **ids);
	if ((ret = mk_check_memory(bytes, max_memory ? max_memory : MK_DEFAULT_MAX_MEMORY,
				   "the token ids")) ||
	    (ret = mk_h5_prepare_read(&dset, path, "/ids", 2, dims, &(mk_h5_reads){
			.count = dims, .steps = {-1, -1}, .max_memory = max_memory, .used = bytes})))
		goto out;
	if (!(*ids = malloc((size_t)bytes))) {
		ret = mk_error_set(MK_ENOMEM, "out of memory for the token ids");
		goto out;
	}
	if (H5Dread(dset, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, *ids) < 0) {
		ret = mk_error_set(MK_EFORMAT, "'%s': cannot read /ids", path);
		free(*ids);
		*ids = NULL;
		goto out;
	}
	*cols = (int64_t)dims[1];
out:
	if (dset >= 0)
		H5Dclose(dset);
	H5Fclose(file);
	return ret;
}

int mk_h5_root_text(const char *path, const char *name, char **out)
{
	hid_t file = H5I_INVALID_HID, attr = H5I_INVALID_HID, type = H5I_INVALID_HID, mem;
	size_t size;
	int ret;

	*out = NULL;
	if ((ret = mk_h5_open(path, &file))) /* loads HDF5 and silences it */
		return ret;
	if (H5Aexists(file, name) <= 0 || (attr = H5Aopen(file, name, H5P_DEFAULT)) < 0 ||
	    (type = H5Aget_type(attr)) < 0 || H5Tget_class(type) != H5T_STRING ||
	    H5Tis_variable_str(type) != 0 || (size = H5Tget_size(type)) == 0 || size > 65536)
		goto out;
	/* a fixed-length string, as encode writes it; NUL-terminated here */
	/* libhdf5 converts no string between character sets: the file's */
	if ((mem = H5Tcopy(H5T_C_S1)) < 0 || H5Tset_size(mem, size + 1) < 0 ||
	    H5Tset_cset(mem, H5Tget_cset(type)) < 0) {
		if (mem >= 0)
			H5Tclose(mem);
		goto out;
	}
	if (!(*out = calloc(size + 1, 1)))
		ret = mk_error_set(MK_ENOMEM, "out of memory");
	else if (H5Aread(attr, mem, *out) < 0) {
		free(*out);
		*out = NULL;
	}
	H5Tclose(mem);
out:
	if (type >= 0)
		H5Tclose(type);
	if (attr >= 0)
		H5Aclose(attr);
	H5Fclose(file);
	return ret;
}
