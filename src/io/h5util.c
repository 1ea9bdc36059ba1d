/*
 * HDF5 helpers shared by every reader (masks, data sets, indicators,
 * tensors, weights, lengths): opening a file without HDF5 printing
 * anything and listing its datasets (h5read.c: what a read may trust).
 *
 * The listing walks every link with H5Lvisit.  libhdf5 only remembers the
 * groups it has visited when their reference count is above one, so a
 * corrupt file that links a group into itself would be walked forever: the
 * walk is cut off after MK_H5_MAX_VISIT links, names longer than
 * MK_H5_MAX_NAME or MK_H5_MAX_KEPT bytes of kept names.
 */
#include "config.h"
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "par.h"
#include "h5util.h"
#ifdef H5_HAVE_PARALLEL
#include "par_mpi.h" /* MPI_COMM_WORLD through the table: MPI is loaded on first use */
#endif

#define MK_H5_MAX_NAME 4096               /* bytes in one path */
#define MK_H5_MAX_KEPT ((size_t)16 << 20) /* bytes of paths kept by one walk */

/* Not restored afterwards: after some corrupt files HDF5 fails to tidy up
 * at exit, and with printing on it then writes its error stack to stderr
 * from the exit handler, long after we returned a clean error. */
int mk_h5_silence(void)
{
	int ret = mk_h5_load();

	if (ret == MK_OK)
		H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	return ret;
}

static int mk_h5_probe(const char *path)
{
	htri_t is_h5;
	int ret = mk_input_check(path);

	if (ret)
		return ret;
#if H5_VERSION_GE(1, 12, 0)
	is_h5 = H5Fis_accessible(path, H5P_DEFAULT);
#else
	is_h5 = H5Fis_hdf5(path);
#endif
	return is_h5 > 0 ? MK_OK : mk_error_set(MK_EFORMAT, "'%s': not an HDF5 file", path);
}

int mk_h5_open(const char *path, hid_t *file)
{
	int ret;

	*file = H5I_INVALID_HID;
	if ((ret = mk_h5_silence()) || (ret = mk_h5_probe(path)))
		return ret;
	*file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	if (*file < 0)
		return mk_error_set(MK_EFORMAT, "'%s': HDF5 cannot open the file (truncated or "
				    "damaged?)", path);
	return MK_OK;
}

/* Every rank probes before the collective open, so that a file missing on
 * one node fails on every rank instead of leaving the others inside
 * MPI_File_open. */
int mk_h5_open_par(const char *path, hid_t *file)
{
	hid_t fapl = H5I_INVALID_HID;
	int ret;

	*file = H5I_INVALID_HID;
	if (mk_par_size() == 1)
		return mk_h5_open(path, file);
	ret = mk_h5_silence();
	if ((ret = mk_par_agree(ret ? ret : mk_h5_probe(path), NULL)))
		return ret;
#ifdef H5_HAVE_PARALLEL
	fapl = H5Pcreate(H5P_FILE_ACCESS);
	if (fapl >= 0 && H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL) >= 0)
		*file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
	if (fapl >= 0)
		H5Pclose(fapl);
#else
	(void)fapl;
	*file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
#endif
	ret = *file < 0 ? mk_error_set(MK_EFORMAT, "'%s': HDF5 cannot open the file with MPI-IO "
				       "(truncated or damaged?)", path) : MK_OK;
	/* a rank that opened it while another could not keeps its handle: closing
	 * is collective and the others would not take part */
	return mk_par_agree(ret, NULL);
}

/* ---- listing datasets ---------------------------------------------------- */

struct mk_h5_walk {
	int rank;                   /* 0: any */
	const char *const *needles; /* may be NULL */
	char **names;               /* NULL-terminated once count > 0 */
	size_t count, cap, kept;    /* kept: bytes of names */
	long visited;
	bool cut, nomem;
};

static bool mk_h5_matches(const char *name, const char *const *needles)
{
	for (; needles && *needles; needles++)
		if (!strstr(name, *needles))
			return false;
	return true;
}

/* The rank of the dataset at name, or -1 for anything else. */
static int mk_h5_rank(hid_t group, const char *name)
{
	hid_t obj = H5Oopen(group, name, H5P_DEFAULT), space;
	int ndims = -1;

	if (obj < 0)
		return -1;
	if (H5Iget_type(obj) == H5I_DATASET && (space = H5Dget_space(obj)) >= 0) {
		ndims = H5Sget_simple_extent_ndims(space);
		H5Sclose(space);
	}
	H5Oclose(obj);
	return ndims;
}

