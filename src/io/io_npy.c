/*
 * NumPy .npy masks (format 1.0, as numpy.save writes it):
 *   "\x93NUMPY" 0x01 0x00, a little-endian uint16 header length, then
 *   "{'descr': '|b1', 'fortran_order': False, 'shape': (n, n), }" padded
 *   with spaces and ended by '\n' so the data starts at a multiple of 64
 *   bytes, then n*n bytes of 0/1 in row-major order ((q_len, kv_len) and
 *   q_len*kv_len bytes for a rectangular mask).
 *
 * The reader takes versions 1.0, 2.0 and 3.0, bool and integer dtypes of 1
 * to 8 bytes and float dtypes of 2, 4 or 8 bytes in either byte order
 * (a cell is set when its value is nonzero; -0.0 is zero), 2-D shapes
 * only, and Fortran order too: that layout holds the transpose, so
 * its k-th stored line is column k of the mask.
 */
#include "config.h"
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "internal.h"

#define MK_NPY_MAGIC "\x93NUMPY"
#define MK_NPY_MAGIC_LEN 6
#define MK_NPY_ALIGN 64
#define MK_NPY_MAX_HEADER 65536 /* numpy's own headers are a few hundred bytes */

/* ---- writing ------------------------------------------------------------ */

size_t mk_npy_header(const char *descr, int ndim, const int64_t *shape, char *buf, size_t cap)
{
	char dict[256];
	size_t dlen, pre = MK_NPY_MAGIC_LEN + 4, total, hlen; /* magic, version, uint16 length */
	int k;

	dlen = (size_t)snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, "
				"'shape': (", descr);
	for (k = 0; k < ndim && dlen < sizeof dict; k++)
		dlen += (size_t)snprintf(dict + dlen, sizeof dict - dlen, "%s%" PRId64,
					 k ? ", " : "", shape[k]);
	if (dlen < sizeof dict)
		dlen += (size_t)snprintf(dict + dlen, sizeof dict - dlen, "%s), }",
					 ndim == 1 ? "," : "");
	if (dlen >= sizeof dict)
		return 0;
	total = (pre + dlen + 1 + MK_NPY_ALIGN - 1) / MK_NPY_ALIGN * MK_NPY_ALIGN;
	hlen = total - pre;
	if (total > cap || hlen > 0xffff)
		return 0;
	memcpy(buf, MK_NPY_MAGIC, MK_NPY_MAGIC_LEN);
	buf[6] = 1;
	buf[7] = 0;
	buf[8] = (char)(hlen & 0xff);
	buf[9] = (char)(hlen >> 8);
	memcpy(buf + pre, dict, dlen);
	memset(buf + pre + dlen, ' ', hlen - dlen - 1);
	buf[total - 1] = '\n';
	return total;
}

int mk_io_write_npy(const mk_rows *r, FILE *f, const mk_write_opts *o)
{
	int64_t n = r->n, m = r->cols;
	uint64_t *row = NULL, bytes;
	uint8_t *cells = NULL;
	char head[256], what[64];
	size_t hlen;
	int ret;

	if (n == m)
		snprintf(what, sizeof what, "a NumPy mask of n = %" PRId64, n);
	else
		snprintf(what, sizeof what, "a NumPy mask of %" PRId64 " x %" PRId64, n, m);
	ret = mk_mul_u64((uint64_t)n, (uint64_t)m, &bytes);
	if (ret == MK_OK)
		ret = mk_check_memory(bytes, o->max_memory, what);
	if (ret)
		return ret;
	hlen = mk_npy_header("|b1", 2, (int64_t[2]){n, m}, head, sizeof head);
	row = malloc(mk_words(m) * sizeof *row);
	cells = malloc((size_t)m);
	if (!row || !cells) {
		ret = mk_error_set(MK_ENOMEM, "out of memory");
		goto out;
	}
	assert(hlen > 0);
	if (fwrite(head, 1, hlen, f) != hlen)
		goto fail;
	for (int64_t i = 0; i < n; i++) {
		r->row(r->ctx, i, row);
		for (int64_t j = 0; j < m; j++)
			cells[j] = mk_bit_test(row, j);
		if (fwrite(cells, 1, (size_t)m, f) != (size_t)m)
			goto fail;
	}
	goto out;
fail:
	ret = mk_error_set(MK_ESYS, "write failed: %s", strerror(errno));
out:
	free(row);
	free(cells);
	return ret;
}

/* ---- the header dictionary ----------------------------------------------- */

