/*
 * The HDF5 side of the adaptive axis masks: finds and opens the row and
 * column indicator datasets, checks their shape and type, gets the lengths,
 * and reads one sample at a time through hyperslabs into 0/1 bytes.
 */
#include "config.h"
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "axis_internal.h"

#define AXIS_MAX_ELEMENT 16 /* bytes in the widest number we read */

/* ---- opening the indicators ---------------------------------------------- */

/* "no dataset 'rows' or 'row' for the row indicators; the file holds /a,
 * /b (rows)", naming the parameter that names the dataset. */
static int axis_missing(const axis_src *s, const char *const *tried, const char *what,
			const char *param)
{
	char **all = NULL, list[320], names[96];
	size_t count = 0, used = 0;
	int ret;

	names[0] = '\0';
	for (size_t k = 0; tried[k]; k++)
		used += (size_t)snprintf(names + used, sizeof names - used, "%s'%s'",
					 k == 0 ? "" : tried[k + 1] ? ", " : " or ", tried[k]);
	ret = mk_h5_datasets(s->file, s->path, 0, NULL, NULL, &all, &count);
	if (ret)
		return ret;
	mk_h5_join(list, sizeof list, all, count);
	mk_h5_names_free(all);
	mk_error_set(MK_EFORMAT, "'%s': no dataset %s for the %s; the file holds %s", s->path,
		     names, what, count ? list : "no datasets");
	return mk_error_param(param);
}

/* Opens o's name or the first default that exists. */
static int axis_open_named(axis_src *s, const char *given, const char *const *defaults,
			   const char *what, const char *param, axis_ind *ind)
{
	const char *one[2] = {given, NULL}, *const *tried = given ? one : defaults;

	for (size_t k = 0; tried[k]; k++) {
		if (!mk_h5_is_dataset(s->file, tried[k]))
			continue;
		snprintf(ind->name, sizeof ind->name, "%s%s", tried[k][0] == '/' ? "" : "/",
			 tried[k]);
		ind->dset = H5Dopen2(s->file, tried[k], H5P_DEFAULT);
		if (ind->dset < 0)
			return mk_error_set(MK_EFORMAT, "'%s': cannot open dataset '%s'", s->path,
					    ind->name);
		return MK_OK;
	}
	return axis_missing(s, tried, what, param);
}

/* Integers, enums (h5py's bool) and bitfields are read in their native
 * form (nonzero bytes: important); floats as double. */
static int axis_memtype(const axis_src *s, axis_ind *ind)
{
	hid_t ftype = H5Dget_type(ind->dset);
	H5T_class_t cls = ftype >= 0 ? H5Tget_class(ftype) : H5T_NO_CLASS;
	size_t fsize = ftype >= 0 ? H5Tget_size(ftype) : 0;
	bool number = cls == H5T_INTEGER || cls == H5T_ENUM || cls == H5T_BITFIELD ||
		      cls == H5T_FLOAT;

	ind->is_float = cls == H5T_FLOAT;
	if (number && fsize > 0 && fsize <= AXIS_MAX_ELEMENT) {
		/* an enum of any width is a boolean here */
		ind->dtype = cls == H5T_ENUM ? MK_DTYPE_BOOL : mk_h5_dtype(ftype);
		ind->mtype = ind->is_float ? H5Tcopy(H5T_NATIVE_DOUBLE)
					   : H5Tget_native_type(ftype, H5T_DIR_ASCEND);
	}
	if (ftype >= 0)
		H5Tclose(ftype);
	if (ind->mtype < 0)
		return mk_error_set(MK_EFORMAT, "'%s': dataset '%s' does not hold importance "
				    "indicators (integers, booleans or float probabilities)",
				    s->path, ind->name);
	ind->msize = H5Tget_size(ind->mtype);
	return MK_OK;
}

static int axis_rank(const axis_src *s, const axis_ind *ind, hsize_t *dims, int *rank)
{
	hid_t space = H5Dget_space(ind->dset);

	*rank = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
	if (*rank >= 2 && *rank <= AXIS_MAX_RANK)
		H5Sget_simple_extent_dims(space, dims, NULL);
	if (space >= 0)
		H5Sclose(space);
	if (*rank < 2 || *rank > AXIS_MAX_RANK)
		return mk_error_set(MK_EFORMAT, "'%s': dataset '%s' has %d dimensions; indicators are "
				    "[samples, N], [samples, layers, N] or [samples, layers, heads, "
				    "N]", s->path, ind->name, *rank);
	return MK_OK;
}

