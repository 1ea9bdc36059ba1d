/*
 * Dense tensors of rank 2 to 4 in .npy and HDF5 files, for `maskkit attn`;
 * reading here, writing in tensor_write.c.
 *
 * Files hold float32 or float64; in memory everything is float32 (the
 * attention engine's type), so float64 values are rounded on reading and a
 * value beyond float32's range is refused rather than turned into Inf.
 * NaN and Inf are refused too, naming the first bad element: the engine
 * would spread them through whole rows of the output.
 *
 * .npy files are read with the header parser of the mask reader (io_npy.c),
 * in either byte order and in Fortran order (the file then holds the array
 * with its axes reversed, which is undone here).  HDF5 datasets are read
 * through libhdf5's conversion into native float or double.
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tensor.h"
#include "h5util.h"
#include "internal.h"
#include "tensor_map.h"

#define TENSOR_CHUNK 4096 /* elements converted per step when reading */

/* ---- shapes ---------------------------------------------------------------- */

uint64_t mk_tensor_count(const mk_tensor *t)
{
	uint64_t c = 1;
	for (int k = 0; k < t->rank; k++)
		c *= (uint64_t)t->dims[k];
	return c;
}

void mk_tensor_shape_text(const mk_tensor *t, char *buf, size_t cap)
{
	size_t len = 0;
	buf[0] = '\0';
	for (int k = 0; k < t->rank && len < cap; k++)
		len += (size_t)snprintf(buf + len, cap - len, "%s%" PRId64, k ? ", " : "(",
					t->dims[k]);
	if (len < cap)
		snprintf(buf + len, cap - len, ")");
}

/* Elements and float32 bytes of a shape; MK_EFORMAT for an empty
 * dimension, MK_ERANGE on overflow or above max_memory. */
static int tensor_size(int rank, const int64_t *dims, uint64_t max_memory, const char *what,
		       uint64_t *count)
{
	uint64_t c = 1, bytes;
	int ret;

	for (int k = 0; k < rank; k++) {
		if (dims[k] <= 0)
			return mk_error_set(MK_EFORMAT, "%s has an empty dimension (%" PRId64 " at "
					    "axis %d)", what, dims[k], k);
		if ((ret = mk_mul_u64(c, (uint64_t)dims[k], &c)))
			return mk_error_set(ret, "%s is too large: its size overflows", what);
	}
	if ((ret = mk_mul_u64(c, sizeof(float), &bytes)) || (bytes >> 62))
		return mk_error_set(MK_ERANGE, "%s is too large: its size overflows", what);
	if ((ret = mk_check_memory(bytes, max_memory, what)))
		return ret;
	*count = c;
	return MK_OK;
}

/* mk_tensor_new, zeroed or not: a reader fills every element, and zeroing
 * 8 MiB first costs a pass over it (about 1 ms, measured) */
static int tensor_new(int rank, const int64_t *dims, mk_dtype dtype, uint64_t max_memory,
		      const char *what, bool zero, mk_tensor *out)
{
	uint64_t count;
	int ret;

	memset(out, 0, sizeof *out);
	if (rank < 1 || rank > MK_TENSOR_MAX_RANK)
		return mk_error_set(MK_EINVAL, "%s: rank %d is not 1 to %d", what, rank,
				    MK_TENSOR_MAX_RANK);
	if ((ret = tensor_size(rank, dims, max_memory, what, &count)))
		return ret;
	if (!(out->data = mk_huge_alloc((size_t)count * sizeof(float), zero)))
		return mk_error_set(MK_ENOMEM, "out of memory for %s", what);
	out->rank = rank;
	memcpy(out->dims, dims, (size_t)rank * sizeof *dims);
	out->dtype = dtype;
	return MK_OK;
}

int mk_tensor_new(int rank, const int64_t *dims, mk_dtype dtype, uint64_t max_memory,
		  const char *what, mk_tensor *out)
{
	return tensor_new(rank, dims, dtype, max_memory, what, true, out);
}

int mk_tensor_new_unset(int rank, const int64_t *dims, mk_dtype dtype, uint64_t max_memory,
			const char *what, mk_tensor *out)
{
	return tensor_new(rank, dims, dtype, max_memory, what, false, out);
}

