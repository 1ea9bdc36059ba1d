/*
 * The one emitter of described results (include/maskkit/result.h): text,
 * aligned tables, CSV and JSON from the same field tables (JSON in
 * result_json.c).
 */
#include "config.h"
#include <cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "io.h"
#include "result.h"
#include "result_internal.h"

#define RES_LABEL_MIN 11
#define RES_CELL 384 /* a cell: a number, or a show()'s few values */

static bool res_scalar(mk_ftype t)
{
	return t <= MK_FT_BOOL || t == MK_FT_CHARS || t == MK_FT_STRS;
}

/* An MK_FT_STRS field's strings, separated by spaces. */
static void res_strs_cell(const void *rec, const mk_field *f, char *buf, size_t cap)
{
	const char *const *v = res_ptr(rec, f);
	int64_t n = v ? res_count(rec, f) : 0;
	size_t used = 0;

	buf[0] = '\0';
	for (int64_t k = 0; k < n && used < cap; k++)
		used += (size_t)snprintf(buf + used, cap - used, "%s%s", k ? " " : "", v[k]);
}

/* A scalar's text in buf: the field's format, else the type's.  Formats
 * come from the records' static tables, each written for its field's type. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
static const char *res_cell(const void *rec, const mk_field *f, bool csv, char *buf, size_t cap)
{
	const void *p = res_at(rec, f->offset);
	const char *fmt = csv && f->csv_fmt ? f->csv_fmt : f->fmt;

	if (f->show && !csv) {
		f->show(rec, buf, cap);
		return buf;
	}
	switch (f->type) {
	case MK_FT_I64: {
		int64_t v;
		memcpy(&v, p, sizeof v);
		snprintf(buf, cap, fmt ? fmt : "%" PRId64, v);
		break;
	}
	case MK_FT_U64: {
		uint64_t v;
		memcpy(&v, p, sizeof v);
		snprintf(buf, cap, fmt ? fmt : "%" PRIu64, v);
		break;
	}
	case MK_FT_INT: {
		int v;
		memcpy(&v, p, sizeof v);
		snprintf(buf, cap, fmt ? fmt : "%d", v);
		break;
	}
	case MK_FT_REAL:
		snprintf(buf, cap, csv ? (f->csv_fmt ? f->csv_fmt : "%.17g") : fmt ? fmt : "%.6g",
			 res_real(rec, f));
		break;
	case MK_FT_BOOL: {
		bool v;
		memcpy(&v, p, sizeof v);
		if (csv && f->csv_fmt)
			snprintf(buf, cap, f->csv_fmt, (int)v);
		else
			snprintf(buf, cap, "%s", csv ? (v ? "true" : "false") : v ? "yes" : "no");
		break;
	}
	case MK_FT_STR:
		return res_ptr(rec, f);
	case MK_FT_CHARS:
		return p;
	case MK_FT_STRS:
		res_strs_cell(rec, f, buf, cap);
		break;
	default:
		buf[0] = '\0';
	}
	return buf;
}
#pragma GCC diagnostic pop

/* ---- columns: the scalar fields, nested objects flattened ------------------- */

typedef struct res_col {
	const mk_field *f;
	size_t path[4]; /* offsets of the enclosing OBJ/PTR fields, outermost first */
	bool ptr[4];    /* whether each enclosing field is a pointer */
	int depth;
	char head[96];
	int width;
	bool left; /* strings are left-aligned */
	bool omit; /* MK_FF_OMIT here or above: left out of a table where never present */
} res_col;

typedef struct res_cols {
	res_col *c;
	size_t n, cap;
} res_cols;

static int res_cols_add(res_cols *cs, const mk_record *r, const res_col *outer, bool csv,
			bool text)
{
	for (size_t k = 0; k < r->count; k++) {
		const mk_field *f = &r->fields[k];
		res_col c = outer ? *outer : (res_col){0};
		const char *name = (text && f->label) ? f->label : f->name;
		if ((f->flags & MK_FF_JSON) || (csv && (f->flags & (MK_FF_TEXT | MK_FF_NOCSV))) ||
		    (!csv && (f->flags & (MK_FF_NOTEXT | MK_FF_NOTABLE))))
			continue;
		c.omit = c.omit || (f->flags & MK_FF_OMIT);
		if (c.head[0])
			snprintf(c.head + strlen(c.head), sizeof c.head - strlen(c.head), ".%s", name);
		else
			snprintf(c.head, sizeof c.head, "%s", name);
		if ((f->type == MK_FT_OBJ || f->type == MK_FT_PTR) && c.depth < 4) {
			c.path[c.depth] = f->offset;
			c.ptr[c.depth++] = f->type == MK_FT_PTR;
			int ret = res_cols_add(cs, f->sub, &c, csv, text);
			if (ret)
				return ret;
			continue;
		}
		if (!res_scalar(f->type))
			continue;
		if (cs->n == cs->cap) {
			size_t cap = cs->cap ? 2 * cs->cap : 16;
			res_col *p = realloc(cs->c, cap * sizeof *p);
			if (!p)
				return mk_error_set(MK_ENOMEM, "out of memory for a table");
			cs->c = p;
			cs->cap = cap;
		}
		c.f = f;
		c.left = f->type == MK_FT_STR || f->type == MK_FT_CHARS || f->type == MK_FT_STRS;
		c.width = (int)strlen(c.head);
		cs->c[cs->n++] = c;
	}
	return MK_OK;
}

