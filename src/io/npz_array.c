/*
 * Integer arrays out of .npz members: the member's .npy header is parsed by
 * io_npy.c's reader (through a memory stream), its dtype must be int32 or
 * int64 of either byte order, its data exactly what its shape says.
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "npz.h"

/* "(1, 1, 3)" into buf. */
static void mk_npz_shape_text(const mk_npy *h, char *buf, size_t cap)
{
	size_t len = (size_t)snprintf(buf, cap, "(");

	for (int k = 0; k < h->ndim && k < MK_NPY_MAX_DIMS && len < cap; k++)
		len += (size_t)snprintf(buf + len, cap - len, "%s%" PRId64, k ? ", " : "",
					h->shape[k]);
	if (len < cap)
		snprintf(buf + len, cap - len, "%s)", h->ndim == 1 ? "," : "");
}

/* Checks h against the member's len bytes; sets *big and the shape of a. */
static int mk_npz_ints_check(const mk_npy *h, uint64_t len, bool *big, size_t *itemsize,
			     mk_npz_ints *a)
{
	const char *d = h->descr;
	uint64_t bytes;
	char shape[96];
	int ret = MK_OK;

	if (d[0] == '\0' || !strchr("<>|=", d[0]) || d[1] != 'i' ||
	    (strcmp(d + 2, "4") != 0 && strcmp(d + 2, "8") != 0))
		return mk_error_set(MK_EFORMAT, "'%s': dtype '%s', expected int32 ('<i4') or int64",
				    h->path, d);
	if (h->ndim > MK_NPY_MAX_DIMS)
		return mk_error_set(MK_EFORMAT, "'%s': %d dimensions, more than %d", h->path,
				    h->ndim, MK_NPY_MAX_DIMS);
	if (h->fortran && h->ndim > 1)
		return mk_error_set(MK_EFORMAT, "'%s': Fortran order; save the array in C order "
				    "(np.ascontiguousarray)", h->path);
	*big = d[0] == '>' || (d[0] == '=' && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__);
	*itemsize = d[2] == '4' ? 4 : 8;
	a->ndim = h->ndim;
	a->count = 1;
	for (int k = 0; k < h->ndim && ret == MK_OK; k++) {
		a->shape[k] = h->shape[k];
		ret = mk_mul_u64(a->count, (uint64_t)h->shape[k], &a->count);
	}
	if (ret == MK_OK)
		ret = mk_mul_u64(a->count, *itemsize, &bytes);
	if (ret)
		return mk_error_set(MK_EFORMAT, "'%s': the shape is too large", h->path);
	if (len < h->offset || len - h->offset != bytes) {
		mk_npz_shape_text(h, shape, sizeof shape);
		return mk_error_set(MK_EFORMAT, "'%s': %" PRIu64 " bytes of data, expected %" PRIu64
				    " for shape %s", h->path, len > h->offset ? len - h->offset : 0,
				    bytes, shape);
	}
	return MK_OK;
}

static void mk_npz_widen(const uint8_t *p, bool big, size_t itemsize, uint64_t count,
			 int64_t *v)
{
	for (uint64_t e = 0; e < count; e++, p += itemsize) {
		uint64_t u = 0;
		for (size_t b = 0; b < itemsize; b++)
			u |= (uint64_t)p[big ? b : itemsize - 1 - b] << (8 * (itemsize - 1 - b));
		/* sign-extend from the item's width */
		v[e] = itemsize == 4 ? (int64_t)(int32_t)(uint32_t)u : (int64_t)u;
	}
}

/* The member's .npy header, read off the front of r into h: the preamble
 * says how long the dictionary is, and io_npy.c's parser reads both from
 * a memory stream.  A member shorter than its header is left to the parser
 * to name ("truncated"). */
