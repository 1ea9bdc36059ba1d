/*
 * HDF5 masks.  The writer makes one dataset "mask": n x n uint8 0/1
 * (H5T_STD_U8LE), chunked by row blocks of at most 1 MiB and deflated at
 * level 1 when the library has the filter, with attributes "expr" and
 * "params" (UTF-8 strings), "n" (int64), "seed" and "count" (uint64) and
 * "sparsity" (double, 1 - count / n^2).  Rows are streamed a chunk at a
 * time.
 *
 * The reader takes the dataset "mask", or else the one 2-D dataset in the
 * file, of any integer, enum (h5py's bool) or float type: nonzero is set.
 *
 * HDF5 prints its error stack to stderr by default; the library must not
 * print, so every entry point turns that off.
 */
#include "config.h"
#include <assert.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "tensor.h"
#include "h5util.h"
#include "h5write.h"

#define MK_H5_CHUNK_BYTES ((int64_t)1 << 20)
#define MK_H5_CHUNK_ROWS 256
#define MK_H5_READ_BYTES ((int64_t)4 << 20)
#define MK_H5_MAX_ELEMENT 16 /* bytes in the widest number we read */

/* ---- writing ------------------------------------------------------------ */

int64_t mk_h5_chunk_rows(int64_t n)
{
	int64_t rows = MK_H5_CHUNK_BYTES / n;
	if (rows > MK_H5_CHUNK_ROWS)
		rows = MK_H5_CHUNK_ROWS;
	if (rows > n)
		rows = n;
	return rows < 1 ? 1 : rows;
}

bool mk_h5_have_deflate(void)
{
	unsigned int info = 0;
	return H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0 &&
	       H5Zget_filter_info(H5Z_FILTER_DEFLATE, &info) >= 0 &&
	       (info & H5Z_FILTER_CONFIG_ENCODE_ENABLED);
}

hid_t mk_h5_create_mask(hid_t file, int rank, const hsize_t *dims, int64_t chunk_rows)
{
	hsize_t chunk[MK_H5_MASK_MAX_RANK];
	hid_t space, dcpl, dset = H5I_INVALID_HID;

	assert(rank >= 2 && rank <= MK_H5_MASK_MAX_RANK);
	for (int d = 0; d < rank; d++)
		chunk[d] = d < rank - 2 ? 1 : dims[d];
	chunk[rank - 2] = (hsize_t)chunk_rows;
	space = H5Screate_simple(rank, dims, NULL);
	dcpl = H5Pcreate(H5P_DATASET_CREATE);
	if (space >= 0 && dcpl >= 0 && H5Pset_chunk(dcpl, rank, chunk) >= 0 &&
	    (!mk_h5_have_deflate() || H5Pset_deflate(dcpl, 1) >= 0))
		dset = H5Dcreate2(file, "mask", H5T_STD_U8LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
	if (dcpl >= 0)
		H5Pclose(dcpl);
	if (space >= 0)
		H5Sclose(space);
	return dset;
}

/* Writes rows [r0, r0 + k) of the mask at lead[0 .. rank - 2) from buf
 * (k x n bytes). */
static int mk_h5_write_block(hid_t dset, int rank, const hsize_t *lead, int64_t n, int64_t r0,
			     int64_t k, const uint8_t *buf)
{
	hsize_t start[MK_H5_MASK_MAX_RANK], count[MK_H5_MASK_MAX_RANK];
	hid_t fspace = H5Dget_space(dset), mspace;
	herr_t st = -1;

	for (int d = 0; d < rank - 2; d++) {
		start[d] = lead[d];
		count[d] = 1;
	}
	start[rank - 2] = (hsize_t)r0;
	start[rank - 1] = 0;
	count[rank - 2] = (hsize_t)k;
	count[rank - 1] = (hsize_t)n;
	mspace = H5Screate_simple(rank, count, NULL);
	if (fspace >= 0 && mspace >= 0 &&
	    H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL) >= 0)
		st = H5Dwrite(dset, H5T_NATIVE_UINT8, mspace, fspace, H5P_DEFAULT, buf);
	if (mspace >= 0)
		H5Sclose(mspace);
	if (fspace >= 0)
		H5Sclose(fspace);
	return st < 0 ? mk_error_set(MK_ESYS, "HDF5 write of rows %" PRId64 "..%" PRId64 " failed",
				     r0, r0 + k - 1)
		      : MK_OK;
}

