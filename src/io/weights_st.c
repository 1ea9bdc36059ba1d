/*
 * The weights API over safetensors checkpoints (safetensors.c) and bare
 * .npy arrays: listing by name and reading into doubles (mk_matrix) or
 * float32.  Names are '/' + the tensor's name, so that the searches written
 * for HDF5 paths (analysis/positional_find.c, toeplitz's default) find
 * HuggingFace's PyTorch names such as
 * "/bert.encoder.layer.0.attention.self.query.weight".  An .npy file holds
 * one 2-D float array, named "/"; it is read again on each read (it is one
 * E_P, read once).
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "weights_internal.h"

#define WST_CHUNK 65536 /* bytes converted per read of an .npy file */

/* ---- listing ----------------------------------------------------------------- */

static bool wst_match(const char *name, const char *const *needles)
{
	for (const char *const *n = needles; n && *n; n++)
		if (!strstr(name, *n))
			return false;
	return true;
}

int mk_weights_st_list(mk_weights *w, int rank, const char *const *needles, char ***out,
		       size_t *count)
{
	size_t n = w->kind == MK_WEIGHTS_ST ? w->st->count : 1, kept = 0;
	char **list = calloc(n + 1, sizeof *list);

	if (!list)
		return mk_error_set(MK_ENOMEM, "out of memory");
	for (size_t k = 0; k < n; k++) {
		const char *bare = w->kind == MK_WEIGHTS_ST ? w->st->t[k].name : "";
		int r = w->kind == MK_WEIGHTS_ST ? w->st->t[k].rank : 2;
		size_t len = strlen(bare) + 2;
		char *name;
		if (rank && r != rank)
			continue;
		if (!(name = malloc(len))) {
			mk_weights_list_free(list);
			return mk_error_set(MK_ENOMEM, "out of memory");
		}
		snprintf(name, len, "/%s", bare);
		if (wst_match(name, needles))
			list[kept++] = name;
		else
			free(name);
	}
	*out = list;
	*count = kept;
	return MK_OK;
}

/* ---- safetensors ----------------------------------------------------------- */

static int wst_tensor(const mk_weights *w, const char *name, const mk_st_tensor **t)
{
	const char *bare = name + strspn(name, "/");

	/* '/' + the tensor's name; a name of its own beginning with '/' has lost
	 * that '/' to path normalisation ("//x" is "/x"), so "/x" may be the
	 * name itself */
	*t = mk_st_find(w->st, name[0] == '/' ? name + 1 : name);
	if (!*t)
		*t = mk_st_find(w->st, name);
	if (!*t)
		*t = mk_st_find(w->st, bare);
	if (!*t)
		return mk_error_set(MK_EFORMAT, "'%s': no dataset '/%s'", w->path, bare);
	for (int k = 0; k < (*t)->rank; k++)
		if ((*t)->dims[k] == 0)
			return mk_error_set(MK_EFORMAT, "'%s': dataset '/%s' is empty", w->path,
					    (*t)->name);
	return MK_OK;
}

static int wst_rank_error(const mk_weights *w, const mk_st_tensor *t, const char *want)
{
	return mk_error_set(MK_EFORMAT, "'%s': dataset '/%s' has %d dimension%s, expected %s",
			    w->path, t->name, t->rank, t->rank == 1 ? "" : "s", want);
}

int mk_weights_st_read(mk_weights *w, const char *name, int rank, uint64_t max_memory,
		       mk_matrix *out)
{
	const mk_st_tensor *t;
	char what[512], full[400];
	int ret = wst_tensor(w, name, &t);

	if (ret)
		return ret;
	if (t->rank != rank)
		return wst_rank_error(w, t, rank == 1 ? "1" : "2");
	snprintf(full, sizeof full, "/%s", t->name);
	snprintf(what, sizeof what, "'%s': dataset '%s'", w->path, full);
	ret = mk_matrix_new(rank == 1 ? 1 : t->dims[0], t->dims[rank - 1], max_memory, what, out);
	if (ret == MK_OK)
		ret = mk_st_read(w->st, t, false, out->data);
	if (ret == MK_OK)
		ret = mk_weights_check_values(w, full, out->data, false, t->rank, t->dims);
	if (ret)
		mk_matrix_release(out);
	return ret;
}