static int mk_npy_bad(const mk_npy *h, const char *what)
{
	return mk_error_set(MK_EFORMAT, "'%s': bad .npy header: %s at offset %zu", h->path, what,
			    h->pos);
}

static void mk_npy_ws(mk_npy *h)
{
	while (h->pos < h->len && (h->s[h->pos] == ' ' || h->s[h->pos] == '\t' ||
				   h->s[h->pos] == '\n' || h->s[h->pos] == '\r'))
		h->pos++;
}

static bool mk_npy_eat(mk_npy *h, char c)
{
	mk_npy_ws(h);
	if (h->pos < h->len && h->s[h->pos] == c) {
		h->pos++;
		return true;
	}
	return false;
}

/* A Python string literal without escapes, in single or double quotes. */
static int mk_npy_string(mk_npy *h, char *buf, size_t cap)
{
	char q;
	size_t k = 0;

	mk_npy_ws(h);
	if (h->pos >= h->len || (h->s[h->pos] != '\'' && h->s[h->pos] != '"'))
		return mk_npy_bad(h, "expected a quoted string");
	q = h->s[h->pos++];
	while (h->pos < h->len && h->s[h->pos] != q) {
		if (h->s[h->pos] == '\\' || k + 1 >= cap)
			return mk_npy_bad(h, "unsupported string");
		buf[k++] = h->s[h->pos++];
	}
	if (h->pos >= h->len)
		return mk_npy_bad(h, "unterminated string");
	h->pos++;
	buf[k] = '\0';
	return MK_OK;
}

static int mk_npy_bool(mk_npy *h, bool *v)
{
	mk_npy_ws(h);
	if (h->len - h->pos >= 4 && memcmp(h->s + h->pos, "True", 4) == 0) {
		h->pos += 4;
		*v = true;
	} else if (h->len - h->pos >= 5 && memcmp(h->s + h->pos, "False", 5) == 0) {
		h->pos += 5;
		*v = false;
	} else {
		return mk_npy_bad(h, "expected True or False");
	}
	return MK_OK;
}

/* A tuple of non-negative integers: (), (3,), (3, 4), old files' (3L, 4L). */
static int mk_npy_shape(mk_npy *h)
{
	int64_t v;

	if (!mk_npy_eat(h, '('))
		return mk_npy_bad(h, "expected a shape tuple");
	h->ndim = 0;
	while (!mk_npy_eat(h, ')')) {
		mk_npy_ws(h);
		if (h->pos >= h->len || h->s[h->pos] < '0' || h->s[h->pos] > '9')
			return mk_npy_bad(h, "expected a dimension");
		for (v = 0; h->pos < h->len && h->s[h->pos] >= '0' && h->s[h->pos] <= '9'; h->pos++) {
			if (v > (INT64_MAX - 9) / 10)
				return mk_npy_bad(h, "dimension too large");
			v = v * 10 + (h->s[h->pos] - '0');
		}
		if (h->pos < h->len && h->s[h->pos] == 'L')
			h->pos++;
		if (h->ndim < MK_NPY_MAX_DIMS)
			h->shape[h->ndim] = v;
		h->ndim++; /* bounded by the header's length */
		if (!mk_npy_eat(h, ',') && !(mk_npy_ws(h), h->pos < h->len && h->s[h->pos] == ')'))
			return mk_npy_bad(h, "expected ',' or ')' in the shape");
	}
	return MK_OK;
}

static int mk_npy_entry(mk_npy *h)
{
	char key[32];
	int ret = mk_npy_string(h, key, sizeof key);

	if (ret)
		return ret;
	if (!mk_npy_eat(h, ':'))
		return mk_npy_bad(h, "expected ':'");
	if (strcmp(key, "descr") == 0) {
		mk_npy_ws(h);
		if (h->pos < h->len && h->s[h->pos] == '[')
			return mk_error_set(MK_EFORMAT, "'%s': structured dtypes are not masks", h->path);
		h->have_descr = true;
		return mk_npy_string(h, h->descr, sizeof h->descr);
	}
	if (strcmp(key, "fortran_order") == 0) {
		h->have_order = true;
		return mk_npy_bool(h, &h->fortran);
	}
	if (strcmp(key, "shape") == 0) {
		h->have_shape = true;
		return mk_npy_shape(h);
	}
	return mk_error_set(MK_EFORMAT, "'%s': bad .npy header: unexpected key '%s'", h->path, key);
}