int mk_h5_write_rows(const mk_rows *r, hid_t dset, int rank, const hsize_t *lead,
		     int64_t chunk_rows, uint64_t *count)
{
	int64_t n = r->n;
	uint64_t *row = malloc(mk_words(n) * sizeof *row);
	uint8_t *buf = malloc((size_t)(chunk_rows * n));
	int ret = MK_OK;

	*count = 0;
	if (!row || !buf) {
		ret = mk_error_set(MK_ENOMEM, "out of memory");
		goto out;
	}
	for (int64_t r0 = 0; r0 < n && ret == MK_OK; r0 += chunk_rows) {
		int64_t k = r0 + chunk_rows <= n ? chunk_rows : n - r0;
		for (int64_t q = 0; q < k; q++) {
			r->row(r->ctx, r0 + q, row);
			*count += mk_bits_count(row, mk_words(n));
			for (int64_t j = 0; j < n; j++)
				buf[q * n + j] = mk_bit_test(row, j);
		}
		ret = mk_h5_write_block(dset, rank, lead, n, r0, k, buf);
	}
out:
	free(row);
	free(buf);
	return ret;
}

int mk_h5_attr(hid_t obj, const char *name, hid_t ftype, hid_t mtype, const void *val)
{
	hid_t space = H5Screate(H5S_SCALAR), a = H5I_INVALID_HID;
	herr_t st = -1;

	if (space >= 0)
		a = H5Acreate2(obj, name, ftype, space, H5P_DEFAULT, H5P_DEFAULT);
	if (a >= 0)
		st = H5Awrite(a, mtype, val);
	if (a >= 0 && H5Aclose(a) < 0)
		st = -1;
	if (space >= 0)
		H5Sclose(space);
	return st < 0 ? mk_error_set(MK_ESYS, "HDF5: cannot write attribute '%s'", name) : MK_OK;
}

int mk_h5_attr_str(hid_t obj, const char *name, const char *s)
{
	hid_t t = H5Tcopy(H5T_C_S1);
	int ret;

	if (!s)
		s = "";
	if (t < 0 || H5Tset_size(t, H5T_VARIABLE) < 0 || H5Tset_cset(t, H5T_CSET_UTF8) < 0)
		ret = mk_error_set(MK_ESYS, "HDF5: cannot make a string type");
	else
		ret = mk_h5_attr(obj, name, t, t, &s);
	if (t >= 0)
		H5Tclose(t);
	return ret;
}

static int mk_h5_write_attrs(hid_t dset, const mk_rows *r, const mk_write_opts *o,
			     uint64_t count)
{
	double sparsity = 1.0 - (double)count / ((double)r->n * (double)r->n);
	int64_t n = r->n;
	uint64_t seed = o->seed;
	int ret;

	ret = mk_h5_attr_str(dset, "expr", r->expr);
	if (ret == MK_OK)
		ret = mk_h5_attr_str(dset, "params", r->params);
	if (ret == MK_OK)
		ret = mk_h5_attr(dset, "n", H5T_STD_I64LE, H5T_NATIVE_INT64, &n);
	if (ret == MK_OK)
		ret = mk_h5_attr(dset, "seed", H5T_STD_U64LE, H5T_NATIVE_UINT64, &seed);
	if (ret == MK_OK)
		ret = mk_h5_attr(dset, "count", H5T_STD_U64LE, H5T_NATIVE_UINT64, &count);
	if (ret == MK_OK)
		ret = mk_h5_attr(dset, "sparsity", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &sparsity);
	return ret;
}

