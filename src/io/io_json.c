/*
 * JSON masks.  The writer emits
 *   {"format":"maskkit-mask","version":1,"expr":...,"params":...,"n":N,
 *    "seed":S,"rows":[[j,...],...],"count":C}
 * where rows[i] lists the set columns of row i in increasing order; "count"
 * comes last because it is known only once every row has been written.  The
 * rows are streamed, so writing needs O(n) memory at any n.
 *
 * The reader takes that object (only "n" and "rows" are required) or a plain
 * n x n array of 0/1 or false/true.
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cJSON.h>
#include "internal.h"

/* ---- writing ------------------------------------------------------------ */

/* Column lists are most of the output: format them by hand into a buffer
 * instead of one fprintf per number. */
struct mk_jout {
	FILE *f;
	size_t len;
	char buf[1 << 16];
};

static void mk_jout_flush(struct mk_jout *b)
{
	/* A short write shows up in ferror(), checked once at the end. */
	(void)fwrite(b->buf, 1, b->len, b->f);
	b->len = 0;
}

static void mk_jout_byte(struct mk_jout *b, char c)
{
	if (b->len == sizeof b->buf)
		mk_jout_flush(b);
	b->buf[b->len++] = c;
}

static void mk_jout_int(struct mk_jout *b, uint64_t v)
{
	char digits[20];
	int k = 0;

	do {
		digits[k++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	if (b->len + (size_t)k > sizeof b->buf)
		mk_jout_flush(b);
	while (k > 0)
		b->buf[b->len++] = digits[--k];
}

/* Writes "[j,...]" for row and returns its number of set bits. */
static uint64_t mk_jout_row(struct mk_jout *b, const uint64_t *row, size_t nw)
{
	uint64_t count = 0;

	mk_jout_byte(b, '[');
	for (size_t k = 0; k < nw; k++) {
		for (uint64_t x = row[k]; x; x &= x - 1) {
			if (count++)
				mk_jout_byte(b, ',');
			mk_jout_int(b, k * 64 + (uint64_t)__builtin_ctzll(x));
		}
	}
	mk_jout_byte(b, ']');
	return count;
}

/* A JSON literal for s (null when s is NULL), escaped by cJSON. */
static char *mk_json_quote(const char *s)
{
	cJSON *item = s ? cJSON_CreateString(s) : cJSON_CreateNull();
	char *text = item ? cJSON_PrintUnformatted(item) : NULL;
	cJSON_Delete(item);
	return text;
}

int mk_io_write_json(const mk_rows *r, FILE *f, const mk_write_opts *o)
{
	size_t nw = mk_words(r->n);
	struct mk_jout *b = malloc(sizeof *b);
	uint64_t *row = malloc(nw * sizeof *row), count = 0;
	char *expr = mk_json_quote(r->expr), *params = mk_json_quote(r->params);
	int ret = MK_OK;

	if (!b || !row || !expr || !params) {
		ret = mk_error_set(MK_ENOMEM, "out of memory");
		goto out;
	}
	fprintf(f, "{\"format\":\"maskkit-mask\",\"version\":1,\"expr\":%s,\"params\":%s,"
		"\"n\":%" PRId64 ",\"seed\":%" PRIu64 ",\n\"rows\":[\n",
		expr, params, r->n, o->seed);
	b->f = f;
	b->len = 0;
	for (int64_t i = 0; i < r->n; i++) {
		r->row(r->ctx, i, row);
		count += mk_jout_row(b, row, nw);
		if (i + 1 < r->n)
			mk_jout_byte(b, ',');
		mk_jout_byte(b, '\n');
		if (ferror(f))
			break;
	}
	mk_jout_flush(b);
	fprintf(f, "],\n\"count\":%" PRIu64 "}\n", count);
	if (ferror(f))
		ret = mk_error_set(MK_ESYS, "write failed: %s", strerror(errno));
out:
	cJSON_free(expr);
	cJSON_free(params);
	free(row);
	free(b);
	return ret;
}

/* ---- reading ------------------------------------------------------------ */

/* cJSON spends about 80 bytes (a 64-byte node plus malloc's overhead) on
 * each value, and a dense 0/1 array has a value every 2 bytes of text. */
#define MK_JSON_BYTES_PER_CHAR 40

static int mk_json_slurp(const char *path, uint64_t max_memory, char **text, size_t *len)
{
	uint64_t limit = max_memory ? max_memory : MK_DEFAULT_MAX_MEMORY, need;
	char what[64 + 256];
	int ret = mk_file_read(path, limit / MK_JSON_BYTES_PER_CHAR, "a JSON mask", MK_FILE_TEXT,
			       text, len);

	/* the limit is on parsing: over it, say so in memory */
	if (ret == MK_ERANGE && mk_mul_u64((uint64_t)*len, MK_JSON_BYTES_PER_CHAR, &need) == MK_OK) {
		snprintf(what, sizeof what, "parsing the JSON mask '%s'", path);
		if (mk_check_memory(need, max_memory, what))
			mk_error_file(path);
	}
	if (ret == MK_OK && *len == 0) {
		free(*text);
		*text = NULL;
		ret = mk_error_set(MK_EFORMAT, "'%s': empty file, expected JSON", path);
		mk_error_file(path);
	}
	return ret;
}

static int mk_json_syntax_error(const char *path, const char *text, const char *at)
{
	int64_t line = 1, col = 1;

	for (const char *p = text; at && p < at; p++) {
		if (*p == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	return mk_error_set(MK_EFORMAT, "'%s': not valid JSON (line %" PRId64 ", column %"
			    PRId64 ")", path, line, col);
}

/* True when item is an integer in [lo, hi]. */
static bool mk_json_int(const cJSON *item, int64_t lo, int64_t hi, int64_t *v)
{
	double d;

	if (!cJSON_IsNumber(item))
		return false;
	d = item->valuedouble;
	if (!(d >= (double)lo && d <= (double)hi) || d != floor(d))
		return false;
	*v = (int64_t)d;
	return true;
}

static int mk_json_check_header(const char *path, const cJSON *root, int64_t *n)
{
	const cJSON *format = cJSON_GetObjectItemCaseSensitive(root, "format");
	const cJSON *version = cJSON_GetObjectItemCaseSensitive(root, "version");
	const cJSON *jn = cJSON_GetObjectItemCaseSensitive(root, "n");
	int64_t v;

	if (cJSON_IsString(format) && strcmp(format->valuestring, "maskkit-mask") != 0)
		return mk_error_set(MK_EFORMAT, "'%s': \"format\" is '%s', expected 'maskkit-mask'%s",
				    path, format->valuestring,
				    strcmp(format->valuestring, "maskkit-blocks") == 0
					    ? " (a block layout cannot be read as a mask)" : "");
	if (version && (!mk_json_int(version, 1, 1, &v)))
		return mk_error_set(MK_EFORMAT, "'%s': unsupported \"version\" (this maskkit "
				    "reads version 1)", path);
	if (!jn)
		return mk_error_set(MK_EFORMAT, "'%s': missing \"n\"", path);
	if (!mk_json_int(jn, 1, MK_N_MAX, n))
		return mk_error_set(MK_EFORMAT, "'%s': \"n\" must be an integer from 1 to %" PRId64,
				    path, MK_N_MAX);
	return MK_OK;
}

static int mk_json_bad_column(const char *path, int64_t i, const cJSON *col, int64_t n)
{
	double d = col->valuedouble;

	if (!cJSON_IsNumber(col))
		return mk_error_set(MK_EFORMAT, "'%s': row %" PRId64 " has a column that is not "
				    "a number", path, i);
	if (d != floor(d) || fabs(d) > 1e18)
		return mk_error_set(MK_EFORMAT, "'%s': row %" PRId64 " has column %g, expected an "
				    "integer from 0 to %" PRId64, path, i, d, n - 1);
	return mk_error_set(MK_EFORMAT, "'%s': row %" PRId64 " has column %" PRId64
			    " out of range for n = %" PRId64, path, i, (int64_t)d, n);
}

/* {"n": N, "rows": [[j, ...], ...]} */
static int mk_json_read_rows(const char *path, const cJSON *root, uint64_t max_memory,
			     mk_mask **out)
{
	const cJSON *rows = cJSON_GetObjectItemCaseSensitive(root, "rows"), *row, *col;
	mk_mask *m = NULL;
	int64_t n = 0, i = 0, j;
	int ret;

	ret = mk_json_check_header(path, root, &n);
	if (ret)
		return ret;
	if (!cJSON_IsArray(rows))
		return mk_error_set(MK_EFORMAT, "'%s': missing \"rows\" (an array of n arrays of "
				    "column indices)", path);
	if (cJSON_GetArraySize(rows) != n)
		return mk_error_set(MK_EFORMAT, "'%s': \"rows\" has %d entries, expected n = %"
				    PRId64, path, cJSON_GetArraySize(rows), n);
	ret = mk_mask_new(n, max_memory, &m);
	if (ret)
		return ret;
	cJSON_ArrayForEach(row, rows) {
		if (!cJSON_IsArray(row)) {
			ret = mk_error_set(MK_EFORMAT, "'%s': row %" PRId64 " is not an array of "
					   "column indices", path, i);
			goto out;
		}
		cJSON_ArrayForEach(col, row) {
			if (!mk_json_int(col, 0, n - 1, &j)) {
				ret = mk_json_bad_column(path, i, col, n);
				goto out;
			}
			mk_mask_set(m, i, j, true);
		}
		i++;
	}
out:
	if (ret)
		mk_mask_free(m);
	else
		*out = m;
	return ret;
}

/* [[0, 1, ...], ...] or with false/true */
static int mk_json_read_dense(const char *path, const cJSON *root, uint64_t max_memory,
			      mk_mask **out)
{
	int64_t n = cJSON_GetArraySize(root), i = 0, j, v;
	const cJSON *row, *cell;
	mk_mask *m = NULL;
	int ret;

	if (n == 0)
		return mk_error_set(MK_EFORMAT, "'%s': empty array, expected n rows of n 0/1 values",
				    path);
	ret = mk_mask_new(n, max_memory, &m);
	if (ret)
		return ret;
	cJSON_ArrayForEach(row, root) {
		if (!cJSON_IsArray(row) || cJSON_GetArraySize(row) != n) {
			ret = mk_error_set(MK_EFORMAT, "'%s': row %" PRId64 " has %d entries, "
					   "expected %" PRId64 " (a mask must be square)", path, i,
					   cJSON_IsArray(row) ? cJSON_GetArraySize(row) : 0, n);
			goto out;
		}
		j = 0;
		cJSON_ArrayForEach(cell, row) {
			if (cJSON_IsBool(cell))
				v = cJSON_IsTrue(cell);
			else if (!mk_json_int(cell, 0, 1, &v)) {
				ret = mk_error_set(MK_EFORMAT, "'%s': row %" PRId64 ", column %" PRId64
						   ": expected 0, 1, false or true", path, i, j);
				goto out;
			}
			if (v)
				mk_mask_set(m, i, j, true);
			j++;
		}
		i++;
	}
out:
	if (ret)
		mk_mask_free(m);
	else
		*out = m;
	return ret;
}

int mk_io_read_json(const char *path, uint64_t max_memory, mk_mask **out)
{
	const char *end = NULL;
	cJSON *root = NULL;
	char *text;
	size_t len;
	int ret;

	*out = NULL;
	ret = mk_json_slurp(path, max_memory, &text, &len);
	if (ret)
		return ret;
	root = cJSON_ParseWithLengthOpts(text, len + 1, &end, true);
	if (!root)
		ret = mk_json_syntax_error(path, text, end);
	else if (cJSON_IsArray(root))
		ret = mk_json_read_dense(path, root, max_memory, out);
	else if (cJSON_IsObject(root))
		ret = mk_json_read_rows(path, root, max_memory, out);
	else
		ret = mk_error_set(MK_EFORMAT, "'%s': expected an object with \"n\" and \"rows\", "
				   "or an n x n array of 0/1", path);
	cJSON_Delete(root);
	free(text);
	return ret;
}
