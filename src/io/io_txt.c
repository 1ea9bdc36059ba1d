/*
 * Text masks: one line per query row, one character per key column, '#' for
 * a set cell and '.' for a clear one.  The reader also takes '1' and '0' and
 * ignores '\r', so masks typed by hand or written on Windows load too.
 */
#include "config.h"
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

int mk_io_write_txt(const mk_rows *r, FILE *f, const mk_write_opts *o)
{
	int64_t n = r->n, m = r->cols;
	uint64_t *row = NULL, bytes;
	char *line = NULL, what[64];
	int ret;

	if (n == m)
		snprintf(what, sizeof what, "a text mask of n = %" PRId64, n);
	else
		snprintf(what, sizeof what, "a text mask of %" PRId64 " x %" PRId64, n, m);
	ret = mk_mul_u64((uint64_t)n, (uint64_t)m + 1, &bytes);
	if (ret == MK_OK)
		ret = mk_check_memory(bytes, o->max_memory, what);
	if (ret)
		return ret;
	row = malloc(mk_words(m) * sizeof *row);
	line = malloc((size_t)m + 1);
	if (!row || !line) {
		ret = mk_error_set(MK_ENOMEM, "out of memory");
		goto out;
	}
	line[m] = '\n';
	for (int64_t i = 0; i < n; i++) {
		r->row(r->ctx, i, row);
		for (int64_t j = 0; j < m; j++)
			line[j] = mk_bit_test(row, j) ? '#' : '.';
		if (fwrite(line, 1, (size_t)m + 1, f) != (size_t)m + 1) {
			ret = mk_error_set(MK_ESYS, "write failed: %s", strerror(errno));
			goto out;
		}
	}
out:
	free(row);
	free(line);
	return ret;
}

/* The reader is a small state machine over fixed-size chunks, so a huge or
 * hostile file never makes it hold more than one line's worth of bits
 * beyond the mask itself. */
struct mk_txt {
	const char *path;
	uint64_t max_memory;
	mk_mask *m;
	uint64_t *first; /* the cells of line 1, until its end tells n */
	int64_t n;       /* 0 until line 1 is complete */
	int64_t rows;    /* complete rows */
	int64_t line;    /* 1-based */
	int64_t col;     /* cells seen on this line */
};

static int mk_txt_cell(struct mk_txt *t, bool set)
{
	if (t->n == 0) {
		if (t->col >= MK_N_MAX)
			return mk_error_set(MK_ERANGE, "'%s': line 1 has more than %" PRId64
					    " cells (the largest n)", t->path, MK_N_MAX);
		if (set)
			mk_bit_set(t->first, t->col);
	} else if (t->rows >= t->n) {
		return mk_error_set(MK_EFORMAT, "'%s': line %" PRId64 ": more rows than the %"
				    PRId64 " columns of line 1 (a mask must be square)",
				    t->path, t->line, t->n);
	} else if (t->col >= t->n) {
		return mk_error_set(MK_EFORMAT, "'%s': line %" PRId64 " has more than %" PRId64
				    " cells (line 1 has %" PRId64 ")",
				    t->path, t->line, t->n, t->n);
	} else if (set) {
		mk_bit_set(mk_mask_row(t->m, t->rows), t->col);
	}
	t->col++;
	return MK_OK;
}

static int mk_txt_end_line(struct mk_txt *t)
{
	int ret;

	if (t->col == 0) {
		/* Blank lines may only follow the last row. */
		if (t->n == 0 || t->rows < t->n)
			return mk_error_set(MK_EFORMAT, "'%s': line %" PRId64 " is empty", t->path,
					    t->line);
	} else if (t->n == 0) {
		t->n = t->col;
		ret = mk_mask_new(t->n, t->max_memory, &t->m);
		if (ret)
			return ret;
		memcpy(mk_mask_row(t->m, 0), t->first, mk_words(t->n) * sizeof *t->first);
		t->rows = 1;
	} else if (t->col != t->n) {
		return mk_error_set(MK_EFORMAT, "'%s': line %" PRId64 " has %" PRId64
				    " cells, expected %" PRId64 " as on line 1",
				    t->path, t->line, t->col, t->n);
	} else {
		t->rows++;
	}
	t->line++;
	t->col = 0;
	return MK_OK;
}

static int mk_txt_char(struct mk_txt *t, unsigned char c)
{
	switch (c) {
	case '#': case '1': return mk_txt_cell(t, true);
	case '.': case '0': return mk_txt_cell(t, false);
	case '\r': return MK_OK;
	case '\n': return mk_txt_end_line(t);
	default: break;
	}
	if (isprint(c))
		return mk_error_set(MK_EFORMAT, "'%s': line %" PRId64 ", column %" PRId64
				    ": unexpected '%c' (use '#' or '1' for set, '.' or '0' for clear)",
				    t->path, t->line, t->col + 1, c);
	return mk_error_set(MK_EFORMAT, "'%s': line %" PRId64 ", column %" PRId64
			    ": unexpected byte 0x%02x (use '#' or '1' for set, '.' or '0' for clear)",
			    t->path, t->line, t->col + 1, c);
}

static int mk_txt_finish(struct mk_txt *t)
{
	int ret;

	if (t->col > 0) { /* no newline after the last row */
		ret = mk_txt_end_line(t);
		if (ret)
			return ret;
	}
	if (t->n == 0)
		return mk_error_set(MK_EFORMAT, "'%s': empty file, expected a mask", t->path);
	if (t->rows < t->n)
		return mk_error_set(MK_EFORMAT, "'%s': %" PRId64 " rows of %" PRId64
				    " cells; a mask must be square (n rows of n cells)",
				    t->path, t->rows, t->n);
	return MK_OK;
}

int mk_io_read_txt(const char *path, uint64_t max_memory, mk_mask **out)
{
	enum { CHUNK = 1 << 16 };
	struct mk_txt t = {.path = path, .max_memory = max_memory, .line = 1};
	unsigned char *buf = NULL;
	FILE *f;
	size_t got;
	int ret = MK_OK;

	*out = NULL;
	ret = mk_input_open(path, (void **)&f);
	if (ret)
		return ret;
	buf = malloc(CHUNK);
	t.first = calloc(mk_words(MK_N_MAX), sizeof *t.first);
	if (!buf || !t.first) {
		ret = mk_error_set(MK_ENOMEM, "out of memory");
		goto out;
	}
	while (ret == MK_OK && (got = fread(buf, 1, CHUNK, f)) > 0)
		for (size_t k = 0; k < got && ret == MK_OK; k++)
			ret = mk_txt_char(&t, buf[k]);
	if (ret == MK_OK && ferror(f))
		ret = mk_error_errno(errno, "'%s': read error", path);
	if (ret == MK_OK)
		ret = mk_txt_finish(&t);
	if (ret == MK_OK) {
		*out = t.m;
		t.m = NULL;
	}
out:
	mk_mask_free(t.m);
	free(t.first);
	free(buf);
	fclose(f);
	return ret;
}