void mk_tensor_release(mk_tensor *t)
{
	if (!t)
		return;
	if (t->map)
		mk_tensor_unmap(t);
	else
		free(t->data);
	memset(t, 0, sizeof *t);
}

/* ---- names: FILE.npy, FILE.h5, FILE.h5:/dataset ----------------------------- */

static bool tensor_ends_with(const char *s, size_t len, const char *ext)
{
	size_t e = strlen(ext);
	return len > e && strncasecmp(s + len - e, ext, e) == 0;
}

/* The length of the file part of spec, and the dataset after ':' (or NULL). */
static size_t tensor_split(const char *spec, const char **dataset)
{
	size_t len = strlen(spec);
	*dataset = NULL;
	for (const char *c = strchr(spec, ':'); c; c = strchr(c + 1, ':')) {
		size_t flen = (size_t)(c - spec);
		if (tensor_ends_with(spec, flen, ".h5") || tensor_ends_with(spec, flen, ".hdf5")) {
			*dataset = c + 1;
			return flen;
		}
	}
	return len;
}

mk_format mk_tensor_format(const char *spec)
{
	const char *ds;
	size_t flen = tensor_split(spec, &ds);
	if (tensor_ends_with(spec, flen, ".npy") && !ds)
		return MK_FMT_NPY;
	if (tensor_ends_with(spec, flen, ".h5") || tensor_ends_with(spec, flen, ".hdf5"))
		return MK_FMT_H5;
	return MK_FMT_NONE;
}

/* ---- values ------------------------------------------------------------------ */

/* "[0, 3, 1]": the multi-index of element e. */
static void tensor_index_text(const mk_tensor *t, uint64_t e, char *buf, size_t cap)
{
	uint64_t idx[MK_TENSOR_MAX_RANK];
	size_t len = 0;
	for (int k = t->rank - 1; k >= 0; k--) {
		idx[k] = e % (uint64_t)t->dims[k];
		e /= (uint64_t)t->dims[k];
	}
	for (int k = 0; k < t->rank && len < cap; k++)
		len += (size_t)snprintf(buf + len, cap - len, "%s%" PRIu64, k ? ", " : "[", idx[k]);
	if (len < cap)
		snprintf(buf + len, cap - len, "]");
}

/* Element e is bad: src is what the file holds there. */
static int tensor_bad_value(const mk_tensor *t, const char *name, uint64_t e, double src)
{
	char idx[96];
	tensor_index_text(t, e, idx, sizeof idx);
	if (isfinite(src))
		return mk_error_set(MK_EFORMAT, "'%s': element %s = %g is beyond float32's range",
				    name, idx, src);
	return mk_error_set(MK_EFORMAT, "'%s': element %s is %s; inputs must be finite", name,
			    idx, isnan(src) ? "NaN" : "Inf");
}

/* Stores count doubles from src at element `first` of t, checked. */
static int tensor_put_f64(mk_tensor *t, const char *name, uint64_t first, const double *src,
			  size_t count)
{
	for (size_t k = 0; k < count; k++) {
		float v = (float)src[k];
		if (!isfinite(v))
			return tensor_bad_value(t, name, first + k, src[k]);
		t->data[first + k] = v;
	}
	return MK_OK;
}

static int tensor_check_finite(const mk_tensor *t, const char *name)
{
	uint64_t count = mk_tensor_count(t);

	if (!mk_floats_nonfinite(t->data, (size_t)count))
		return MK_OK;
	for (uint64_t e = 0; e < count; e++)
		if (!isfinite(t->data[e]))
			return tensor_bad_value(t, name, e, t->data[e]);
	return MK_OK;
}

/* ---- .npy ------------------------------------------------------------------- */

static bool tensor_host_big(void)
{
	return __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;
}

static void tensor_swap(uint8_t *p, size_t count, size_t size)
{
	for (size_t e = 0; e < count; e++, p += size)
		for (size_t a = 0, b = size - 1; a < b; a++, b--) {
			uint8_t x = p[a];
			p[a] = p[b];
			p[b] = x;
		}
}

