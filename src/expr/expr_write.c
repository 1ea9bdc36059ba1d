/*
 * Writing an expression's mask: its rows streamed from a cursor into io's
 * row writers (src/io/io.c), so no n x n mask is ever held.  It lives with
 * the expressions, above io, because io knows rows, not expressions.
 */
#include "config.h"
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include "internal.h"
#include "core.h"
#include "expr.h"
#include "io.h"

static void expr_write_row(void *ctx, int64_t i, uint64_t *dst)
{
	mk_cursor_row(ctx, i, dst);
}

/* The formats that hold a rectangular (q_len x kv_len) mask. */
static int expr_write_check_shape(const mk_expr *e, mk_format f)
{
	if (mk_expr_n(e) == mk_expr_kv_len(e) || f == MK_FMT_NPY || f == MK_FMT_TXT ||
	    f == MK_FMT_FLEX || f == MK_FMT_FLEX_PY)
		return MK_OK;
	return mk_error_set(MK_EINVAL, "the %s format holds square masks: write a rectangular "
			    "one (%" PRId64 " x %" PRId64 ") as .npy, .txt or .npz (flex)",
			    mk_format_name(f), mk_expr_n(e), mk_expr_kv_len(e));
}

/* A mask_mod is text made from the expression, not rows (expr_flex.c):
 * made before the output is opened, so that its errors are the
 * expression's, not the file's. */
static int expr_write_text(void *file, void *text)
{
	return fputs(text, file) == EOF ? mk_error_errno(errno, "write failed") : MK_OK;
}

/* To path atomically, or (path NULL) to the stream file. */
static int expr_write_flex_py(const mk_expr *e, const char *path, FILE *file)
{
	char *text = NULL;
	int ret = mk_expr_flex_py(e, &text);

	if (ret == MK_OK && path)
		ret = mk_write_atomic(path, expr_write_text, text);
	else if (ret == MK_OK && file)
		ret = expr_write_text(file, text);
	free(text);
	return ret;
}

/* Makes a row source of a bound expression; the caller frees *cur. */
static int expr_write_rows(const mk_expr *e, mk_rows *r, mk_cursor **cur)
{
	int64_t n;
	int ret;

	*cur = NULL;
	n = mk_expr_n(e);
	if (n == 0)
		return mk_error_set(MK_EINTERNAL, "writing an expression that was not bound");
	ret = mk_check_n(n, "n");
	if (ret)
		return ret;
	ret = mk_cursor_new(e, cur);
	if (ret)
		return ret;
	*r = (mk_rows){
		.n = n,
		.cols = mk_expr_kv_len(e),
		.row = expr_write_row,
		.ctx = *cur,
		.expr = mk_expr_text(e),
		.params = mk_expr_params(e),
	};
	return MK_OK;
}

int mk_write_expr(const mk_expr *e, const char *path, const mk_write_opts *o)
{
	static const mk_write_opts defaults = {0};
	mk_format format;
	mk_cursor *cur = NULL;
	mk_rows rows;
	int ret;

	assert(e && path);
	if (!o)
		o = &defaults;
	format = o->format != MK_FMT_NONE ? o->format : mk_format_from_path(path);
	if (format == MK_FMT_NONE)
		return mk_error_set(MK_EINVAL, "'%s': cannot tell the output format from the "
				    "extension (use .txt, .json, .png, .h5, .npy or .npz)", path);
	if ((ret = expr_write_check_shape(e, format)))
		return mk_io_name_error(ret, path);
	if (format == MK_FMT_FLEX_PY)
		return expr_write_flex_py(e, path, NULL);
	ret = expr_write_rows(e, &rows, &cur);
	if (ret == MK_OK)
		ret = mk_io_write_rows(&rows, path, format, o);
	mk_cursor_free(cur);
	return ret;
}

int mk_write_expr_stream(const mk_expr *e, void *file, const mk_write_opts *o)
{
	static const mk_write_opts defaults = {0};
	mk_cursor *cur = NULL;
	mk_rows rows;
	int ret;

	assert(e && file);
	if (!o)
		o = &defaults;
	/* io refuses a format a stream cannot take (HDF5) */
	if ((ret = expr_write_check_shape(e, o->format)))
		return ret;
	if (o->format == MK_FMT_FLEX_PY) {
		ret = expr_write_flex_py(e, NULL, file);
		if (ret == MK_OK && fflush(file) != 0)
			ret = mk_error_errno(errno, "write failed");
		return ret;
	}
	ret = expr_write_rows(e, &rows, &cur);
	if (ret == MK_OK)
		ret = mk_io_write_rows_stream(&rows, file, o);
	mk_cursor_free(cur);
	return ret;
}
