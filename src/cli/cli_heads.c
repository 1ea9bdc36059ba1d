/*
 * Per-head masks: reading a --heads-file (a JSON list of expressions, one
 * per head, or a list of such lists, one per layer) and building one mask
 * per (layer, head) for gen and compose, written as one HDF5 stack or
 * summarised head by head.
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <cJSON.h>
#include "cli.h"

/* A heads file lists expressions: far below this.  The cap keeps a wrong
 * file (a data set named by mistake) from being slurped whole. */
#define CLI_HEADS_MAX_BYTES ((long long)16 << 20)
#define CLI_HEADS_LABEL 64

/* ---- reading the file --------------------------------------------------- */

static int heads_slurp(const char *path, char **text, size_t *len)
{
	/* a NUL byte is told with its line by heads_parse_json */
	return mk_file_read(path, CLI_HEADS_MAX_BYTES, "a heads file", 0, text, len);
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
	char label[CLI_HEADS_LABEL];
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
		mk_error_prefix("'%s': %s: ", path, label);
		return ret;
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

int cli_heads_file(const char *path, char ***exprs, int64_t *layers, int64_t *heads)
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
	cli_heads_free(list, count);
	cJSON_Delete(root);
	free(text);
	return ret;
}

void cli_heads_free(char **exprs, size_t count)
{
	for (size_t k = 0; exprs && k < count; k++)
		free(exprs[k]);
	free(exprs);
}

/* ---- building the masks ------------------------------------------------- */

struct heads_set {
	const char *path;
	char **texts;
	int64_t layers, heads, count;
	mk_expr **e;
	mk_cursor **cur;
};

static void heads_row(void *ctx, int64_t k, int64_t i, uint64_t *dst)
{
	const struct heads_set *h = ctx;
	mk_cursor_row(h->cur[k], i, dst);
}

/* Turns the message of a failure in mask k into "'FILE': head k: ...". */
static int heads_fail(const struct heads_set *h, int64_t k, int ret)
{
	char label[CLI_HEADS_LABEL];
	heads_label(label, sizeof label, h->layers, h->heads, k);
	mk_error_prefix("'%s': %s: ", h->path, label);
	return ret;
}

/* Mask k is ((texts[k] op args[0]) op args[1]) ..., bound with the seed
 * o->seed + k, so that random terms without seed= differ between heads and
 * mask k is what 'maskkit gen' gives for its expression with --seed S+k. */
static int heads_build_one(struct heads_set *h, int64_t k, int op, char **args, int nargs,
			   const cli_mask_opts *o)
{
	mk_bind_opts b = o->bind;
	mk_expr *e = NULL, *next = NULL;
	int ret = mk_expr_parse(h->texts[k], &e);

	for (int a = 0; a < nargs && ret == MK_OK; a++) {
		ret = cli_operand(args[a], &next);
		if (ret == MK_OK)
			ret = mk_expr_join(op, e, next, &e);
	}
	b.seed += (uint64_t)k;
	if (ret == MK_OK)
		ret = mk_expr_bind(e, &b);
	if (ret == MK_OK && mk_expr_kv_len(e) != mk_expr_n(e))
		ret = mk_error_set(MK_EINVAL, "head masks are square: %" PRId64 " x %" PRId64
				   " (q_len x kv_len) is not", mk_expr_n(e), mk_expr_kv_len(e));
	if (ret == MK_OK && k > 0 && mk_expr_n(e) != mk_expr_n(h->e[0]))
		ret = mk_error_set(MK_EINVAL, "n = %" PRId64 " differs from the first head's n = %"
				   PRId64 " (give --n)", mk_expr_n(e), mk_expr_n(h->e[0]));
	if (ret == MK_OK)
		ret = mk_cursor_new(e, &h->cur[k]);
	if (ret) {
		mk_expr_free(e);
		return heads_fail(h, k, ret);
	}
	h->e[k] = e;
	return MK_OK;
}