/* '<f4', '>f8', '=f4': the dtype and whether its bytes need swapping. */
static int tensor_npy_descr(const mk_npy *h, mk_dtype *dtype, bool *swap)
{
	const char *d = h->descr;
	bool big;

	if (!strchr("<>=", d[0]) || d[0] == '\0' || d[1] != 'f' ||
	    (strcmp(d + 2, "4") != 0 && strcmp(d + 2, "8") != 0))
		return mk_error_set(MK_EFORMAT, "'%s': unsupported dtype '%s' (use float32 or "
				    "float64)", h->path, d);
	big = d[0] == '>' || (d[0] == '=' && tensor_host_big());
	*dtype = d[2] == '8' ? MK_DTYPE_F64 : MK_DTYPE_F32;
	*swap = big != tensor_host_big();
	return MK_OK;
}

#define TENSOR_RANKS "a tensor is [n, d], [heads, n, d] or [batch, heads, n, d]"

static int tensor_check_rank(const char *name, int rank)
{
	if (rank > MK_TENSOR_MAX_RANK)
		return mk_error_set(MK_EFORMAT, "'%s': rank above %d; " TENSOR_RANKS, name,
				    MK_TENSOR_MAX_RANK);
	if (rank < 2)
		return mk_error_set(MK_EFORMAT, "'%s': rank %d; " TENSOR_RANKS, name, rank);
	return MK_OK;
}

/* A Fortran-order file holds the array with its axes reversed, in C order:
 * element (i0, .., ir) of the array is at (ir, .., i0) there. */
static int tensor_unfortran(mk_tensor *t)
{
	uint64_t count = mk_tensor_count(t), stride[MK_TENSOR_MAX_RANK], s = 1;
	float *dst = mk_huge_alloc((size_t)count * sizeof(float), false); /* every element written */

	if (!dst)
		return mk_error_set(MK_ENOMEM, "out of memory");
	for (int k = 0; k < t->rank; k++) { /* stride in the file of axis k */
		stride[k] = s;
		s *= (uint64_t)t->dims[k];
	}
	for (uint64_t e = 0; e < count; e++) {
		uint64_t rest = e, src = 0;
		for (int k = t->rank - 1; k >= 0; k--) {
			src += rest % (uint64_t)t->dims[k] * stride[k];
			rest /= (uint64_t)t->dims[k];
		}
		dst[e] = t->data[src];
	}
	free(t->data);
	t->data = dst;
	return MK_OK;
}

/* float32 in the host's order from a regular file, pieces of this many
 * bytes read with pread by every thread, each checked for NaN and Inf while
 * it is in cache.  One thread copying from the page cache (and faulting the
 * pages in) took 10 ms of `maskkit attn`'s 24 MiB at n = 4096 (measured). */
#define TENSOR_PIECE ((size_t)4 << 20)

static int tensor_npy_pread(FILE *f, const char *path, mk_tensor *t, bool *bad)
{
	size_t bytes = (size_t)mk_tensor_count(t) * sizeof(float);
	int64_t pieces = (int64_t)((bytes + TENSOR_PIECE - 1) / TENSOR_PIECE);
	off_t at = ftello(f);
	int fd = fileno(f), err = 0, shrank = 0, hit = 0;

	if (at < 0)
		return mk_error_set(MK_ESYS, "'%s': read failed: %s", path, strerror(errno));
#pragma omp parallel for schedule(dynamic) reduction(| : hit, shrank) if (pieces > 1)
	for (int64_t k = 0; k < pieces; k++) {
		size_t from = (size_t)k * TENSOR_PIECE, len = bytes - from;
		char *dst = (char *)t->data + from;
		len = len < TENSOR_PIECE ? len : TENSOR_PIECE;
		for (size_t done = 0; done < len;) {
			ssize_t r = pread(fd, dst + done, len - done, at + (off_t)(from + done));
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				if (r < 0) {
#pragma omp atomic write
					err = errno;
				}
				shrank = 1;
				break;
			}
			done += (size_t)r;
		}
		hit |= mk_floats_nonfinite((const float *)dst, len / sizeof(float));
	}
	if (shrank)
		return mk_error_set(MK_ESYS, "'%s': read failed: %s", path,
				    err ? strerror(err) : "file shrank while reading");
	*bad = hit != 0;
	return MK_OK;
}