/* Checks count * size within max_memory and allocates it. */
static int wst_alloc(const mk_weights *w, const char *name, uint64_t count, size_t size,
		     uint64_t max_memory, void **out)
{
	char what[512];
	uint64_t bytes;
	int ret;

	snprintf(what, sizeof what, "'%s': dataset '%s'", w->path, name);
	if (mk_mul_u64(count, size, &bytes) || bytes > SIZE_MAX)
		return mk_error_set(MK_ERANGE, "%s is too large", what);
	if ((ret = mk_check_memory(bytes, max_memory, what)))
		return ret;
	if (!(*out = malloc(bytes ? (size_t)bytes : 1)))
		return mk_error_set(MK_ENOMEM, "out of memory for %s", what);
	return MK_OK;
}

int mk_weights_st_read_f32(mk_weights *w, const char *name, uint64_t max_memory, float **out,
			   int *rank, int64_t dims[4])
{
	const mk_st_tensor *t;
	char full[400];
	int ret = wst_tensor(w, name, &t);

	if (ret)
		return ret;
	if (t->rank < 1 || t->rank > 4)
		return wst_rank_error(w, t, "1 to 4");
	snprintf(full, sizeof full, "/%s", t->name);
	ret = wst_alloc(w, full, mk_st_count(t), sizeof(float), max_memory, (void **)out);
	if (ret == MK_OK)
		ret = mk_st_read(w->st, t, true, *out);
	if (ret == MK_OK)
		ret = mk_weights_check_values(w, full, *out, true, t->rank, t->dims);
	if (ret) {
		free(*out);
		*out = NULL;
		return ret;
	}
	*rank = t->rank;
	memcpy(dims, t->dims, (size_t)t->rank * sizeof *dims);
	return MK_OK;
}

/* ---- .npy ---------------------------------------------------------------------- */

static bool wst_host_big(void)
{
	return __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;
}

/* '<f4', '>f8', '=f2': float of 2, 4 or 8 bytes in either byte order. */
static int wst_npy_descr(const char *file, const char *d, unsigned *size, bool *big)
{
	if (!d[0] || !strchr("<>=", d[0]) || d[1] != 'f' || !d[2] || !strchr("248", d[2]) || d[3])
		return mk_error_set(MK_EFORMAT, "'%s': unsupported dtype '%s' (use float16, float32 "
				    "or float64)", file, d);
	*size = (unsigned)(d[2] - '0');
	*big = d[0] == '>' || (d[0] == '=' && wst_host_big());
	return MK_OK;
}

int mk_weights_npy_open(mk_weights *w, const char *file)
{
	mk_npy h = {0};
	unsigned size = 0;
	uint64_t bytes = 0;
	bool big;
	FILE *f = NULL;
	char what[64];
	int ret;

	w->kind = MK_WEIGHTS_NPY;
	if ((ret = mk_input_open(file, (void **)&f)))
		return ret;
	ret = mk_npy_read_header(f, file, &h);
	if (ret == MK_OK)
		ret = wst_npy_descr(file, h.descr, &size, &big);
	if (ret == MK_OK && h.ndim != 2)
		ret = mk_error_set(MK_EFORMAT, "'%s': a .npy of weights holds one 2-D array (E_P, "
				   "n x d), not a %d-D one", file, h.ndim);
	if (ret == MK_OK && (h.shape[0] == 0 || h.shape[1] == 0))
		ret = mk_error_set(MK_EFORMAT, "'%s': the array is empty (%" PRId64 " x %" PRId64 ")",
				   file, h.shape[0], h.shape[1]);
	if (ret == MK_OK && (mk_mul_u64((uint64_t)h.shape[0], (uint64_t)h.shape[1], &bytes) ||
			     mk_mul_u64(bytes, size, &bytes)))
		ret = mk_error_set(MK_EFORMAT, "'%s': the array's size overflows", file);
	snprintf(what, sizeof what, "a %" PRId64 " x %" PRId64 " '%s' array", h.shape[0],
		 h.shape[1], h.descr);
	if (ret == MK_OK)
		ret = mk_npy_check_size(&h, f, bytes, what);
	if (ret == MK_OK && !(w->npy.file = strdup(file)))
		ret = mk_error_set(MK_ENOMEM, "out of memory");
	if (ret == MK_OK) {
		memcpy(w->npy.dims, h.shape, sizeof w->npy.dims);
		snprintf(w->npy.descr, sizeof w->npy.descr, "%s", h.descr);
		w->npy.fortran = h.fortran;
		w->npy.offset = h.offset;
	}
	free(h.text);
	fclose(f);
	return ret;
}

