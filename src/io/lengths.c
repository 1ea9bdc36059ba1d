/*
 * Sample lengths from a file of their own, for measuring patterns at each
 * sample's length: an HDF5 dataset, a .npy array of integers or a text file
 * of integers.
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "h5util.h"

static bool len_ends_with(const char *s, size_t len, const char *ext)
{
	size_t e = strlen(ext);
	return len >= e && !strncmp(s + len - e, ext, e);
}

static int len_from_h5(const char *file, const char *name, int64_t **out, int64_t *count)
{
	hid_t f;
	char **found = NULL;
	size_t nfound = 0;
	int ret = mk_h5_open(file, &f);

	if (ret)
		return ret;
	if (!name && mk_h5_is_dataset(f, "lengths"))
		name = "lengths";
	if (!name) {
		ret = mk_h5_datasets(f, file, 1, NULL, " (give FILE.h5:/path)", &found, &nfound);
		if (ret == MK_OK && nfound != 1)
			ret = mk_error_set(MK_EFORMAT, "'%s': no dataset 'lengths' and %zu 1-D datasets "
					   "(give FILE.h5:/path)", file, nfound);
		name = ret == MK_OK ? found[0] : NULL;
	}
	if (ret == MK_OK)
		ret = mk_h5_read_lengths(f, file, name, -1, out, count);
	mk_h5_names_free(found);
	H5Fclose(f);
	return ret;
}

static int len_from_npy(const char *path, int64_t **out, int64_t *count)
{
	FILE *f;
	mk_npy h = {0};
	char kind, what[64];
	size_t size = 0;
	int ret = mk_input_open(path, (void **)&f);

	if (ret)
		return ret;
	ret = mk_npy_read_header(f, path, &h);
	kind = h.descr[1];
	if (ret == MK_OK && ((h.descr[0] != '<' && h.descr[0] != '|') || (kind != 'i' && kind != 'u') ||
			     h.ndim != 1 || h.shape[0] < 1 || h.shape[0] > MK_LENGTHS_MAX ||
			     (size = (size_t)strtoul(h.descr + 2, NULL, 10)) == 0 || size > 8 ||
			     (size & (size - 1))))
		ret = mk_error_set(MK_EFORMAT, "'%s': lengths must be a 1-D little-endian integer "
				   "array, not '%s' with %d dimensions", path, h.descr, h.ndim);
	snprintf(what, sizeof what, "a %" PRId64 "-entry '%s' array", h.shape[0], h.descr);
	if (ret == MK_OK)
		ret = mk_npy_check_size(&h, f, (uint64_t)h.shape[0] * size, what);
	if (ret == MK_OK && !(*out = calloc((size_t)h.shape[0], sizeof **out)))
		ret = mk_error_set(MK_ENOMEM, "out of memory");
	for (int64_t i = 0; ret == MK_OK && i < h.shape[0]; i++) {
		uint8_t b[8] = {0};
		uint64_t u = 0;
		if (fread(b, size, 1, f) != 1) {
			ret = mk_error_set(MK_EFORMAT, "'%s': truncated", path);
			break;
		}
		for (size_t k = size; k-- > 0;)
			u = u << 8 | b[k];
		if (kind == 'i' && size < 8 && (u >> (8 * size - 1)) & 1)
			u |= ~(uint64_t)0 << (8 * size); /* sign-extend */
		(*out)[i] = kind == 'u' && u > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)u;
	}
	if (ret == MK_OK)
		*count = h.shape[0];
	free(h.text);
	fclose(f);
	return ret;
}

static int len_push(const char *path, int64_t **v, int64_t *count, int64_t *cap, int64_t x)
{
	if (*count == MK_LENGTHS_MAX)
		return mk_error_set(MK_EFORMAT, "'%s': more than %" PRId64 " lengths", path,
				    MK_LENGTHS_MAX);
	if (*count == *cap) {
		int64_t *p = realloc(*v, (size_t)(*cap ? *cap * 2 : 256) * sizeof *p);
		if (!p)
			return mk_error_set(MK_ENOMEM, "out of memory");
		*v = p;
		*cap = *cap ? *cap * 2 : 256;
	}
	(*v)[(*count)++] = x;
	return MK_OK;
}