static int tensor_npy_data(FILE *f, const char *path, bool swap, mk_tensor *t, bool *checked)
{
	size_t size = t->dtype == MK_DTYPE_F64 ? 8 : 4;
	uint64_t count = mk_tensor_count(t);
	double buf[TENSOR_CHUNK];
	int ret = MK_OK;

	/* float32 goes straight to the tensor, a mebi-element per read (stdio
	 * would otherwise split it into reads of its buffer's size) */
	size_t chunk = t->dtype == MK_DTYPE_F64 ? TENSOR_CHUNK : (size_t)1 << 20;
	struct stat st;

	*checked = false;
	if (t->dtype == MK_DTYPE_F32 && !swap && count * sizeof(float) > TENSOR_PIECE &&
	    fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode)) {
		bool bad = false;
		if ((ret = tensor_npy_pread(f, path, t, &bad)))
			return ret;
		*checked = !bad; /* else tensor_check_finite finds which */
		return MK_OK;
	}

	for (uint64_t e = 0; e < count && ret == MK_OK;) {
		size_t k = count - e < chunk ? (size_t)(count - e) : chunk;
		void *dst = t->dtype == MK_DTYPE_F64 ? (void *)buf : (void *)(t->data + e);
		if (fread(dst, size, k, f) != k)
			return mk_error_set(MK_ESYS, "'%s': read failed: %s", path,
					    ferror(f) ? strerror(errno) : "file shrank while reading");
		if (swap)
			tensor_swap(dst, k, size);
		if (t->dtype == MK_DTYPE_F64)
			ret = tensor_put_f64(t, path, e, buf, k);
		e += k;
	}
	return ret;
}

static int tensor_read_npy(const char *path, uint64_t max_memory, bool map, mk_tensor *out)
{
	mk_npy h;
	mk_dtype dtype = MK_DTYPE_F32;
	bool swap = false, checked = false;
	uint64_t count = 0;
	char what[128];
	FILE *f;
	int ret = mk_input_open(path, (void **)&f);

	if (ret)
		return ret;
	ret = mk_npy_read_header(f, path, &h);
	if (ret == MK_OK)
		ret = tensor_npy_descr(&h, &dtype, &swap);
	if (ret == MK_OK)
		ret = tensor_check_rank(path, h.ndim);
	snprintf(what, sizeof what, "'%s'", path);
	if (ret == MK_OK)
		ret = tensor_size(h.ndim, h.shape, max_memory, what, &count);
	snprintf(what, sizeof what, "%" PRIu64 " '%s' values", count, h.descr);
	if (ret == MK_OK)
		ret = mk_npy_check_size(&h, f, count * (dtype == MK_DTYPE_F64 ? 8 : 4), what);
	if (ret == MK_OK && map && dtype == MK_DTYPE_F32 && !swap && !h.fortran &&
	    mk_tensor_map_npy(f, &h, out, &checked))
		goto check;
	if (ret == MK_OK)
		ret = tensor_new(h.ndim, h.shape, dtype, max_memory, path, false, out);
	if (ret == MK_OK && h.fortran) /* read it as the file holds it */
		for (int k = 0; k < h.ndim; k++)
			out->dims[k] = h.shape[h.ndim - 1 - k];
	if (ret == MK_OK)
		ret = tensor_npy_data(f, path, swap, out, &checked);
	if (ret == MK_OK && h.fortran) {
		memcpy(out->dims, h.shape, (size_t)h.ndim * sizeof *h.shape);
		ret = tensor_unfortran(out);
	}
check:
	if (ret == MK_OK && dtype == MK_DTYPE_F32 && !checked)
		ret = tensor_check_finite(out, path);
	if (ret)
		mk_tensor_release(out);
	free(h.text);
	fclose(f);
	return ret;
}

/* ---- HDF5 ------------------------------------------------------------------- */