int mk_io_write_h5(const mk_rows *r, const char *path, const mk_write_opts *o)
{
	int64_t n = r->n, chunk_rows = mk_h5_chunk_rows(n);
	hid_t dset;
	uint64_t bytes, count = 0;
	char what[64];
	mk_h5w w;
	int ret;

	snprintf(what, sizeof what, "an HDF5 mask of n = %" PRId64, n);
	ret = mk_mul_u64((uint64_t)n, (uint64_t)n, &bytes);
	if (ret == MK_OK)
		ret = mk_check_memory(bytes, o->max_memory, what);
	if (ret == MK_OK)
		ret = mk_h5w_create(&w, path);
	if (ret)
		return ret;
	dset = mk_h5_create_mask(w.file, 2, (hsize_t[]){(hsize_t)n, (hsize_t)n}, chunk_rows);
	if (dset < 0)
		ret = mk_error_set(MK_ESYS, "HDF5 cannot create the dataset 'mask'");
	if (ret == MK_OK)
		ret = mk_h5_write_rows(r, dset, 2, NULL, chunk_rows, &count);
	if (ret == MK_OK)
		ret = mk_h5_write_attrs(dset, r, o, count);
	/* closes dset too */
	return mk_h5w_close(&w, ret);
}

/* ---- reading ------------------------------------------------------------ */

static int mk_h5_candidates_error(const char *path, char *const *names, size_t count)
{
	/* The message buffer is 512 bytes: name as many as fit in about 300. */
	char list[320];

	if (count == 0)
		return mk_error_set(MK_EFORMAT, "'%s': no dataset 'mask' and no 2-D dataset in "
				    "the file", path);
	mk_h5_join(list, sizeof list, names, count);
	return mk_error_set(MK_EFORMAT, "'%s': no dataset 'mask' and %zu 2-D datasets to choose "
			    "from: %s", path, count, list);
}

/* Opens "mask", or else the only 2-D dataset; *name gets its path. */
static int mk_h5_open_mask(hid_t file, const char *path, hid_t *dset, char *name, size_t cap)
{
	char **found = NULL;
	size_t count = 0;
	hid_t obj;
	int ret;

	if (H5Lexists(file, "mask", H5P_DEFAULT) > 0) {
		obj = H5Oopen(file, "mask", H5P_DEFAULT);
		if (obj >= 0 && H5Iget_type(obj) == H5I_DATASET) {
			*dset = obj;
			snprintf(name, cap, "/mask");
			return MK_OK;
		}
		if (obj >= 0)
			H5Oclose(obj);
	}
	ret = mk_h5_datasets(file, path, 2, NULL, " (give a dataset named 'mask')", &found, &count);
	if (ret == MK_OK && count != 1)
		ret = mk_h5_candidates_error(path, found, count);
	else if (ret == MK_OK && (*dset = H5Dopen2(file, found[0], H5P_DEFAULT)) < 0)
		ret = mk_error_set(MK_EFORMAT, "'%s': cannot open dataset '%s'", path, found[0]);
	else if (ret == MK_OK)
		snprintf(name, cap, "%s", found[0]);
	mk_h5_names_free(found);
	return ret;
}

static int mk_h5_shape(hid_t dset, const char *path, const char *name, int64_t *n)
{
	hid_t space = H5Dget_space(dset);
	hsize_t dims[2] = {0, 0};
	int ndims = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;

	if (ndims == 2)
		H5Sget_simple_extent_dims(space, dims, NULL);
	if (space >= 0)
		H5Sclose(space);
	if (ndims != 2)
		return mk_error_set(MK_EFORMAT, "'%s': dataset '%s' has %d dimensions, a mask has 2",
				    path, name, ndims);
	if (dims[0] != dims[1])
		return mk_error_set(MK_EFORMAT, "'%s': dataset '%s' is %llu x %llu; a mask must be "
				    "square", path, name, (unsigned long long)dims[0],
				    (unsigned long long)dims[1]);
	if (dims[0] == 0)
		return mk_error_set(MK_EFORMAT, "'%s': dataset '%s' is empty", path, name);
	if (dims[0] > (hsize_t)MK_N_MAX)
		return mk_error_set(MK_ERANGE, "'%s': dataset '%s' is %llu x %llu, larger than the "
				    "largest n = %" PRId64, path, name, (unsigned long long)dims[0],
				    (unsigned long long)dims[0], MK_N_MAX);
	*n = (int64_t)dims[0];
	return MK_OK;
}

