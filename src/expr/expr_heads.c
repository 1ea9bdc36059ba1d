/*
 * Per-head masks: a heads file (a JSON list of expressions, one per head,
 * or a list of such lists, one per layer) read and checked, and one mask
 * per (layer, head) built from it, written as one stack (an HDF5 dataset
 * or a FlexAttention .npz).  What gen and compose --heads-file do.
 */
#include "config.h"
#include <cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include "patterns.h"
#include "io.h"

/* A heads file lists expressions: far below this.  The cap keeps a wrong
 * file (a data set named by mistake) from being slurped whole. */
#define HEADS_MAX_BYTES ((long long)16 << 20)
#define HEADS_LABEL 64

/* ---- reading the file --------------------------------------------------- */

static int heads_slurp(const char *path, char **text, size_t *len)
{
	/* a NUL byte is told with its line by the JSON parser below */
	return mk_file_read(path, HEADS_MAX_BYTES, "a heads file", 0, text, len);
}

/* The escape \u0000 in a string: cJSON's strings end at their first NUL,
 * so "diag\u0000garbage" would read as "diag". */
static const char *heads_nul_escape(const char *text)
{
	for (const char *p = text; *p; p++)
		if (*p == '\\') {
			if (!strncasecmp(p + 1, "u0000", 5))
				return p;
			if (p[1])
				p++; /* an escaped backslash does not start an escape */
		}
	return NULL;
}

static cJSON *heads_parse_json(const char *path, const char *text, size_t len, int *ret)
{
	const char *end = NULL, *nul = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(text, len + 1, &end, true);
	int64_t line = 1, col = 1;

	*ret = MK_OK;
	if (root && strlen(text) == len && !(nul = heads_nul_escape(text)))
		return root;
	cJSON_Delete(root);
	if (nul)
		end = nul;
	for (const char *p = text; end && p < end && *p; p++, col++)
		if (*p == '\n') {
			line++;
			col = 0;
		}
	if (nul)
		*ret = mk_error_set(MK_EFORMAT, "'%s': line %" PRId64 ", column %" PRId64 ": a NUL "
				    "character (\\u0000) in a string", path, line, col);
	else
		*ret = mk_error_set(MK_EFORMAT, "'%s': not valid JSON (line %" PRId64 ", column %"
				    PRId64 "); expected a list of expressions, one per head", path,
				    line, col);
	return NULL;
}

/* "head 3" or "layer 1, head 2" (numbered from 0, as in the file). */
static void heads_label(char *buf, size_t cap, int64_t layers, int64_t heads, int64_t k)
{
	if (layers)
		snprintf(buf, cap, "layer %" PRId64 ", head %" PRId64, k / heads, k % heads);
	else
		snprintf(buf, cap, "head %" PRId64, k);
}

/* Checks the shape of root and sets *layers (0: flat) and *heads. */
static int heads_shape(const char *path, const cJSON *root, int64_t *layers, int64_t *heads)
{
	const cJSON *first = cJSON_GetArrayItem(root, 0), *item;
	int64_t i = 0;

	if (!cJSON_IsArray(root))
		return mk_error_set(MK_EFORMAT, "'%s': expected a JSON list of expressions, one per "
				    "head (or a list of such lists, one per layer)", path);
	if (!first)
		return mk_error_set(MK_EFORMAT, "'%s': the list of heads is empty", path);
	if (!cJSON_IsArray(first)) {
		*layers = 0;
		*heads = cJSON_GetArraySize(root);
		cJSON_ArrayForEach(item, root) {
			if (cJSON_IsArray(item))
				return mk_error_set(MK_EFORMAT, "'%s': entry [%" PRId64 "] is a list "
						    "but entry [0] is not (give all strings, or all "
						    "lists of strings, one per layer)", path, i);
			i++;
		}
		return MK_OK;
	}
	*layers = cJSON_GetArraySize(root);
	*heads = cJSON_GetArraySize(first);
	cJSON_ArrayForEach(item, root) {
		if (!cJSON_IsArray(item))
			return mk_error_set(MK_EFORMAT, "'%s': entry [%" PRId64 "] is not a list but "
					    "entry [0] is (give all strings, or all lists of "
					    "strings, one per layer)", path, i);
		if (cJSON_GetArraySize(item) != *heads)
			return mk_error_set(MK_EFORMAT, "'%s': layer %" PRId64 " has a different number "
					    "of heads (%d) from layer 0 (%" PRId64 ")", path, i,
					    cJSON_GetArraySize(item), *heads);
		i++;
	}
	if (*heads == 0)
		return mk_error_set(MK_EFORMAT, "'%s': layer 0 is an empty list (give one "
				    "expression per head)", path);
	return MK_OK;
}