/* The only dataset of rank 2 to 4 in the file; *name gets its path. */
static int tensor_h5_find(hid_t file, const char *path, char **name)
{
	char **found[3] = {NULL, NULL, NULL}, list[320];
	size_t count[3] = {0, 0, 0}, total = 0;
	int ret = MK_OK;

	for (int r = 0; r < 3 && ret == MK_OK; r++) {
		ret = mk_h5_datasets(file, path, r + 2, NULL, " (give FILE.h5:/dataset)", &found[r],
				     &count[r]);
		total += count[r];
	}
	for (int r = 0; r < 3 && ret == MK_OK; r++) {
		if (total == 1 && count[r] == 1 && !(*name = strdup(found[r][0])))
			ret = mk_error_set(MK_ENOMEM, "out of memory");
		if (total > 1 && count[r]) {
			mk_h5_join(list, sizeof list, found[r], count[r]);
			ret = mk_error_set(MK_EFORMAT, "'%s': %zu datasets of rank 2 to 4 to choose "
					   "from (give FILE.h5:/dataset): %s%s", path, total, list,
					   total > count[r] ? ", ..." : "");
		}
	}
	if (ret == MK_OK && total == 0)
		ret = mk_error_set(MK_EFORMAT, "'%s': no dataset of rank 2 to 4 in the file", path);
	for (int r = 0; r < 3; r++)
		mk_h5_names_free(found[r]);
	return ret;
}

/* Checks the dataset's rank and type; fills t's rank, dims and dtype. */
static int tensor_h5_shape(hid_t dset, const char *path, const char *name, mk_tensor *t)
{
	hid_t space = H5Dget_space(dset), ftype = H5Dget_type(dset);
	hsize_t dims[H5S_MAX_RANK];
	int rank = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
	H5T_class_t cls = ftype >= 0 ? H5Tget_class(ftype) : H5T_NO_CLASS;
	size_t size = ftype >= 0 ? H5Tget_size(ftype) : 0;
	int ret = MK_OK;

	if (rank >= 2 && rank <= MK_TENSOR_MAX_RANK)
		H5Sget_simple_extent_dims(space, dims, NULL);
	if (space >= 0)
		H5Sclose(space);
	if (ftype >= 0)
		H5Tclose(ftype);
	if (rank < 2 || rank > MK_TENSOR_MAX_RANK)
		return mk_error_set(MK_EFORMAT, "'%s': dataset '%s' has rank %d; " TENSOR_RANKS,
				    path, name, rank);
	if (cls != H5T_FLOAT || (size != 4 && size != 8))
		return mk_error_set(MK_EFORMAT, "'%s': dataset '%s' is not float32 or float64",
				    path, name);
	t->rank = rank;
	t->dtype = size == 8 ? MK_DTYPE_F64 : MK_DTYPE_F32;
	for (int k = 0; k < rank; k++) {
		if (dims[k] > (hsize_t)INT64_MAX)
			return mk_error_set(MK_ERANGE, "'%s': dataset '%s' is too large", path, name);
		t->dims[k] = (int64_t)dims[k];
	}
	return ret;
}

/* The layout, and one read of everything (the tensor, a float64 copy for
 * float64 data, one decompressed chunk) within max_memory. */
static int tensor_h5_bound(hid_t *dset, const char *path, const char *name, const mk_tensor *t,
			   uint64_t count, uint64_t max_memory)
{
	hsize_t dims[MK_TENSOR_MAX_RANK];

	for (int k = 0; k < t->rank; k++)
		dims[k] = (hsize_t)t->dims[k];
	return mk_h5_prepare_read(dset, path, name, t->rank, dims, &(mk_h5_reads){
		.count = dims, .steps = {-1, -1}, .max_memory = max_memory,
		.used = mk_h5_mul(count, t->dtype == MK_DTYPE_F64 ? 12 : 4)});
}

