/*
 * Trained model weights in HDF5 files (the other sources: weights_st.c; the
 * dispatch: weights_open.c): Keras/TensorFlow checkpoints (nested
 * groups such as .../position_embeddings/embeddings:0) and PyTorch state
 * dicts saved with h5py (dotted names such as
 * bert.embeddings.position_embeddings.weight).
 *
 * Datasets are found by substring (mk_weights_find) among those reached
 * through hard links, and read whole into doubles: HDF5 converts any float
 * (including h5py's IEEE half float) or integer type on the way.
 *
 * A dataset named by the caller is opened through a link access list that
 * refuses external links, so a weights file cannot make us open another
 * file.
 */
#include "config.h"
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "weights.h"
#include "weights_internal.h"

#define MK_WEIGHTS_MAX_ELEMENT 16 /* bytes in the widest number we convert */

static herr_t mk_weights_no_elink(const char *parent_file, const char *parent_group,
				  const char *child_file, const char *child_object,
				  unsigned *acc_flags, hid_t fapl, void *arg)
{
	(void)parent_file, (void)parent_group, (void)child_file, (void)child_object;
	(void)acc_flags, (void)fapl, (void)arg;
	return -1;
}

int mk_weights_h5_open(mk_weights *w, const char *file)
{
	int ret = mk_h5_open(file, &w->file);

	if (ret == MK_OK && ((w->lapl = H5Pcreate(H5P_LINK_ACCESS)) < 0 ||
			     H5Pset_elink_cb(w->lapl, mk_weights_no_elink, NULL) < 0))
		ret = mk_error_set(MK_ESYS, "HDF5 cannot make a link access list");
	return ret;
}

void mk_weights_h5_close(mk_weights *w)
{
	if (w->lapl >= 0)
		H5Pclose(w->lapl);
	if (w->file >= 0)
		H5Fclose(w->file);
}

/* ---- finding datasets ---------------------------------------------------- */

int mk_weights_h5_list(mk_weights *w, int rank, const char *const *needles, char ***out,
		       size_t *count)
{
	int ret = mk_h5_silence();

	if (ret)
		return ret;
	return mk_h5_datasets(w->file, w->path, rank, needles, NULL, out, count);
}

void mk_weights_list_free(char **list)
{
	mk_h5_names_free(list);
}

/* An MK_EFORMAT error: head, as many of the names as fit in mk_error()'s
 * buffer (at least one short one), then tail. */
static int mk_weights_names_error(const char *head, char *const *names, size_t count,
				  const char *tail)
{
	char list[MK_H5_MESSAGE];
	size_t used = strlen(head) + strlen(tail);

	mk_h5_join(list, used + 64 < sizeof list ? sizeof list - used : 64, names, count);
	return mk_error_set(MK_EFORMAT, "%s%s%s", head, list, tail);
}

static int mk_weights_none_error(mk_weights *w, const char *needle, const char *what)
{
	char **all = NULL, head[MK_H5_MESSAGE];
	size_t count = 0;
	int ret;

	ret = mk_weights_list(w, 2, NULL, &all, &count);
	if (ret == MK_OK && count == 0)
		ret = mk_error_set(MK_EFORMAT, "'%s': no 2-D dataset matches '%s' (%s), and the "
				   "file has no 2-D datasets", w->path, needle, what);
	else if (ret == MK_OK) {
		snprintf(head, sizeof head, "'%s': no 2-D dataset matches '%s' (%s); the file's "
			 "%zu 2-D datasets: ", w->path, needle, what, count);
		ret = mk_weights_names_error(head, all, count, "");
	}
	mk_h5_names_free(all);
	return ret;
}

int mk_weights_find(mk_weights *w, const char *needle, const char *what, char **path)
{
	const char *needles[2] = {needle, NULL};
	char **found = NULL, head[MK_H5_MESSAGE];
	size_t count = 0;
	int ret;

	*path = NULL;
	if (!needle)
		return mk_error_set(MK_EINVAL, "no dataset name to search for");
	if (!what)
		what = "the dataset";
	if (w->kind == MK_WEIGHTS_NPY) /* one array, whatever its name */
		return (*path = strdup(MK_WEIGHTS_NPY_NAME)) ? MK_OK
							     : mk_error_set(MK_ENOMEM, "out of memory");
	ret = mk_weights_list(w, 2, needles, &found, &count);
	if (ret == MK_OK && count == 0)
		ret = mk_weights_none_error(w, needle, what);
	else if (ret == MK_OK && count > 1) {
		snprintf(head, sizeof head, "'%s': %zu datasets match '%s' (%s): ", w->path, count,
			 needle, what);
		ret = mk_weights_names_error(head, found, count, "; choose one");
	} else if (ret == MK_OK) {
		*path = found[0];
		found[0] = NULL;
	}
	mk_h5_names_free(found);
	return ret;
}