/* Copies entry k (a string holding a valid expression) into exprs[k]. */
static int heads_take(const char *path, const cJSON *item, int64_t layers, int64_t heads,
		      int64_t k, char **exprs)
{
	char label[HEADS_LABEL];
	mk_expr *e = NULL;
	int ret;

	if (!cJSON_IsString(item)) {
		if (layers)
			return mk_error_set(MK_EFORMAT, "'%s': entry [%" PRId64 "][%" PRId64 "] is not "
					    "a string", path, k / heads, k % heads);
		return mk_error_set(MK_EFORMAT, "'%s': entry [%" PRId64 "] is not a string", path, k);
	}
	ret = mk_expr_parse(item->valuestring, &e);
	mk_expr_free(e);
	if (ret) {
		heads_label(label, sizeof label, layers, heads, k);
		return mk_error_prefix("'%s': %s: ", path, label);
	}
	if (!(exprs[k] = strdup(item->valuestring)))
		return mk_error_set(MK_ENOMEM, "out of memory");
	return MK_OK;
}

static int heads_collect(const char *path, const cJSON *root, int64_t layers, int64_t heads,
			 char **exprs)
{
	const cJSON *layer, *item;
	int64_t k = 0;
	int ret = MK_OK;

	if (!layers) {
		cJSON_ArrayForEach(item, root) {
			if ((ret = heads_take(path, item, 0, heads, k++, exprs)))
				return ret;
		}
		return MK_OK;
	}
	cJSON_ArrayForEach(layer, root) {
		cJSON_ArrayForEach(item, layer) {
			if ((ret = heads_take(path, item, layers, heads, k++, exprs)))
				return ret;
		}
	}
	return MK_OK;
}

int mk_heads_file_read(const char *path, char ***exprs, int64_t *layers, int64_t *heads)
{
	cJSON *root = NULL;
	char *text = NULL, **list = NULL;
	size_t len = 0, count = 0;
	int ret;

	*exprs = NULL;
	*layers = *heads = 0;
	ret = heads_slurp(path, &text, &len);
	if (ret == MK_OK)
		root = heads_parse_json(path, text, len, &ret);
	if (ret == MK_OK)
		ret = heads_shape(path, root, layers, heads);
	if (ret == MK_OK) {
		/* both factors are counts of cJSON items: no overflow */
		count = (size_t)((*layers ? *layers : 1) * *heads);
		if (!(list = calloc(count, sizeof *list)))
			ret = mk_error_set(MK_ENOMEM, "out of memory");
	}
	if (ret == MK_OK)
		ret = heads_collect(path, root, *layers, *heads, list);
	if (ret == MK_OK) {
		*exprs = list;
		list = NULL;
	} else {
		*layers = *heads = 0;
	}
	mk_heads_file_free(list, count);
	cJSON_Delete(root);
	free(text);
	return ret;
}

void mk_heads_file_free(char **exprs, size_t count)
{
	for (size_t k = 0; exprs && k < count; k++)
		free(exprs[k]);
	free(exprs);
}

/* ---- building the masks ------------------------------------------------- */

/* Mask k is ((texts[k] op args[0]) op args[1]) ..., bound with the seed
 * bind->seed + k, so that random terms without seed= differ between heads
 * and mask k is what one expression gives with seed S + k. */