/* Takes ownership of name. */
static bool mk_h5_keep(struct mk_h5_walk *walk, char *name)
{
	if (walk->count + 1 >= walk->cap) {
		size_t cap = walk->cap ? 2 * walk->cap : 16;
		char **names = realloc(walk->names, cap * sizeof *names);
		if (!names) {
			free(name);
			walk->nomem = true;
			return false;
		}
		walk->names = names;
		walk->cap = cap;
	}
	walk->names[walk->count++] = name;
	walk->names[walk->count] = NULL;
	return true;
}

static herr_t mk_h5_visit(hid_t group, const char *name, const H5L_info_t *info, void *arg)
{
	struct mk_h5_walk *walk = arg;
	size_t len = strlen(name);
	char *full;
	int ndims;

	if (info->type != H5L_TYPE_HARD)
		return 0;
	if (++walk->visited > MK_H5_MAX_VISIT || len > MK_H5_MAX_NAME ||
	    walk->kept + len > MK_H5_MAX_KEPT) {
		walk->cut = true;
		return -1;
	}
	full = malloc(len + 2);
	if (!full) {
		walk->nomem = true;
		return -1;
	}
	full[0] = '/';
	memcpy(full + 1, name, len + 1);
	ndims = mk_h5_matches(full, walk->needles) ? mk_h5_rank(group, name) : -1;
	if (ndims < 0 || (walk->rank && ndims != walk->rank)) {
		free(full);
		return 0;
	}
	walk->kept += len + 1;
	return mk_h5_keep(walk, full) ? 0 : -1;
}