static void heads_release(struct heads_set *h)
{
	for (int64_t k = 0; k < h->count; k++) {
		if (h->cur)
			mk_cursor_free(h->cur[k]);
		if (h->e)
			mk_expr_free(h->e[k]);
	}
	free(h->cur);
	free(h->e);
	cli_heads_free(h->texts, (size_t)h->count);
}

static int heads_build(struct heads_set *h, int op, char **args, int nargs,
		       const cli_mask_opts *o)
{
	int ret = cli_heads_file(h->path, &h->texts, &h->layers, &h->heads);
	if (ret)
		return ret;
	h->count = (h->layers ? h->layers : 1) * h->heads;
	h->e = calloc((size_t)h->count, sizeof *h->e);
	h->cur = calloc((size_t)h->count, sizeof *h->cur);
	if (!h->e || !h->cur)
		return mk_error_set(MK_ENOMEM, "out of memory");
	for (int64_t k = 0; k < h->count && ret == MK_OK; k++)
		ret = heads_build_one(h, k, op, args, nargs, o);
	return ret;
}

/* The "expr" attribute: the heads' canonical expressions as a JSON list
 * shaped like the heads file, so it can be read back as one. */
static char *heads_expr_json(const struct heads_set *h)
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

static int heads_write(const struct heads_set *h, const cli_mask_opts *o, mk_format f)
{
	mk_stack s = {.layers = h->layers, .heads = h->heads, .n = mk_expr_n(h->e[0]),
		      .row = heads_row, .ctx = (void *)h};
	mk_write_opts w = {.format = f, .block = o->block, .max_memory = o->bind.max_memory};
	char *expr = heads_expr_json(h);
	int ret;

	if (!expr)
		return mk_error_set(MK_ENOMEM, "out of memory");
	s.expr = expr;
	if (f == MK_FMT_FLEX)
		ret = mk_write_stack_flex(o->out, &s, &w);
	else
		ret = mk_write_stack_h5(o->out, &s);
	cJSON_free(expr);
	return ret;
}

/* |M| and the sparsity of each mask, with the total and the mean. */
static int heads_measure(const struct heads_set *h, uint64_t *count, double *sparsity,
			 uint64_t *total, double *mean)
{
	mk_measure m;
	int ret;

	*total = 0;
	*mean = 0.0;
	for (int64_t k = 0; k < h->count; k++) {
		if ((ret = mk_measure_expr(h->e[k], NULL, 0, NULL, NULL, &m)))
			return heads_fail(h, k, ret);
		count[k] = m.count;
		sparsity[k] = m.sparsity;
		*total += m.count;
		*mean += m.sparsity;
	}
	*mean /= (double)h->count;
	return MK_OK;
}

static void heads_print(const struct heads_set *h, const uint64_t *count,
			const double *sparsity)
{
	char label[CLI_HEADS_LABEL];
	double sum = 0.0;

	if (h->layers)
		printf("%s: %" PRId64 " layers x %" PRId64 " heads", h->path, h->layers, h->heads);
	else
		printf("%s: %" PRId64 " heads", h->path, h->heads);
	printf(", n = %" PRId64 "\n", mk_expr_n(h->e[0]));
	for (int64_t k = 0; k < h->count; k++) {
		heads_label(label, sizeof label, h->layers, h->heads, k);
		printf("%s: %s: |M| = %" PRIu64 ", sparsity = %.6f\n", label,
		       mk_expr_params(h->e[k]), count[k], sparsity[k]);
		sum += sparsity[k];
	}
	printf("mean sparsity = %.6f\n", sum / (double)h->count);
	printf("(not written: give -o FILE.h5 for one dataset of all the masks)\n");
}

/* A seed up to 2^62 + k: written as an integer, not as a double. */
static void heads_json_seed(cJSON *x, uint64_t seed)
{
	char buf[32];
	snprintf(buf, sizeof buf, "%" PRIu64, seed);
	cJSON_AddRawToObject(x, "seed", buf);
}