static int mk_npy_dict(mk_npy *h)
{
	int ret;

	if (!mk_npy_eat(h, '{'))
		return mk_npy_bad(h, "expected '{'");
	while (!mk_npy_eat(h, '}')) {
		ret = mk_npy_entry(h);
		if (ret)
			return ret;
		if (!mk_npy_eat(h, ',') && !(mk_npy_ws(h), h->pos < h->len && h->s[h->pos] == '}'))
			return mk_npy_bad(h, "expected ',' or '}'");
	}
	mk_npy_ws(h);
	if (h->pos != h->len)
		return mk_npy_bad(h, "trailing characters after the dictionary");
	if (!h->have_descr || !h->have_order || !h->have_shape)
		return mk_error_set(MK_EFORMAT, "'%s': bad .npy header: it needs 'descr', "
				    "'fortran_order' and 'shape'", h->path);
	return MK_OK;
}

/* '|b1', '<i4', '>f8', ...: the byte order matters only for a float's sign. */
static int mk_npy_descr(mk_npy *h)
{
	const char *d = h->descr;
	char order = d[0], kind = d[0] ? d[1] : '\0';
	char *end;
	long size;
	bool big;

	if (!order || !strchr("<>|=", order) || !kind || !strchr("biuf", kind) || d[2] < '1' ||
	    d[2] > '9')
		goto bad;
	errno = 0;
	size = strtol(d + 2, &end, 10);
	if (errno || *end)
		goto bad;
	if ((kind == 'b' && size != 1) || (kind == 'f' && size != 2 && size != 4 && size != 8) ||
	    ((kind == 'i' || kind == 'u') && size != 1 && size != 2 && size != 4 && size != 8))
		goto bad;
	big = order == '>' || (order == '=' && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__);
	h->itemsize = (size_t)size;
	h->is_float = kind == 'f';
	h->sign_byte = big ? 0 : (int)size - 1;
	return MK_OK;
bad:
	return mk_error_set(MK_EFORMAT, "'%s': unsupported dtype '%s' (use bool, integers or "
			    "floats)", h->path, d);
}

/* ---- reading ------------------------------------------------------------ */

/* Reads the preamble and the header text; leaves f at the first data byte. */
static int mk_npy_preamble(FILE *f, mk_npy *h)
{
	unsigned char pre[12];
	uint32_t hlen;
	size_t npre;

	if (fread(pre, 1, 10, f) != 10 || memcmp(pre, MK_NPY_MAGIC, MK_NPY_MAGIC_LEN) != 0)
		return mk_error_set(MK_EFORMAT, "'%s': not a .npy file (bad magic)", h->path);
	if ((pre[6] != 1 && pre[6] != 2 && pre[6] != 3) || pre[7] != 0)
		return mk_error_set(MK_EFORMAT, "'%s': unsupported .npy version %u.%u", h->path,
				    pre[6], pre[7]);
	if (pre[6] == 1) {
		npre = 10;
		hlen = (uint32_t)pre[8] | (uint32_t)pre[9] << 8;
	} else {
		npre = 12;
		if (fread(pre + 10, 1, 2, f) != 2)
			return mk_error_set(MK_EFORMAT, "'%s': truncated .npy header", h->path);
		hlen = (uint32_t)pre[8] | (uint32_t)pre[9] << 8 | (uint32_t)pre[10] << 16 |
		       (uint32_t)pre[11] << 24;
	}
	if (hlen > MK_NPY_MAX_HEADER)
		return mk_error_set(MK_EFORMAT, "'%s': .npy header of %" PRIu32 " bytes is too long",
				    h->path, hlen);
	h->text = malloc((size_t)hlen + 1);
	if (!h->text)
		return mk_error_set(MK_ENOMEM, "out of memory");
	if (fread(h->text, 1, hlen, f) != hlen)
		return mk_error_set(MK_EFORMAT, "'%s': truncated .npy header", h->path);
	h->text[hlen] = '\0';
	h->s = h->text;
	h->len = hlen;
	h->offset = npre + hlen;
	return MK_OK;
}

int mk_npy_read_header(FILE *f, const char *path, mk_npy *h)
{
	int ret;

	memset(h, 0, sizeof *h);
	h->path = path;
	ret = mk_npy_preamble(f, h);
	return ret ? ret : mk_npy_dict(h);
}