static void axis_shape_text(const hsize_t *dims, int rank, char *buf, size_t cap)
{
	size_t used = 0;

	for (int k = 0; k < rank && used < cap; k++)
		used += (size_t)snprintf(buf + used, cap - used, "%s%llu", k ? " x " : "",
					 (unsigned long long)dims[k]);
}

/* Both datasets of one shape, no empty axis, N within bounds. */
static int axis_shape(axis_src *s)
{
	hsize_t cdims[AXIS_MAX_RANK];
	char a[96], b[96];
	uint64_t blocks;
	int crank, ret;

	if ((ret = axis_rank(s, &s->ind[0], s->dims, &s->rank)) ||
	    (ret = axis_rank(s, &s->ind[1], cdims, &crank)))
		return ret;
	if (crank != s->rank || memcmp(cdims, s->dims, (size_t)crank * sizeof *cdims)) {
		axis_shape_text(s->dims, s->rank, a, sizeof a);
		axis_shape_text(cdims, crank, b, sizeof b);
		return mk_error_set(MK_EFORMAT, "'%s': the row indicators '%s' are %s but the column "
				    "indicators '%s' are %s", s->path, s->ind[0].name, a,
				    s->ind[1].name, b);
	}
	for (int k = 0; k < s->rank; k++)
		if (s->dims[k] == 0 || s->dims[k] > ((hsize_t)1 << 40))
			return mk_error_set(MK_EFORMAT, "'%s': dataset '%s' has %s dimension %d",
					    s->path, s->ind[0].name,
					    s->dims[k] ? "an absurd" : "an empty", k);
	s->samples = (int64_t)s->dims[0];
	s->layers = s->rank >= 3 ? (int64_t)s->dims[1] : 1;
	s->heads = s->rank == 4 ? (int64_t)s->dims[2] : 1;
	s->n = (int64_t)s->dims[s->rank - 1];
	if (s->n > MK_N_MAX)
		return mk_error_set(MK_ERANGE, "'%s': dataset '%s' has N = %" PRId64 ", larger than %"
				    PRId64, s->path, s->ind[0].name, s->n, MK_N_MAX);
	if ((ret = mk_mul_u64((uint64_t)s->layers, (uint64_t)s->heads, &blocks)))
		return ret;
	s->blocks = (int64_t)blocks;
	return MK_OK;
}

/* Everything reading the indicators keeps, against the limit before
 * anything is allocated or read (a 1 KB file may declare 2^30 samples):
 * one sample's raw and 0/1 indicators and bit rows (axis_buffers), the
 * local pattern per length, per sample its length (and its results with
 * by_sample), per layer and per block the results and one sample's counts
 * (axis.c). */
static int axis_memory(axis_src *s)
{
	uint64_t limit = s->o->max_memory ? s->o->max_memory : MK_DEFAULT_MAX_MEMORY;
	uint64_t n = (uint64_t)s->n, blocks = (uint64_t)s->blocks, samples = (uint64_t)s->samples;
	uint64_t words = mk_words(s->n), per_sample = sizeof(int64_t), bytes;
	char what[MK_H5_MESSAGE];

	bytes = mk_h5_mul(mk_h5_mul(blocks, n), s->ind[0].msize + s->ind[1].msize + 2);
	bytes = mk_h5_add(bytes, mk_h5_mul(mk_h5_add(blocks, 1), 8 * words));
	bytes = mk_h5_add(bytes, mk_h5_mul(blocks, sizeof(mk_axis_stat) + sizeof(mk_axis_cells)));
	bytes = mk_h5_add(bytes, mk_h5_mul((uint64_t)s->layers, sizeof(mk_axis_stat)));
	if (mk_axis_has_local(s->o))
		bytes = mk_h5_add(bytes, mk_h5_mul(n + 1, sizeof(axis_pat)));
	if (s->o->by_sample)
		per_sample += sizeof(mk_axis_stat) + sizeof(int64_t);
	bytes = mk_h5_add(bytes, mk_h5_mul(samples, per_sample));
	snprintf(what, sizeof what, "'%s': indicators of %" PRId64 " samples x %" PRId64 " blocks x "
		 "N = %" PRId64 " (one sample's, and the per-sample and per-block results)", s->path,
		 s->samples, s->blocks, s->n);
	s->used = bytes;
	return mk_check_memory(bytes, limit, what);
}