/* The type to read into: the native form of an integer, enum or bitfield
 * type (nonzero bytes mean set), or double for any float. */
static int mk_h5_memtype(hid_t dset, const char *path, const char *name, hid_t *mtype,
			 bool *is_float)
{
	hid_t ftype = H5Dget_type(dset);
	H5T_class_t cls = ftype >= 0 ? H5Tget_class(ftype) : H5T_NO_CLASS;
	size_t fsize = ftype >= 0 ? H5Tget_size(ftype) : 0;

	*mtype = H5I_INVALID_HID;
	*is_float = cls == H5T_FLOAT;
	if (fsize == 0 || fsize > MK_H5_MAX_ELEMENT) {
		if (ftype >= 0)
			H5Tclose(ftype);
		return mk_error_set(MK_EFORMAT, "'%s': dataset '%s' has %zu-byte elements; expected "
				    "numbers of at most %d bytes", path, name, fsize, MK_H5_MAX_ELEMENT);
	}
	if (cls == H5T_INTEGER || cls == H5T_ENUM || cls == H5T_BITFIELD)
		*mtype = H5Tget_native_type(ftype, H5T_DIR_ASCEND);
	else if (cls == H5T_FLOAT)
		*mtype = H5Tcopy(H5T_NATIVE_DOUBLE);
	if (ftype >= 0)
		H5Tclose(ftype);
	if (*mtype >= 0)
		return MK_OK;
	return mk_error_set(MK_EFORMAT, "'%s': dataset '%s' does not hold numbers (use "
			    "integers, booleans or floats)", path, name);
}

static bool mk_h5_nonzero(const uint8_t *p, size_t size, bool is_float)
{
	double d;

	if (is_float) {
		memcpy(&d, p, sizeof d);
		return d != 0.0;
	}
	for (size_t k = 0; k < size; k++)
		if (p[k])
			return true;
	return false;
}

/* Reads rows [r0, r0 + k) into buf and sets their bits in m. */
static int mk_h5_read_block(hid_t dset, hid_t mtype, bool is_float, size_t size, int64_t r0,
			    int64_t k, uint8_t *buf, mk_mask *m)
{
	int64_t n = mk_mask_n(m);
	hsize_t start[2] = {(hsize_t)r0, 0}, count[2] = {(hsize_t)k, (hsize_t)n};
	hid_t fspace = H5Dget_space(dset), mspace = H5Screate_simple(2, count, NULL);
	herr_t st = -1;

	if (fspace >= 0 && mspace >= 0 &&
	    H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL) >= 0)
		st = H5Dread(dset, mtype, mspace, fspace, H5P_DEFAULT, buf);
	if (mspace >= 0)
		H5Sclose(mspace);
	if (fspace >= 0)
		H5Sclose(fspace);
	if (st < 0)
		return MK_EFORMAT;
	for (int64_t q = 0; q < k; q++) {
		uint64_t *w = mk_mask_row(m, r0 + q);
		const uint8_t *p = buf + (size_t)(q * n) * size;
		for (int64_t j = 0; j < n; j++, p += size)
			if (mk_h5_nonzero(p, size, is_float))
				mk_bit_set(w, j);
	}
	return MK_OK;
}

/* Rows of n elements of `size` bytes read at once. */
static int64_t mk_h5_block_rows(int64_t n, size_t size)
{
	int64_t k = MK_H5_READ_BYTES / (n * (int64_t)size);

	return k < 1 ? 1 : k > n ? n : k;
}

/* The layout, and what reading the rows keeps (the mask, one block of rows,
 * HDF5's chunks) within max_memory, before anything is allocated. */