/* Whitespace- or comma-separated integers. */
static int len_from_text(const char *path, int64_t **out, int64_t *count)
{
	FILE *f;
	char tok[32];
	int64_t cap = 0, line = 1;
	size_t k = 0;
	int c, ret = mk_input_open(path, (void **)&f);

	if (ret)
		return ret;
	*count = 0;
	do {
		c = getc(f);
		if (c == '\0') {
			ret = mk_error_set(MK_EFORMAT, "'%s': line %" PRId64 ": a NUL byte (lengths are "
					   "a text file of integers, a .npy or an .h5 file)", path, line);
			break;
		}
		if (c != EOF && c != ',' && c != ' ' && c != '\t' && c != '\n' && c != '\r') {
			if (k + 1 < sizeof tok)
				tok[k++] = (char)c;
			continue;
		}
		if (k) {
			char *end;
			long long v;
			tok[k] = '\0';
			errno = 0;
			v = strtoll(tok, &end, 10);
			if (*end || k + 1 >= sizeof tok)
				ret = mk_error_set(MK_EFORMAT, "'%s': line %" PRId64 ": '%s' is not an "
						   "integer length", path, line, tok);
			else if (errno == ERANGE)
				ret = mk_error_set(MK_EFORMAT, "'%s': line %" PRId64 ": length '%s' is "
						   "out of range", path, line, tok);
			else
				ret = len_push(path, out, count, &cap, (int64_t)v);
			k = 0;
		}
		line += c == '\n';
	} while (c != EOF && ret == MK_OK);
	if (ret == MK_OK && ferror(f))
		ret = mk_error_errno(errno, "'%s': read error", path);
	if (ret == MK_OK && *count == 0)
		ret = mk_error_set(MK_EFORMAT, "'%s': no lengths in the file", path);
	fclose(f);
	return ret;
}

int mk_lengths_read(const char *spec, int64_t n_max, int64_t **out, int64_t *count)
{
	size_t flen = strlen(spec);
	const char *name = NULL;
	char *file, what[1100];
	int ret;

	*out = NULL;
	*count = 0;
	for (const char *c = strchr(spec, ':'); c; c = strchr(c + 1, ':'))
		if (len_ends_with(spec, (size_t)(c - spec), ".h5") ||
		    len_ends_with(spec, (size_t)(c - spec), ".hdf5")) {
			flen = (size_t)(c - spec);
			name = c + 1;
			break;
		}
	if (!(file = strndup(spec, flen)))
		return mk_error_set(MK_ENOMEM, "out of memory");
	if (len_ends_with(file, flen, ".h5") || len_ends_with(file, flen, ".hdf5"))
		ret = len_from_h5(file, name, out, count);
	else if (len_ends_with(file, flen, ".npy"))
		ret = len_from_npy(file, out, count);
	else
		ret = len_from_text(file, out, count);
	snprintf(what, sizeof what, "'%s'", spec);
	if (ret == MK_OK)
		ret = mk_lengths_check(*out, *count, n_max ? n_max : MK_N_MAX, what,
				       n_max ? " (N)" : "");
	if (ret) {
		free(*out);
		*out = NULL;
		*count = 0;
	}
	free(file);
	return ret;
}

/* Checks lengths against [1, n_max]; `what` names their source, `bound`
 * where n_max comes from. */
int mk_lengths_check(const int64_t *len, int64_t count, int64_t n_max, const char *what,
		     const char *bound)
{
	for (int64_t i = 0; i < count; i++)
		if (len[i] < 1 || len[i] > n_max)
			return mk_error_set(MK_EFORMAT, "%s: lengths[%" PRId64 "] = %" PRId64 " is outside "
					    "1..%" PRId64 "%s", what, i, len[i], n_max,
					    len[i] < 1 ? "" : bound);
	return MK_OK;
}