int mk_npy_check_size(const mk_npy *h, FILE *f, uint64_t bytes, const char *what)
{
	uint64_t size, offset = h->offset;
	struct stat st;

	if (fstat(fileno(f), &st) != 0)
		return mk_error_set(MK_EIO, "'%s': %s", h->path, strerror(errno));
	size = (uint64_t)st.st_size;
	if (size != offset + bytes)
		return mk_error_set(MK_EFORMAT, "'%s': %" PRIu64 " bytes of data, expected %" PRIu64
				    " for %s (%s)", h->path, size > offset ? size - offset : 0,
				    bytes, what, size < offset + bytes ? "truncated" : "trailing bytes");
	return MK_OK;
}

static int mk_npy_check(mk_npy *h, FILE *f)
{
	uint64_t cells, data;
	char what[128];
	int ret;

	if (h->ndim != 2) {
		char shape[64];
		if (h->ndim == 0)
			snprintf(shape, sizeof shape, "()");
		else if (h->ndim == 1)
			snprintf(shape, sizeof shape, "(%" PRId64 ",)", h->shape[0]);
		else
			snprintf(shape, sizeof shape, "(%" PRId64 ", %" PRId64 "%s)", h->shape[0],
				 h->shape[1], h->ndim > 2 ? ", ..." : "");
		return mk_error_set(MK_EFORMAT, "'%s': shape %s is not 2-D; a mask is n x n, or "
				    "q_len x kv_len", h->path, shape);
	}
	if (h->shape[0] == 0 || h->shape[1] == 0)
		return mk_error_set(MK_EFORMAT, "'%s': the array is empty (%" PRId64 " x %" PRId64
				    ")", h->path, h->shape[0], h->shape[1]);
	if ((ret = mk_check_n(h->shape[0], "q_len")) || (ret = mk_check_n(h->shape[1], "kv_len")))
		return ret;
	ret = mk_mul_u64((uint64_t)h->shape[0], (uint64_t)h->shape[1], &cells);
	if (ret == MK_OK)
		ret = mk_mul_u64(cells, h->itemsize, &data);
	if (ret)
		return ret;
	snprintf(what, sizeof what, "a %" PRId64 " x %" PRId64 " '%s' array", h->shape[0],
		 h->shape[1], h->descr);
	return mk_npy_check_size(h, f, data, what);
}

static bool mk_npy_nonzero(const mk_npy *h, const uint8_t *p)
{
	for (size_t k = 0; k < h->itemsize; k++) {
		uint8_t b = p[k];
		/* A float whose only set bit is the sign is -0.0, which is zero. */
		if (h->is_float && (int)k == h->sign_byte)
			b &= 0x7f;
		if (b)
			return true;
	}
	return false;
}

static int mk_npy_read_data(mk_npy *h, FILE *f, mk_mask *m)
{
	/* Fortran order stores the columns one after the other */
	int64_t lines = h->fortran ? h->shape[1] : h->shape[0];
	int64_t n = h->fortran ? h->shape[0] : h->shape[1];
	size_t line = (size_t)n * h->itemsize;
	uint8_t *buf = malloc(line);
	int ret = MK_OK;

	if (!buf)
		return mk_error_set(MK_ENOMEM, "out of memory");
	for (int64_t k = 0; k < lines; k++) {
		if (fread(buf, 1, line, f) != line) {
			ret = mk_error_set(MK_ESYS, "'%s': read failed: %s", h->path,
					   ferror(f) ? strerror(errno) : "file shrank while reading");
			break;
		}
		for (int64_t j = 0; j < n; j++) {
			bool set = h->itemsize == 1 ? buf[j] != 0
						    : mk_npy_nonzero(h, buf + (size_t)j * h->itemsize);
			if (set)
				mk_mask_set(m, h->fortran ? j : k, h->fortran ? k : j, true);
		}
	}
	free(buf);
	return ret;
}

int mk_io_read_npy(const char *path, uint64_t max_memory, mk_mask **out)
{
	mk_npy h = {.path = path};
	mk_mask *m = NULL;
	FILE *f;
	int ret;

	*out = NULL;
	ret = mk_input_open(path, (void **)&f);
	if (ret)
		return ret;
	ret = mk_npy_read_header(f, path, &h);
	if (ret == MK_OK)
		ret = mk_npy_descr(&h);
	if (ret == MK_OK)
		ret = mk_npy_check(&h, f);
	if (ret == MK_OK)
		ret = mk_mask_new_rect(h.shape[0], h.shape[1], max_memory, &m);
	if (ret == MK_OK)
		ret = mk_npy_read_data(&h, f, m);
	if (ret == MK_OK) {
		*out = m;
		m = NULL;
	}
	mk_mask_free(m);
	free(h.text);
	fclose(f);
	return ret;
}