static int mk_h5_bound_read(hid_t *dset, const char *path, const char *name, int64_t n,
			    uint64_t max_memory)
{
	hsize_t dims[2] = {(hsize_t)n, (hsize_t)n}, count[2] = {1, (hsize_t)n};
	hid_t mtype = H5I_INVALID_HID;
	bool is_float;
	size_t size;
	int ret = mk_h5_memtype(*dset, path, name, &mtype, &is_float);

	if (ret)
		return ret;
	size = H5Tget_size(mtype);
	H5Tclose(mtype);
	count[0] = (hsize_t)mk_h5_block_rows(n, size);
	return mk_h5_prepare_read(dset, path, name, 2, dims, &(mk_h5_reads){
		.count = count, .steps = {0, -1}, .max_memory = max_memory,
		.used = (uint64_t)n * mk_words(n) * 8 + count[0] * (uint64_t)n * size});
}

static int mk_h5_read_rows(hid_t dset, const char *path, const char *name, mk_mask *m)
{
	int64_t n = mk_mask_n(m), k;
	hid_t mtype;
	bool is_float;
	size_t size;
	uint8_t *buf = NULL;
	int ret;

	ret = mk_h5_memtype(dset, path, name, &mtype, &is_float);
	if (ret)
		return ret;
	size = H5Tget_size(mtype);
	k = mk_h5_block_rows(n, size);
	buf = malloc((size_t)(k * n) * size);
	if (!buf) {
		ret = mk_error_set(MK_ENOMEM, "out of memory");
		goto out;
	}
	for (int64_t r0 = 0; r0 < n; r0 += k) {
		int64_t rows = r0 + k <= n ? k : n - r0;
		if (mk_h5_read_block(dset, mtype, is_float, size, r0, rows, buf, m)) {
			ret = mk_error_set(MK_EFORMAT, "'%s': cannot read rows %" PRId64 "..%" PRId64
					   " of dataset '%s'", path, r0, r0 + rows - 1, name);
			break;
		}
	}
out:
	free(buf);
	H5Tclose(mtype);
	return ret;
}

/* "FILE.h5:/path" names the dataset; a plain FILE.h5 is searched. */
static int mk_h5_open_named(hid_t file, const char *path, const char *ds, hid_t *dset,
			    char *name, size_t cap)
{
	htri_t there;

	if (!ds)
		return mk_h5_open_mask(file, path, dset, name, cap);
	if (!*ds)
		return mk_error_set(MK_EINVAL, "'%s': no dataset after ':'", path);
	snprintf(name, cap, "%s%s", ds[0] == '/' ? "" : "/", ds);
	there = H5Lexists(file, name, H5P_DEFAULT);
	if (there <= 0 || (*dset = H5Dopen2(file, name, H5P_DEFAULT)) < 0)
		return mk_error_set(MK_EFORMAT, "'%s': no dataset '%s'", path, name);
	return MK_OK;
}

int mk_io_read_h5(const char *spec, uint64_t max_memory, mk_mask **out)
{
	hid_t file = H5I_INVALID_HID, dset = H5I_INVALID_HID;
	mk_mask *m = NULL;
	size_t flen = mk_tensor_file_len(spec);
	const char *ds = spec[flen] == ':' ? spec + flen + 1 : NULL;
	char name[256], *path = strndup(spec, flen);
	int64_t n = 0;
	int ret;

	*out = NULL;
	if (!path)
		return mk_error_set(MK_ENOMEM, "out of memory");
	ret = mk_h5_open(path, &file);
	if (ret == MK_OK)
		ret = mk_h5_open_named(file, spec, ds, &dset, name, sizeof name);
	if (ret == MK_OK)
		ret = mk_h5_shape(dset, spec, name, &n);
	if (ret == MK_OK)
		ret = mk_h5_bound_read(&dset, spec, name, n, max_memory);
	if (ret == MK_OK)
		ret = mk_mask_new(n, max_memory, &m);
	if (ret == MK_OK)
		ret = mk_h5_read_rows(dset, spec, name, m);
	if (ret == MK_OK) {
		*out = m;
		m = NULL;
	}
	mk_mask_free(m);
	if (dset >= 0)
		H5Dclose(dset);
	if (file >= 0)
		H5Fclose(file);
	free(path);
	return ret;
}