/* The struct holding column c's field in record rec (NULL: an enclosing
 * pointer is NULL). */
static const void *res_col_rec(const res_col *c, const void *rec)
{
	for (int d = 0; rec && d < c->depth; d++) {
		const void *p = res_at(rec, c->path[d]);
		if (c->ptr[d])
			memcpy(&rec, p, sizeof rec);
		else
			rec = p;
	}
	return rec;
}

static bool res_col_present(const res_col *c, const void *rec)
{
	const void *in = res_col_rec(c, rec);
	return in && res_present(in, c->f);
}

static const char *res_col_cell(const res_col *c, const void *rec, bool csv, char *buf,
				size_t cap)
{
	if (!res_col_present(c, rec))
		return csv ? "" : "-";
	return res_cell(res_col_rec(c, rec), c->f, csv, buf, cap);
}

/* A table's widths; its MK_FF_OMIT columns absent in every row left out. */
static void res_cols_fit(res_cols *cs, const mk_record *r, const void *rows, size_t count)
{
	char buf[RES_CELL];
	size_t kept = 0;

	for (size_t c = 0; c < cs->n; c++) {
		bool seen = false;
		for (size_t k = 0; k < count; k++) {
			const void *rec = (const char *)rows + k * r->size;
			int w = (int)strlen(res_col_cell(&cs->c[c], rec, false, buf, sizeof buf));
			seen = seen || res_col_present(&cs->c[c], rec);
			if (w > cs->c[c].width)
				cs->c[c].width = w;
		}
		if (seen || !cs->c[c].omit)
			cs->c[kept++] = cs->c[c];
	}
	cs->n = kept;
}

static void res_csv_quoted(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	putc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			putc('"', f);
		putc(*s, f);
	}
	putc('"', f);
}

static int res_rows(FILE *f, bool csv, const mk_record *r, const void *rows, size_t count,
		    unsigned flags, const char *indent)
{
	res_cols cs = {0};
	char buf[RES_CELL];
	int ret;

	if ((ret = res_cols_add(&cs, r, NULL, csv, !csv)))
		goto out;
	if (!csv)
		res_cols_fit(&cs, r, rows, count);
	for (size_t k = (flags & MK_EMIT_NO_HEAD) ? 1 : 0; k <= count; k++) {
		const void *rec = k ? (const char *)rows + (k - 1) * r->size : NULL;
		fputs(indent, f);
		for (size_t c = 0; c < cs.n; c++) {
			const res_col *col = &cs.c[c];
			const char *s = rec ? res_col_cell(col, rec, csv, buf, sizeof buf) : col->head;
			if (csv) {
				if (c)
					putc(',', f);
				res_csv_quoted(f, s);
			} else {
				fprintf(f, col->left ? "%s%-*s" : "%s%*s", c ? "  " : "",
					c + 1 == cs.n && col->left ? 0 : col->width, s);
			}
		}
		putc('\n', f);
	}
out:
	free(cs.c);
	return ret;
}

/* ---- text ------------------------------------------------------------------ */

static int res_label_width(const mk_record *r, int prefix)
{
	int w = 0;

	for (size_t k = 0; k < r->count; k++) {
		const mk_field *f = &r->fields[k];
		int len = prefix + (int)strlen(f->label ? f->label : f->name);
		if (f->flags & (MK_FF_JSON | MK_FF_NOTEXT | MK_FF_BARE | MK_FF_KEYED | MK_FF_NOLINE))
			continue;
		if (f->type == MK_FT_OBJ || f->type == MK_FT_PTR)
			len = res_label_width(f->sub, len + 1);
		if (len > w)
			w = len;
	}
	return w;
}

static void res_text_numbers(FILE *out, const void *rec, const mk_field *f)
{
	const void *v = res_ptr(rec, f);
	int64_t n = v ? res_count(rec, f) : 0;

	for (int64_t k = 0; k < n; k++) {
		if (f->type == MK_FT_REALS)
			fprintf(out, "%s%.6g", k ? " " : "", ((const double *)v)[k]);
		else
			fprintf(out, "%s%" PRId64, k ? " " : "", ((const int64_t *)v)[k]);
	}
}

