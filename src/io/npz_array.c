/*
 * Integer arrays out of .npz members: the member's .npy header is parsed by
 * io_npy.c's reader (through a memory stream), its dtype must be int32 or
 * int64 of either byte order, its data exactly what its shape says.
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
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

static void mk_npz_widen(const uint8_t *p, bool big, size_t itemsize, mk_npz_ints *a)
{
	for (uint64_t e = 0; e < a->count; e++, p += itemsize) {
		uint64_t u = 0;
		for (size_t b = 0; b < itemsize; b++)
			u |= (uint64_t)p[big ? b : itemsize - 1 - b] << (8 * (itemsize - 1 - b));
		/* sign-extend from the item's width */
		a->v[e] = itemsize == 4 ? (int64_t)(int32_t)(uint32_t)u : (int64_t)u;
	}
}

/* Parses member k's data (len bytes) into a; label names it in messages. */
static int mk_npz_ints_parse(const char *label, uint8_t *data, uint64_t len,
			     uint64_t max_memory, mk_npz_ints *a)
{
	mk_npy h = {.path = label};
	size_t itemsize = 0;
	bool big = false;
	FILE *f = len ? fmemopen(data, (size_t)len, "rb") : NULL;
	int ret;

	if (!len)
		return mk_error_set(MK_EFORMAT, "'%s': an empty member, not a .npy array", label);
	if (!f)
		return mk_error_errno(errno, "'%s': cannot read the member", label);
	ret = mk_npy_read_header(f, label, &h);
	fclose(f);
	if (ret == MK_OK)
		ret = mk_npz_ints_check(&h, len, &big, &itemsize, a);
	if (ret == MK_OK)
		ret = mk_check_memory(a->count * sizeof *a->v, max_memory, label);
	if (ret == MK_OK && !(a->v = malloc((size_t)a->count * sizeof *a->v + 1)))
		ret = mk_error_set(MK_ENOMEM, "out of memory");
	if (ret == MK_OK)
		mk_npz_widen(data + h.offset, big, itemsize, a);
	free(h.text);
	return ret;
}

int mk_npz_read_ints(mk_npz *z, const char *name, uint64_t max_memory, bool *found,
		     mk_npz_ints *a)
{
	int64_t k = mk_npz_find(z, name);
	size_t cap = strlen(z->path) + strlen(name) + 3;
	char *label = NULL;
	uint8_t *data = NULL;
	int ret;

	*a = (mk_npz_ints){0};
	*found = k >= 0;
	if (k < 0)
		return MK_OK;
	/* "FILE[name]", as numpy indexes an archive */
	if (!(label = malloc(cap)))
		return mk_error_set(MK_ENOMEM, "out of memory");
	snprintf(label, cap, "%s[%s]", z->path, name);
	ret = mk_npz_member(z, (size_t)k, max_memory, &data);
	if (ret == MK_OK)
		ret = mk_npz_ints_parse(label, data, z->e[k].usize, max_memory, a);
	if (ret) {
		free(a->v);
		a->v = NULL;
	}
	free(data);
	free(label);
	return ret;
}