/* ---- reading ------------------------------------------------------------- */

/* "/a/b" from "a/b", "/a/b" or "//a//b/": one leading '/', no empty steps. */
char *mk_weights_normalise(const char *dataset)
{
	char *abs = malloc(strlen(dataset) + 2);
	const char *c = dataset;
	size_t len = 0;

	if (!abs)
		return NULL;
	while (*(c += strspn(c, "/"))) {
		size_t step = strcspn(c, "/");
		abs[len++] = '/';
		memcpy(abs + len, c, step);
		len += step;
		c += step;
	}
	if (len == 0)
		abs[len++] = '/';
	abs[len] = '\0';
	return abs;
}

/* H5Lexists fails, rather than answering no, when a group on the way is
 * missing, so each step of name is looked up in turn. */
static int mk_weights_lookup(const mk_weights *w, const char *name)
{
	char *step = strdup(name);
	H5L_info_t info;
	int ret = MK_OK;

	if (!step)
		return mk_error_set(MK_ENOMEM, "out of memory");
	for (char *p = step + 1; ret == MK_OK; p++) {
		char c = *p;
		if (c != '/' && c != '\0')
			continue;
		*p = '\0';
		if (H5Lexists(w->file, step, w->lapl) <= 0)
			ret = mk_error_set(MK_EFORMAT, "'%s': no dataset '%s'", w->path, name);
		else if (H5Lget_info(w->file, step, &info, w->lapl) >= 0 &&
			 info.type == H5L_TYPE_EXTERNAL)
			ret = mk_error_set(MK_EFORMAT, "'%s': '%s' is a link to another file (not "
					   "followed)", w->path, step);
		*p = c;
		if (c == '\0')
			break;
	}
	free(step);
	return ret;
}

static int mk_weights_open_dataset(const mk_weights *w, const char *name, hid_t *dset)
{
	int ret = strcmp(name, "/") ? mk_weights_lookup(w, name) : MK_OK;
	hid_t obj;

	if (ret)
		return ret;
	obj = H5Oopen(w->file, name, w->lapl);
	if (obj < 0)
		return mk_error_set(MK_EFORMAT, "'%s': cannot open dataset '%s'", w->path, name);
	if (H5Iget_type(obj) != H5I_DATASET) {
		ret = mk_error_set(MK_EFORMAT, "'%s': '%s' is a %s, not a dataset", w->path, name,
				   H5Iget_type(obj) == H5I_GROUP ? "group" : "named type");
		H5Oclose(obj);
		return ret;
	}
	*dset = obj;
	return MK_OK;
}

/* "3 x 4", or "3" for one dimension. */
static void mk_weights_dims(char *buf, size_t cap, int rank, const hsize_t *dims)
{
	if (rank == 1)
		snprintf(buf, cap, "%llu", (unsigned long long)dims[0]);
	else
		snprintf(buf, cap, "%llu x %llu", (unsigned long long)dims[0],
			 (unsigned long long)dims[1]);
}

/* The matrix shape of a dataset of the given rank: 1 x len for rank 1. */
static int mk_weights_shape(const mk_weights *w, hid_t dset, const char *name, int rank,
			    int64_t *rows, int64_t *cols)
{
	hid_t space = H5Dget_space(dset);
	int ndims = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
	hsize_t dims[2] = {0, 0};
	char shape[48];

	if (ndims == rank && H5Sget_simple_extent_dims(space, dims, NULL) < 0)
		ndims = -1;
	if (space >= 0)
		H5Sclose(space);
	if (ndims < 0)
		return mk_error_set(MK_EFORMAT, "'%s': cannot read the shape of dataset '%s'",
				    w->path, name);
	if (ndims != rank)
		return mk_error_set(MK_EFORMAT, "'%s': dataset '%s' has %d dimension%s, expected "
				    "%d", w->path, name, ndims, ndims == 1 ? "" : "s", rank);
	mk_weights_dims(shape, sizeof shape, rank, dims);
	if (dims[0] == 0 || dims[rank - 1] == 0)
		return mk_error_set(MK_EFORMAT, "'%s': dataset '%s' is empty (shape %s)", w->path,
				    name, shape);
	if (dims[0] > INT64_MAX || dims[rank - 1] > INT64_MAX)
		return mk_error_set(MK_ERANGE, "'%s': dataset '%s' is too large (shape %s)",
				    w->path, name, shape);
	*rows = rank == 1 ? 1 : (int64_t)dims[0];
	*cols = (int64_t)dims[rank - 1];
	return MK_OK;
}