static double wst_npy_value(const uint8_t *p, unsigned size, bool big)
{
	uint64_t u = 0;
	float f;
	double d;

	for (unsigned k = 0; k < size; k++)
		u = u << 8 | p[big ? k : size - 1 - k];
	if (size == 2)
		return mk_st_half((uint16_t)u);
	if (size == 4) {
		uint32_t b = (uint32_t)u;
		memcpy(&f, &b, sizeof f);
		return f;
	}
	memcpy(&d, &u, sizeof d);
	return d;
}

/* Element e of the file, in the file's order, to its place in C order. */
static void wst_npy_put(const mk_weights *w, uint64_t e, double v, bool f32, void *dst)
{
	uint64_t rows = (uint64_t)w->npy.dims[0], cols = (uint64_t)w->npy.dims[1];
	uint64_t at = w->npy.fortran ? e % rows * cols + e / rows : e;

	if (f32)
		((float *)dst)[at] = (float)v;
	else
		((double *)dst)[at] = v;
}

static int wst_npy_load(const mk_weights *w, bool f32, void *dst)
{
	uint64_t count = (uint64_t)w->npy.dims[0] * (uint64_t)w->npy.dims[1], e = 0;
	unsigned size;
	bool big;
	uint8_t *buf = malloc(WST_CHUNK);
	FILE *f = NULL;
	int ret = buf ? wst_npy_descr(w->npy.file, w->npy.descr, &size, &big)
		      : mk_error_set(MK_ENOMEM, "out of memory");

	if (ret == MK_OK)
		ret = mk_input_open(w->npy.file, (void **)&f);
	if (ret == MK_OK && fseeko(f, (off_t)w->npy.offset, SEEK_SET) != 0)
		ret = mk_error_errno(errno, "'%s': seek failed", w->npy.file);
	while (ret == MK_OK && e < count) {
		size_t k = count - e < WST_CHUNK / size ? (size_t)(count - e) : WST_CHUNK / size;
		if (fread(buf, size, k, f) != k) {
			ret = mk_error_set(MK_EFORMAT, "'%s': read failed: %s", w->npy.file,
					   ferror(f) ? strerror(errno) : "file shrank while reading");
			break;
		}
		for (size_t x = 0; x < k; x++, e++)
			wst_npy_put(w, e, wst_npy_value(buf + x * size, size, big), f32, dst);
	}
	if (f)
		fclose(f);
	free(buf);
	return ret;
}

static int wst_npy_name(const mk_weights *w, const char *name)
{
	if (strspn(name, "/") != strlen(name))
		return mk_error_set(MK_EFORMAT, "'%s': a .npy file holds one array, named '/'; it has "
				    "no dataset '%s'", w->path, name);
	return MK_OK;
}

int mk_weights_npy_read(mk_weights *w, const char *name, int rank, uint64_t max_memory,
			mk_matrix *out)
{
	char what[512];
	int ret = wst_npy_name(w, name);

	if (ret)
		return ret;
	if (rank != 2)
		return mk_error_set(MK_EFORMAT, "'%s': dataset '/' has 2 dimensions, expected %d",
				    w->path, rank);
	snprintf(what, sizeof what, "'%s'", w->path);
	ret = mk_matrix_new(w->npy.dims[0], w->npy.dims[1], max_memory, what, out);
	if (ret == MK_OK)
		ret = wst_npy_load(w, false, out->data);
	if (ret == MK_OK)
		ret = mk_weights_check_values(w, "/", out->data, false, 2, w->npy.dims);
	if (ret)
		mk_matrix_release(out);
	return ret;
}

int mk_weights_npy_read_f32(mk_weights *w, const char *name, uint64_t max_memory, float **out,
			    int *rank, int64_t dims[4])
{
	int ret = wst_npy_name(w, name);
	uint64_t count = (uint64_t)w->npy.dims[0] * (uint64_t)w->npy.dims[1];

	if (ret == MK_OK)
		ret = wst_alloc(w, "/", count, sizeof(float), max_memory, (void **)out);
	if (ret == MK_OK)
		ret = wst_npy_load(w, true, *out);
	if (ret == MK_OK)
		ret = mk_weights_check_values(w, "/", *out, true, 2, w->npy.dims);
	if (ret) {
		free(*out);
		*out = NULL;
		return ret;
	}
	*rank = 2;
	dims[0] = w->npy.dims[0];
	dims[1] = w->npy.dims[1];
	return MK_OK;
}