/* The layouts, and chunk caches for reads of one sample at a time. */
static int axis_prepare(axis_src *s)
{
	hsize_t count[AXIS_MAX_RANK];
	uint64_t cache = 0;
	int ret = MK_OK;

	memcpy(count, s->dims, sizeof count);
	count[0] = 1;
	for (int k = 0; k < 2 && ret == MK_OK; k++) {
		ret = mk_h5_prepare_read(&s->ind[k].dset, s->path, s->ind[k].name, s->rank, s->dims,
					 &(mk_h5_reads){.count = count, .steps = {0, -1},
							.max_memory = s->o->max_memory,
							.used = s->used, .cache = &cache});
		s->used += cache;
	}
	return ret;
}

/* ---- lengths ------------------------------------------------------------- */

/* Given lengths, else o->lengths or "lengths" in the file, else N each. */
static int axis_lengths(axis_src *s)
{
	const char *want = s->o->lengths ? s->o->lengths : "lengths";
	char where[MK_H5_MESSAGE];
	int64_t count = s->samples;
	int ret = MK_OK;

	snprintf(where, sizeof where, "'%s'", s->path);
	if (s->o->given && s->o->ngiven != s->samples)
		return mk_error_set(MK_EFORMAT, "'%s': %" PRId64 " lengths given for %" PRId64
				    " samples", s->path, s->o->ngiven, s->samples);
	if (*want && !s->o->given && (s->o->lengths || mk_h5_is_dataset(s->file, want))) {
		snprintf(s->lengths_name, sizeof s->lengths_name, "%s%s", want[0] == '/' ? "" : "/",
			 want);
		/* their bytes are counted in s->used already */
		ret = mk_h5_read_lengths_within(s->file, s->path, s->lengths_name, s->samples,
						s->o->max_memory, s->used - (uint64_t)s->samples *
						sizeof *s->lengths, &s->lengths, &count);
	} else if (!(s->lengths = malloc((size_t)s->samples * sizeof *s->lengths))) {
		ret = mk_error_set(MK_ENOMEM, "out of memory");
	}
	for (int64_t i = 0; ret == MK_OK && !*s->lengths_name && i < s->samples; i++)
		s->lengths[i] = s->o->given ? s->o->given[i] : s->n;
	return ret ? ret : mk_lengths_check(s->lengths, count, s->n, where, " (the indicators' N)");
}

/* ---- opening and reading -------------------------------------------------- */

void mk_axis_src_close(axis_src *s)
{
	for (int k = 0; k < 2; k++) {
		if (s->ind[k].mtype >= 0)
			H5Tclose(s->ind[k].mtype);
		if (s->ind[k].dset >= 0)
			H5Dclose(s->ind[k].dset);
		if (s->ind[k].bit != s->ind[k].raw)
			free(s->ind[k].bit);
		free(s->ind[k].raw);
	}
	if (s->file >= 0)
		H5Fclose(s->file);
	for (int64_t len = 0; s->pats && len <= s->n; len++) {
		mk_cursor_free(s->pats[len].cur);
		mk_expr_free(s->pats[len].e);
	}
	free(s->pats);
	free(s->lengths);
	free(s->colbits);
	free(s->row);
}

/* Counted by axis_memory. */
static int axis_buffers(axis_src *s)
{
	size_t elems = (size_t)s->blocks * (size_t)s->n, words = (size_t)s->blocks * mk_words(s->n);

	for (int k = 0; k < 2; k++) {
		axis_ind *ind = &s->ind[k];
		/* one-byte integers (uint8, int8, h5py's bool) are counted as read */
		bool alias = ind->msize == 1 && !ind->is_float;
		if (!(ind->raw = malloc(elems * ind->msize)) ||
		    (!alias && !(ind->bit = malloc(elems))))
			return mk_error_set(MK_ENOMEM, "out of memory");
		if (alias)
			ind->bit = ind->raw;
	}
	if (!(s->colbits = malloc(words * sizeof *s->colbits)) ||
	    !(s->row = malloc(mk_words(s->n) * sizeof *s->row)))
		return mk_error_set(MK_ENOMEM, "out of memory");
	if (mk_axis_has_local(s->o) && !(s->pats = calloc((size_t)s->n + 1, sizeof *s->pats)))
		return mk_error_set(MK_ENOMEM, "out of memory");
	return MK_OK;
}