/* The layout, and one read of everything (the matrix, one decompressed
 * chunk) within max_memory. */
static int mk_weights_bound(const mk_weights *w, hid_t *dset, const char *name, int rank,
			    int64_t rows, int64_t cols, uint64_t max_memory)
{
	hsize_t dims[2] = {rank == 1 ? (hsize_t)cols : (hsize_t)rows, (hsize_t)cols};

	return mk_h5_prepare_read(dset, w->path, name, rank, dims, &(mk_h5_reads){
		.count = dims, .steps = {-1, -1}, .max_memory = max_memory,
		.used = mk_h5_mul(mk_h5_mul((uint64_t)rows, (uint64_t)cols), sizeof(double))});
}

static const char *mk_weights_class_name(H5T_class_t cls)
{
	switch (cls) {
	case H5T_STRING: return "strings";
	case H5T_COMPOUND: return "compound values";
	case H5T_ENUM: return "enum values (h5py's booleans are enums)";
	case H5T_BITFIELD: return "bitfields";
	case H5T_OPAQUE: return "opaque values";
	case H5T_REFERENCE: return "references";
	case H5T_VLEN: return "variable-length sequences";
	case H5T_ARRAY: return "arrays";
	case H5T_TIME: return "times";
	default: return "values of an unknown type";
	}
}

/* Any float or integer HDF5 can convert to double. */
static int mk_weights_check_type(const mk_weights *w, hid_t dset, const char *name)
{
	hid_t ftype = H5Dget_type(dset);
	H5T_class_t cls = ftype >= 0 ? H5Tget_class(ftype) : H5T_NO_CLASS;
	size_t size = ftype >= 0 ? H5Tget_size(ftype) : 0;

	if (ftype >= 0)
		H5Tclose(ftype);
	if (cls != H5T_FLOAT && cls != H5T_INTEGER)
		return mk_error_set(MK_EFORMAT, "'%s': dataset '%s' holds %s, not floats or "
				    "integers", w->path, name, mk_weights_class_name(cls));
	if (size == 0 || size > MK_WEIGHTS_MAX_ELEMENT)
		return mk_error_set(MK_EFORMAT, "'%s': dataset '%s' has %zu-byte numbers (at most "
				    "%d bytes)", w->path, name, size, MK_WEIGHTS_MAX_ELEMENT);
	return MK_OK;
}

int mk_weights_check_values(const mk_weights *w, const char *name, const void *data, bool f32,
			    int rank, const int64_t *dims)
{
	uint64_t total = 1;

	for (int k = 0; k < rank; k++)
		total *= (uint64_t)dims[k];
	for (uint64_t e = 0; e < total; e++) {
		double v = f32 ? ((const float *)data)[e] : ((const double *)data)[e];
		char at[96];
		size_t len = 0;
		uint64_t rest = e, stride = total;
		if (isfinite(v))
			continue;
		for (int k = 0; k < rank && len < sizeof at; k++) {
			stride /= (uint64_t)dims[k];
			len += (size_t)snprintf(at + len, sizeof at - len, "%s%" PRIu64, k ? ", " : "",
						rest / stride);
			rest %= stride;
		}
		/* as float32, inf may also be a float64 beyond float32's range */
		return mk_error_set(MK_EFORMAT, "'%s': dataset '%s' has a non-finite value (%s) at "
				    "[%s]%s", w->path, name, isnan(v) ? "nan" : v > 0 ? "inf" : "-inf",
				    at, f32 && !isnan(v) ? " as float32" : "");
	}
	return MK_OK;
}