static cJSON *heads_json(const struct heads_set *h, const cli_mask_opts *o,
			 const uint64_t *count, const double *sparsity, uint64_t total, double mean)
{
	cJSON *x = cJSON_CreateObject(), *masks;

	cJSON_AddStringToObject(x, "heads_file", h->path);
	cJSON_AddNumberToObject(x, "layers", (double)h->layers);
	cJSON_AddNumberToObject(x, "heads", (double)h->heads);
	cJSON_AddNumberToObject(x, "n", (double)mk_expr_n(h->e[0]));
	cJSON_AddNumberToObject(x, "count", (double)total);
	cJSON_AddNumberToObject(x, "sparsity", mean);
	if (o->out)
		cJSON_AddStringToObject(x, "output", o->out);
	else
		cJSON_AddNullToObject(x, "output");
	masks = cJSON_AddArrayToObject(x, "masks");
	for (int64_t k = 0; k < h->count; k++) {
		cJSON *m = cJSON_CreateObject();
		if (h->layers)
			cJSON_AddNumberToObject(m, "layer", (double)(k / h->heads));
		cJSON_AddNumberToObject(m, "head", (double)(h->layers ? k % h->heads : k));
		cJSON_AddStringToObject(m, "expr", mk_expr_text(h->e[k]));
		cJSON_AddStringToObject(m, "params", mk_expr_params(h->e[k]));
		heads_json_seed(m, o->bind.seed + (uint64_t)k);
		cJSON_AddNumberToObject(m, "count", (double)count[k]);
		cJSON_AddNumberToObject(m, "sparsity", sparsity[k]);
		cJSON_AddItemToArray(masks, m);
	}
	return x;
}

/* Without -o: |M| and sparsity per head, as text or (--json) JSON; with -o
 * and --json: the same JSON, with the output named. */
static int heads_summary(const struct heads_set *h, const cli_mask_opts *o)
{
	uint64_t *count = malloc((size_t)h->count * sizeof *count), total;
	double *sparsity = malloc((size_t)h->count * sizeof *sparsity), mean;
	int ret = count && sparsity ? MK_OK : mk_error_set(MK_ENOMEM, "out of memory");

	if (ret == MK_OK)
		ret = heads_measure(h, count, sparsity, &total, &mean);
	if (ret == MK_OK && o->json)
		ret = cli_json_out(heads_json(h, o, count, sparsity, total, mean));
	else if (ret == MK_OK)
		heads_print(h, count, sparsity);
	free(count);
	free(sparsity);
	return ret;
}

/* A stack is one HDF5 dataset, or one FlexAttention layout with a head per
 * mask; no other format holds one. */
static int heads_check_output(const cli_mask_opts *o, mk_format *out)
{
	mk_format f = o->format;

	if (o->out && f == MK_FMT_NONE)
		f = mk_format_from_path(o->out);
	*out = f;
	if (o->out && f != MK_FMT_H5 && f != MK_FMT_FLEX)
		return mk_error_set(MK_EINVAL, "'%s': --heads-file writes all the masks as one HDF5 "
				    "dataset: give a .h5 file (or a .npz, --format flex, for their "
				    "block layouts)", o->out);
	if (!o->out && f != MK_FMT_NONE)
		return mk_error_set(MK_EINVAL, "--heads-file without -o prints a summary: give "
				    "-o FILE.h5 to write the masks");
	return MK_OK;
}

int cli_heads_emit(const char *path, int op, char **args, int nargs, const cli_mask_opts *o)
{
	struct heads_set h = {.path = path};
	mk_format f = MK_FMT_NONE;
	int ret = heads_check_output(o, &f);

	if (ret == MK_OK)
		ret = heads_build(&h, op, args, nargs, o);
	if (ret == MK_OK && o->out)
		ret = heads_write(&h, o, f);
	if (ret == MK_OK && (!o->out || o->json))
		ret = heads_summary(&h, o);
	heads_release(&h);
	return ret;
}