void mk_axis_src_init(axis_src *s, const char *path, const mk_axis_opts *o)
{
	memset(s, 0, sizeof *s);
	s->path = path;
	s->o = o;
	s->file = H5I_INVALID_HID;
	for (int k = 0; k < 2; k++)
		s->ind[k].dset = s->ind[k].mtype = H5I_INVALID_HID;
}

int mk_axis_src_open(axis_src *s)
{
	const mk_axis_opts *o = s->o;
	static const char *const rows[] = {"rows", "row", NULL};
	static const char *const cols[] = {"cols", "columns", "col", NULL};
	int ret;

	if (o->threshold != o->threshold || isinf(o->threshold))
		return mk_error_set(MK_EINVAL, "the threshold must be a finite number");
	if ((ret = mk_h5_open(s->path, &s->file)) ||
	    (ret = axis_open_named(s, o->rows, rows, "row indicators", "rows", &s->ind[0])) ||
	    (ret = axis_open_named(s, o->cols, cols, "column indicators", "cols", &s->ind[1])))
		return ret;
	if (!strcmp(s->ind[0].name, s->ind[1].name))
		return mk_error_set(MK_EINVAL, "'%s': the row and column indicators are the same "
				    "dataset '%s'", s->path, s->ind[0].name);
	if ((ret = axis_memtype(s, &s->ind[0])) || (ret = axis_memtype(s, &s->ind[1])) ||
	    (ret = axis_shape(s)) || (ret = axis_memory(s)) || (ret = axis_prepare(s)))
		return ret;
	if ((ret = axis_lengths(s)))
		return ret;
	return axis_buffers(s);
}

/* 0/1 bytes from one sample's raw elements. */
MK_HOT static int axis_bits(const axis_src *s, axis_ind *ind, int64_t sample)
{
	size_t count = (size_t)(s->blocks * s->n), size = ind->msize;
	const uint8_t *p = ind->raw;
	const double *d = ind->raw;
	double t = s->o->threshold;

	for (size_t e = 0; e < count && ind->is_float; e++) {
		if (d[e] != d[e])
			return mk_error_set(MK_EFORMAT, "'%s': dataset '%s' holds NaN (sample %" PRId64
					    ", entry %zu)", s->path, ind->name, sample, e);
		ind->bit[e] = d[e] >= t;
	}
	for (size_t e = 0; e < count && !ind->is_float; e++, p += size) {
		uint8_t any = 0;
		for (size_t k = 0; k < size; k++)
			any |= p[k];
		ind->bit[e] = any != 0;
	}
	return MK_OK;
}

int mk_axis_src_read(axis_src *s, int64_t sample)
{
	hsize_t start[AXIS_MAX_RANK] = {(hsize_t)sample}, count[AXIS_MAX_RANK];

	memcpy(count, s->dims, sizeof count);
	count[0] = 1;
	for (int k = 0; k < 2; k++) {
		axis_ind *ind = &s->ind[k];
		hid_t fspace = H5Dget_space(ind->dset);
		hid_t mspace = H5Screate_simple(s->rank, count, NULL);
		herr_t st = -1;
		int ret;
		if (fspace >= 0 && mspace >= 0 &&
		    H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL) >= 0)
			st = H5Dread(ind->dset, ind->mtype, mspace, fspace, H5P_DEFAULT, ind->raw);
		if (mspace >= 0)
			H5Sclose(mspace);
		if (fspace >= 0)
			H5Sclose(fspace);
		if (st < 0)
			return mk_error_set(MK_EFORMAT, "'%s': cannot read sample %" PRId64 " of "
					    "dataset '%s' (truncated or damaged file?)", s->path,
					    sample, ind->name);
		if (ind->bit != ind->raw && (ret = axis_bits(s, ind, sample)))
			return ret;
	}
	return MK_OK;
}