static int mk_npz_ints_header(mk_npz_reader *r, const char *label, mk_npy *h)
{
	uint8_t buf[12 + 65536];
	uint64_t left = r->e->usize;
	size_t pre = 10, have, hlen;
	FILE *f;
	int ret;

	if (left == 0)
		return mk_error_set(MK_EFORMAT, "'%s': an empty member, not a .npy array", label);
	have = left < pre ? (size_t)left : pre;
	if ((ret = mk_npz_reader_read(r, buf, have)))
		return ret;
	if (have == pre && buf[6] != 1 && left >= 12) {
		if ((ret = mk_npz_reader_read(r, buf + 10, 2)))
			return ret;
		have = pre = 12;
	}
	hlen = have < pre ? 0 : (size_t)buf[8] | (size_t)buf[9] << 8 |
	       (pre == 12 ? (size_t)buf[10] << 16 | (size_t)buf[11] << 24 : 0);
	/* more than the parser takes: it refuses on the length alone */
	hlen = hlen > sizeof buf - pre ? 0 : hlen;
	hlen = hlen > left - have ? (size_t)(left - have) : hlen;
	if (hlen && (ret = mk_npz_reader_read(r, buf + have, hlen)))
		return ret;
	if (!(f = fmemopen(buf, have + hlen, "rb")))
		return mk_error_errno(errno, "'%s': cannot read the member", label);
	ret = mk_npy_read_header(f, label, h);
	fclose(f);
	return ret;
}

/* Checks bytes for this array beside the held bytes of those read before. */
static int mk_npz_ints_budget(const char *label, uint64_t bytes, uint64_t held,
			      uint64_t max_memory)
{
	char what[PATH_MAX + 320];

	if (!held)
		return mk_check_memory(bytes, max_memory, label);
	snprintf(what, sizeof what, "'%s' with the members read before it", label);
	return mk_check_memory(bytes + held, max_memory, what);
}

/* Reads member k (label names it in messages) into a, its data widened
 * piece by piece: the only buffer the size of the array is a->v. */
static int mk_npz_ints_stream(mk_npz *z, size_t k, const char *label, uint64_t max_memory,
			      uint64_t held, mk_npz_ints *a)
{
	mk_npz_reader r;
	mk_npy h = {.path = label};
	size_t itemsize = 0, cap = MK_NPZ_CHUNK;
	bool big = false;
	uint8_t *chunk = NULL;
	int ret = mk_npz_reader_open(z, k, &r);

	if (ret == MK_OK)
		ret = mk_npz_ints_header(&r, label, &h);
	if (ret == MK_OK)
		ret = mk_npz_ints_check(&h, z->e[k].usize, &big, &itemsize, a);
	if (ret == MK_OK)
		ret = mk_npz_ints_budget(label, a->count * sizeof *a->v + cap, held, max_memory);
	if (ret == MK_OK && (!(a->v = malloc((size_t)a->count * sizeof *a->v + 1)) ||
			     !(chunk = malloc(cap))))
		ret = mk_error_set(MK_ENOMEM, "out of memory");
	for (uint64_t at = 0, step; ret == MK_OK && at < a->count; at += step) {
		step = a->count - at < cap / itemsize ? a->count - at : cap / itemsize;
		ret = mk_npz_reader_read(&r, chunk, (size_t)step * itemsize);
		if (ret == MK_OK)
			mk_npz_widen(chunk, big, itemsize, step, a->v + at);
	}
	if (ret == MK_OK)
		ret = mk_npz_reader_finish(&r);
	mk_npz_reader_close(&r);
	free(chunk);
	free(h.text);
	return ret;
}

int mk_npz_read_ints(mk_npz *z, const char *name, uint64_t max_memory, uint64_t held,
		     bool *found, mk_npz_ints *a)
{
	int64_t k = mk_npz_find(z, name);
	size_t cap = strlen(z->path) + strlen(name) + 3;
	char *label = NULL;
	int ret;

	*a = (mk_npz_ints){0};
	*found = k >= 0;
	if (k < 0)
		return MK_OK;
	/* "FILE[name]", as numpy indexes an archive */
	if (!(label = malloc(cap)))
		return mk_error_set(MK_ENOMEM, "out of memory");
	snprintf(label, cap, "%s[%s]", z->path, name);
	ret = mk_npz_ints_stream(z, (size_t)k, label, max_memory, held, a);
	if (ret) {
		free(a->v);
		a->v = NULL;
	}
	free(label);
	return ret;
}