static int heads_build_one(mk_heads *h, int64_t k, int op, const char *const *args, int nargs,
			   const mk_bind_opts *bind)
{
	mk_bind_opts b = *bind;
	mk_expr *e = NULL, *next = NULL;
	char label[HEADS_LABEL];
	int ret = mk_expr_parse(h->texts[k], &e);

	for (int a = 0; a < nargs && ret == MK_OK; a++) {
		ret = mk_expr_operand(args[a], &next);
		if (ret == MK_OK)
			ret = mk_expr_join(op, e, next, &e);
	}
	b.seed += (uint64_t)k;
	if (ret == MK_OK)
		ret = mk_expr_bind(e, &b);
	if (ret == MK_OK && mk_expr_kv_len(e) != mk_expr_n(e))
		ret = mk_error_set(MK_EINVAL, "head masks are square: %" PRId64 " x %" PRId64
				   " (q_len x kv_len) is not", mk_expr_n(e), mk_expr_kv_len(e));
	if (ret == MK_OK && k > 0 && mk_expr_n(e) != mk_expr_n(h->e[0])) {
		mk_error_set(MK_EINVAL, "n = %" PRId64 " differs from the first head's n = %" PRId64,
			     mk_expr_n(e), mk_expr_n(h->e[0]));
		ret = mk_error_param("n");
	}
	if (ret == MK_OK)
		ret = mk_cursor_new(e, &h->cur[k]);
	if (ret) {
		mk_expr_free(e);
		heads_label(label, sizeof label, h->layers, h->heads, k);
		return mk_error_prefix("'%s': %s: ", h->path, label);
	}
	h->e[k] = e;
	return MK_OK;
}

int mk_heads_open(const char *path, int op, const char *const *args, int nargs,
		  const mk_bind_opts *bind, mk_heads **out)
{
	mk_heads *h = calloc(1, sizeof *h);
	int ret;

	*out = NULL;
	if (!h || !(h->path = strdup(path))) {
		free(h);
		return mk_error_set(MK_ENOMEM, "out of memory");
	}
	h->seed = bind->seed;
	ret = mk_heads_file_read(path, &h->texts, &h->layers, &h->heads);
	if (ret == MK_OK) {
		h->count = (h->layers ? h->layers : 1) * h->heads;
		h->e = calloc((size_t)h->count, sizeof *h->e);
		h->cur = calloc((size_t)h->count, sizeof *h->cur);
		if (!h->e || !h->cur)
			ret = mk_error_set(MK_ENOMEM, "out of memory");
	}
	for (int64_t k = 0; k < h->count && ret == MK_OK; k++)
		ret = heads_build_one(h, k, op, args, nargs, bind);
	if (ret)
		mk_heads_free(h);
	else
		*out = h;
	return ret;
}

void mk_heads_free(mk_heads *h)
{
	if (!h)
		return;
	for (int64_t k = 0; k < h->count; k++) {
		if (h->cur)
			mk_cursor_free(h->cur[k]);
		if (h->e)
			mk_expr_free(h->e[k]);
	}
	free(h->cur);
	free(h->e);
	mk_heads_file_free(h->texts, (size_t)h->count);
	free(h->path);
	free(h);
}

/* ---- writing the stack -------------------------------------------------- */

static void heads_row(void *ctx, int64_t k, int64_t i, uint64_t *dst)
{
	const mk_heads *h = ctx;
	mk_cursor_row(h->cur[k], i, dst);
}

/* The "expr" attribute: the heads' canonical expressions as a JSON list
 * shaped like the heads file, so it can be read back as one. */
static char *heads_expr_json(const mk_heads *h)
{
	cJSON *root = cJSON_CreateArray(), *layer = root;
	char *text = NULL;
	bool ok = root != NULL;

	for (int64_t k = 0; k < h->count && ok; k++) {
		if (h->layers && k % h->heads == 0)
			ok = (layer = cJSON_CreateArray()) && cJSON_AddItemToArray(root, layer);
		ok = ok && cJSON_AddItemToArray(layer, cJSON_CreateString(mk_expr_text(h->e[k])));
	}
	if (ok)
		text = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	return text;
}

int mk_heads_write(const mk_heads *h, const char *path, const mk_write_opts *o)
{
	mk_stack s = {.layers = h->layers, .heads = h->heads, .n = mk_expr_n(h->e[0]),
		      .row = heads_row, .ctx = (void *)h};
	mk_format f = o->format == MK_FMT_NONE ? mk_format_from_path(path) : o->format;
	char *expr;
	int ret;

	if (f != MK_FMT_H5 && f != MK_FMT_FLEX)
		return mk_error_set(MK_EINVAL, "'%s': the head masks are written as one HDF5 "
				    "dataset: give a .h5 file (or a .npz, format flex, for their "
				    "block layouts)", path);
	if (!(expr = heads_expr_json(h)))
		return mk_error_set(MK_ENOMEM, "out of memory");
	s.expr = expr;
	if (f == MK_FMT_FLEX)
		ret = mk_write_stack_flex(path, &s, o);
	else
		ret = mk_write_stack_h5(path, &s);
	cJSON_free(expr);
	return ret;
}