static int res_text(FILE *out, const mk_record *r, const void *rec, const char *prefix,
		    int width, unsigned flags)
{
	char buf[RES_CELL], label[128];
	int ret;

	for (size_t k = 0; k < r->count; k++) {
		const mk_field *f = &r->fields[k];
		bool here = res_present(rec, f);
		if ((f->flags & (MK_FF_JSON | MK_FF_NOTEXT | MK_FF_BARE | MK_FF_KEYED |
				 MK_FF_NOLINE)) ||
		    ((f->flags & MK_FF_OMIT) && !here))
			continue;
		snprintf(label, sizeof label, "%s%s%s", prefix, prefix[0] ? "." : "",
			 f->label ? f->label : f->name);
		if ((f->type == MK_FT_OBJ || f->type == MK_FT_PTR) && here) {
			const void *in = f->type == MK_FT_OBJ ? res_at(rec, f->offset) : res_ptr(rec, f);
			if ((ret = res_text(out, f->sub, in, label, width, flags)))
				return ret;
			continue;
		}
		if (f->type == MK_FT_LIST) {
			const void *base = res_ptr(rec, f);
			fprintf(out, "%s:\n", label);
			if (base && (ret = res_rows(out, false, f->sub, base, (size_t)res_count(rec, f),
						    0, "  ")))
				return ret;
			continue;
		}
		fprintf(out, "%-*s ", width, label);
		if (!here)
			fputs("-", out);
		else if (f->type == MK_FT_REALS || f->type == MK_FT_I64S)
			res_text_numbers(out, rec, f);
		else
			fputs(res_cell(rec, f, false, buf, sizeof buf), out);
		if (here && f->unit)
			fprintf(out, " %s", f->unit);
		if (f->help && !(flags & MK_EMIT_NO_NOTE))
			fprintf(out, "   (%s)", f->help);
		putc('\n', out);
	}
	return MK_OK;
}

int mk_emit(FILE *f, mk_emit_fmt fmt, const mk_record *r, const void *rows, size_t count,
	    unsigned flags)
{
	int ret = MK_OK;

	errno = 0;
	if (fmt == MK_EMIT_JSON) {
		char *s = mk_emit_json_text(r, rows, count, flags);
		if (!s)
			return mk_error_set(MK_ENOMEM, "out of memory for the JSON output");
		fputs(s, f);
		putc('\n', f);
		free(s);
	} else if (fmt == MK_EMIT_TEXT) {
		int width = res_label_width(r, 0);
		if (width < RES_LABEL_MIN)
			width = RES_LABEL_MIN;
		for (size_t k = 0; !ret && k < count; k++) {
			if (k)
				putc('\n', f);
			ret = res_text(f, r, (const char *)rows + k * r->size, "", width, flags);
		}
	} else {
		ret = res_rows(f, fmt == MK_EMIT_CSV, r, rows, count, flags, "");
	}
	if (!ret && ferror(f))
		ret = mk_error_set(MK_ESYS, "write error: %s", strerror(errno ? errno : EIO));
	return ret;
}

typedef struct res_job {
	mk_emit_fmt fmt;
	const mk_record *r;
	const void *rows;
	size_t count;
	unsigned flags;
} res_job;

static int res_write(void *file, void *arg)
{
	const res_job *j = arg;
	return mk_emit(file, j->fmt, j->r, j->rows, j->count, j->flags);
}

int mk_emit_path(const char *path, mk_emit_fmt fmt, const mk_record *r, const void *rows,
		 size_t count, unsigned flags)
{
	res_job j = {fmt, r, rows, count, flags};

	if (!strcmp(path, "-")) {
		int ret = mk_emit(stdout, fmt, r, rows, count, flags);
		if (!ret && fflush(stdout))
			ret = mk_error_set(MK_ESYS, "write error: %s", strerror(errno));
		return ret;
	}
	return mk_write_atomic(path, res_write, &j);
}

static const char *const res_type_names[] = {
	"int", "int", "int", "real", "string", "bool", "object", "object", "list", "reals", "ints",
	"string", "strings",
};

static void res_describe(FILE *f, const mk_record *r, int depth)
{
	for (size_t k = 0; k < r->count; k++) {
		const mk_field *x = &r->fields[k];
		fprintf(f, "%*s%-*s %-7s %-8s %s\n", 2 * depth, "", 24 - 2 * depth, x->name,
			res_type_names[x->type], x->unit ? x->unit : "", x->help ? x->help : "");
		if (x->sub)
			res_describe(f, x->sub, depth + 1);
	}
}

int mk_record_describe(FILE *f, const mk_record *r)
{
	errno = 0;
	res_describe(f, r, 0);
	return ferror(f) ? mk_error_set(MK_ESYS, "write error: %s", strerror(errno ? errno : EIO))
			 : MK_OK;
}