static int tensor_h5_data(hid_t dset, const char *path, const char *name, mk_tensor *t,
			  uint64_t max_memory)
{
	uint64_t count = mk_tensor_count(t), bytes;
	double *buf = NULL;
	char what[64];
	int ret = MK_OK;

	if (t->dtype == MK_DTYPE_F32) {
		if (H5Dread(dset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, t->data) < 0)
			return mk_error_set(MK_EFORMAT, "'%s': cannot read dataset '%s'", path, name);
		return tensor_check_finite(t, path);
	}
	/* the doubles and the floats are held together for a moment */
	snprintf(what, sizeof what, "a float64 dataset of %" PRIu64 " values", count);
	if ((ret = mk_mul_u64(count, 12, &bytes)) ||
	    (ret = mk_check_memory(bytes, max_memory, what)))
		return ret;
	if (!(buf = malloc((size_t)count * sizeof *buf)))
		return mk_error_set(MK_ENOMEM, "out of memory for %s", what);
	if (H5Dread(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
		ret = mk_error_set(MK_EFORMAT, "'%s': cannot read dataset '%s'", path, name);
	else
		ret = tensor_put_f64(t, path, 0, buf, (size_t)count);
	free(buf);
	return ret;
}

static int tensor_read_h5(const char *path, const char *dataset, uint64_t max_memory,
			  mk_tensor *out)
{
	hid_t file = H5I_INVALID_HID, dset = H5I_INVALID_HID;
	char *name = NULL;
	mk_tensor t = {0};
	uint64_t count;
	int ret = mk_h5_open(path, &file);

	if (ret == MK_OK && dataset && !(name = strdup(dataset)))
		ret = mk_error_set(MK_ENOMEM, "out of memory");
	else if (ret == MK_OK && !dataset)
		ret = tensor_h5_find(file, path, &name);
	if (ret == MK_OK && (H5Lexists(file, name, H5P_DEFAULT) <= 0 ||
			     (dset = H5Dopen2(file, name, H5P_DEFAULT)) < 0))
		ret = mk_error_set(MK_EFORMAT, "'%s': no dataset '%s'", path, name);
	if (ret == MK_OK)
		ret = tensor_h5_shape(dset, path, name, &t);
	if (ret == MK_OK)
		ret = tensor_size(t.rank, t.dims, max_memory, path, &count);
	if (ret == MK_OK)
		ret = tensor_h5_bound(&dset, path, name, &t, count, max_memory);
	if (ret == MK_OK)
		ret = tensor_new(t.rank, t.dims, t.dtype, max_memory, path, false, out);
	if (ret == MK_OK && (ret = tensor_h5_data(dset, path, name, out, max_memory)))
		mk_tensor_release(out);
	if (dset >= 0)
		H5Dclose(dset);
	if (file >= 0)
		H5Fclose(file);
	free(name);
	return ret;
}

/* ---- entry points ------------------------------------------------------------ */

size_t mk_tensor_file_len(const char *spec)
{
	const char *dataset;
	return tensor_split(spec, &dataset);
}

int mk_tensor_spec(const char *spec, char **file, const char **dataset, mk_format *fmt)
{
	size_t flen = tensor_split(spec, dataset);
	*fmt = mk_tensor_format(spec);
	if (*fmt == MK_FMT_NONE)
		return mk_error_set(MK_EINVAL, "'%s': a tensor file is .npy, .h5 or .h5:/dataset",
				    spec);
	if (*dataset && !**dataset)
		return mk_error_set(MK_EINVAL, "'%s': no dataset after ':'", spec);
	if (!(*file = strndup(spec, flen)))
		return mk_error_set(MK_ENOMEM, "out of memory");
	return MK_OK;
}

static int tensor_read(const char *spec, uint64_t max_memory, bool map, mk_tensor *out)
{
	const char *dataset;
	char *file = NULL;
	mk_format fmt;
	int ret;

	memset(out, 0, sizeof *out);
	ret = mk_tensor_spec(spec, &file, &dataset, &fmt);
	if (ret == MK_OK && fmt == MK_FMT_NPY)
		ret = tensor_read_npy(file, max_memory, map, out);
	else if (ret == MK_OK)
		ret = tensor_read_h5(file, dataset, max_memory, out);
	free(file);
	return ret;
}

int mk_tensor_read(const char *spec, uint64_t max_memory, mk_tensor *out)
{
	return tensor_read(spec, max_memory, false, out);
}

int mk_tensor_read_mapped(const char *spec, uint64_t max_memory, mk_tensor *out)
{
	return tensor_read(spec, max_memory, true, out);
}