static int mk_h5_compare(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int mk_h5_datasets(hid_t file, const char *path, int rank, const char *const *needles,
		   const char *hint, char ***out, size_t *count)
{
	struct mk_h5_walk walk = {.rank = rank, .needles = needles};
	int ret;

	*out = NULL;
	*count = 0;
	if (H5Lvisit(file, H5_INDEX_NAME, H5_ITER_INC, mk_h5_visit, &walk) >= 0)
		ret = MK_OK;
	else if (walk.nomem)
		ret = mk_error_set(MK_ENOMEM, "out of memory");
	else if (walk.cut)
		ret = mk_error_set(MK_EFORMAT, "'%s': the file's groups loop or are too many to "
				   "search%s", path, hint ? hint : "");
	else
		ret = mk_error_set(MK_EFORMAT, "'%s': cannot list the datasets in the file", path);
	if (ret == MK_OK && !walk.names && !(walk.names = calloc(1, sizeof *walk.names)))
		ret = mk_error_set(MK_ENOMEM, "out of memory");
	if (ret) {
		mk_h5_names_free(walk.names);
		return ret;
	}
	qsort(walk.names, walk.count, sizeof *walk.names, mk_h5_compare);
	*out = walk.names;
	*count = walk.count;
	return MK_OK;
}

void mk_h5_names_free(char **names)
{
	for (char **p = names; p && *p; p++)
		free(*p);
	free(names);
}

void mk_h5_join(char *buf, size_t cap, char *const *names, size_t count)
{
	static const char more[] = ", ...";
	size_t len = 0, k;

	assert(cap >= sizeof more);
	buf[0] = '\0';
	for (k = 0; k < count && k < MK_H5_LIST; k++) {
		size_t need = (k ? 2 : 0) + strlen(names[k]);
		/* leave room for ", ..." while names remain after this one */
		size_t reserve = k + 1 < count ? sizeof more : 1;
		if (len + need + reserve > cap)
			break;
		len += (size_t)snprintf(buf + len, cap - len, "%s%s", k ? ", " : "", names[k]);
	}
	if (k < count)
		snprintf(buf + len, cap - len, "%s", k ? more : more + 2);
}

bool mk_h5_same_object(hid_t a, hid_t b)
{
#if H5_VERSION_GE(1, 12, 0)
	H5O_info2_t x, y;
	int cmp = 1;
	return H5Oget_info3(a, &x, H5O_INFO_BASIC) >= 0 && H5Oget_info3(b, &y, H5O_INFO_BASIC) >= 0 &&
	       x.fileno == y.fileno && H5Otoken_cmp(a, &x.token, &y.token, &cmp) >= 0 && cmp == 0;
#else
	H5O_info_t x, y;
	return H5Oget_info2(a, &x, H5O_INFO_BASIC) >= 0 && H5Oget_info2(b, &y, H5O_INFO_BASIC) >= 0 &&
	       x.fileno == y.fileno && x.addr == y.addr;
#endif
}

/* Index by log2 of the size in bytes (1, 2, 4, 8). */
static int h5_size_index(size_t size)
{
	return size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : size == 8 ? 3 : -1;
}

mk_dtype mk_h5_dtype(hid_t ftype)
{
	static const mk_dtype ints[4] = {MK_DTYPE_I8, MK_DTYPE_I16, MK_DTYPE_I32, MK_DTYPE_I64};
	static const mk_dtype uints[4] = {MK_DTYPE_U8, MK_DTYPE_U16, MK_DTYPE_U32, MK_DTYPE_U64};
	static const mk_dtype floats[4] = {MK_DTYPE_NONE, MK_DTYPE_F16, MK_DTYPE_F32, MK_DTYPE_F64};
	static const mk_dtype enums[4] = {MK_DTYPE_BOOL, MK_DTYPE_ENUM16, MK_DTYPE_ENUM32,
					  MK_DTYPE_ENUM64};
	static const mk_dtype bits[4] = {MK_DTYPE_BITS8, MK_DTYPE_BITS16, MK_DTYPE_BITS32,
					 MK_DTYPE_BITS64};
	int k = h5_size_index(H5Tget_size(ftype));

	if (k < 0)
		return MK_DTYPE_NONE;
	switch (H5Tget_class(ftype)) {
	case H5T_FLOAT:
		return floats[k];
	case H5T_INTEGER:
		return H5Tget_sign(ftype) == H5T_SGN_NONE ? uints[k] : ints[k];
	case H5T_ENUM:
		return enums[k];
	case H5T_BITFIELD:
		return bits[k];
	default:
		return MK_DTYPE_NONE;
	}
}

/* Attribute `name` of obj with its type and space (each H5I_INVALID_HID
 * when absent), and their release. */
typedef struct h5_attr {
	hid_t a, t, sp;
} h5_attr;

static h5_attr h5_attr_open(hid_t obj, const char *name)
{
	h5_attr x = {H5I_INVALID_HID, H5I_INVALID_HID, H5I_INVALID_HID};

	if (H5Aexists(obj, name) > 0 && (x.a = H5Aopen(obj, name, H5P_DEFAULT)) >= 0) {
		x.t = H5Aget_type(x.a);
		x.sp = H5Aget_space(x.a);
	}
	return x;
}

static void h5_attr_close(h5_attr *x)
{
	if (x->sp >= 0)
		H5Sclose(x->sp);
	if (x->t >= 0)
		H5Tclose(x->t);
	if (x->a >= 0)
		H5Aclose(x->a);
}

bool mk_h5_attr_int(hid_t obj, const char *name, int64_t *v)
{
	h5_attr x = h5_attr_open(obj, name);
	bool ok = x.t >= 0 && x.sp >= 0 && H5Tget_class(x.t) == H5T_INTEGER &&
		  H5Sget_simple_extent_npoints(x.sp) == 1 && H5Aread(x.a, H5T_NATIVE_INT64, v) >= 0;

	h5_attr_close(&x);
	return ok;
}

void mk_h5_attr_text(hid_t obj, const char *name, char *buf, size_t cap)
{
	h5_attr x = h5_attr_open(obj, name);
	size_t size = x.t >= 0 ? H5Tget_size(x.t) : 0;
	hid_t m = H5I_INVALID_HID;

	buf[0] = '\0';
	if (x.t < 0 || x.sp < 0 || H5Tget_class(x.t) != H5T_STRING ||
	    H5Sget_simple_extent_npoints(x.sp) != 1)
		goto out;
	if (H5Tis_variable_str(x.t) > 0) {
		char *v = NULL;
		m = H5Tcopy(H5T_C_S1);
		if (m >= 0 && H5Tset_size(m, H5T_VARIABLE) >= 0 &&
		    H5Tset_cset(m, H5Tget_cset(x.t)) >= 0 && H5Aread(x.a, m, &v) >= 0 && v) {
			if (strlen(v) < cap)
				snprintf(buf, cap, "%s", v);
			H5free_memory(v);
		}
	} else if (size > 0 && size < cap) {
		m = H5Tcopy(x.t);
		if (m >= 0 && H5Aread(x.a, m, buf) >= 0)
			buf[size] = '\0';
		else
			buf[0] = '\0';
	}
out:
	if (m >= 0)
		H5Tclose(m);
	h5_attr_close(&x);
}

bool mk_h5_is_dataset(hid_t file, const char *name)
{
	H5O_info_t oi;

	return H5Lexists(file, name, H5P_DEFAULT) > 0 &&
	       H5Oget_info_by_name(file, name, &oi, H5P_DEFAULT) >= 0 && oi.type == H5O_TYPE_DATASET;
}