int mk_weights_h5_read(mk_weights *w, const char *dataset, int rank, uint64_t max_memory,
		       mk_matrix *out)
{
	hid_t dset = H5I_INVALID_HID;
	char *name = NULL, what[MK_H5_MESSAGE];
	int64_t rows = 0, cols = 0;
	int ret;

	if ((ret = mk_h5_silence()))
		return ret;
	name = mk_weights_normalise(dataset);
	ret = name ? mk_weights_open_dataset(w, name, &dset)
		   : mk_error_set(MK_ENOMEM, "out of memory");
	if (ret == MK_OK)
		ret = mk_weights_shape(w, dset, name, rank, &rows, &cols);
	if (ret == MK_OK)
		ret = mk_weights_check_type(w, dset, name);
	if (ret == MK_OK)
		ret = mk_weights_bound(w, &dset, name, rank, rows, cols, max_memory);
	if (ret == MK_OK) {
		snprintf(what, sizeof what, "'%s': dataset '%s'", w->path, name);
		ret = mk_matrix_new(rows, cols, max_memory, what, out);
	}
	if (ret == MK_OK &&
	    H5Dread(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, out->data) < 0)
		ret = mk_error_set(MK_EFORMAT, "'%s': cannot read dataset '%s'", w->path, name);
	if (ret == MK_OK)
		ret = mk_weights_check_values(w, name, out->data, false, rank,
					      (int64_t[2]){rank == 1 ? out->cols : out->rows, out->cols});
	if (ret)
		mk_matrix_release(out);
	if (dset >= 0)
		H5Oclose(dset);
	free(name);
	return ret;
}

/* The shape of a dataset of rank 1 to 4, none of its dimensions empty, and
 * its elements (*count, bounded by MK_H5 sizes that fit in memory). */
static int mk_weights_shape_any(const mk_weights *w, hid_t dset, const char *name, int *rank,
				hsize_t dims[4], uint64_t *count)
{
	hid_t space = H5Dget_space(dset);
	int nd = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;

	if (nd >= 1 && nd <= 4 && H5Sget_simple_extent_dims(space, dims, NULL) < 0)
		nd = -1;
	if (space >= 0)
		H5Sclose(space);
	if (nd < 0)
		return mk_error_set(MK_EFORMAT, "'%s': cannot read the shape of dataset '%s'",
				    w->path, name);
	if (nd < 1 || nd > 4)
		return mk_error_set(MK_EFORMAT, "'%s': dataset '%s' has %d dimensions, expected 1 "
				    "to 4", w->path, name, nd);
	*count = 1;
	for (int k = 0; k < nd; k++) {
		if (dims[k] == 0)
			return mk_error_set(MK_EFORMAT, "'%s': dataset '%s' is empty", w->path, name);
		*count = mk_h5_mul(*count, dims[k]);
	}
	if (*count > INT64_MAX / sizeof(float))
		return mk_error_set(MK_ERANGE, "'%s': dataset '%s' is too large", w->path, name);
	*rank = nd;
	return MK_OK;
}

int mk_weights_h5_read_f32(mk_weights *w, const char *dataset, uint64_t max_memory,
			   float **out, int *rank, int64_t dims[4])
{
	hid_t dset = H5I_INVALID_HID;
	hsize_t hd[4] = {0};
	uint64_t count = 0;
	char *name = NULL;
	int ret;

	if ((ret = mk_h5_silence()))
		return ret;
	name = mk_weights_normalise(dataset);
	ret = name ? mk_weights_open_dataset(w, name, &dset)
		   : mk_error_set(MK_ENOMEM, "out of memory");
	if (ret == MK_OK)
		ret = mk_weights_shape_any(w, dset, name, rank, hd, &count);
	if (ret == MK_OK)
		ret = mk_weights_check_type(w, dset, name);
	if (ret == MK_OK)
		ret = mk_h5_prepare_read(&dset, w->path, name, *rank, hd, &(mk_h5_reads){
			.count = hd, .steps = {-1, -1}, .max_memory = max_memory,
			.used = count * sizeof(float)});
	if (ret == MK_OK && !(*out = malloc((size_t)count * sizeof **out)))
		ret = mk_error_set(MK_ENOMEM, "out of memory for dataset '%s'", name);
	for (int k = 0; ret == MK_OK && k < 4; k++)
		dims[k] = k < *rank ? (int64_t)hd[k] : 0;
	if (ret == MK_OK &&
	    H5Dread(dset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, *out) < 0)
		ret = mk_error_set(MK_EFORMAT, "'%s': cannot read dataset '%s' as float32", w->path,
				   name);
	if (ret == MK_OK)
		ret = mk_weights_check_values(w, name, *out, true, *rank, dims);
	if (ret) {
		free(*out);
		*out = NULL;
	}
	if (dset >= 0)
		H5Oclose(dset);
	free(name);
	return ret;
}
