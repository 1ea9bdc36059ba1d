/* Unit tests of results as data (result.h: one record, four outputs) and of
 * the structured error (mk_error_get, mk_error_prefix, mk_error_param).  The
 * JSON is compared with a tree built here with cJSON's own calls, the way
 * the commands used to build theirs, so "byte-compatible" is checked, not
 * assumed. */
#define _GNU_SOURCE /* open_memstream */
#include "config.h"
#include <cJSON.h>
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"

typedef struct t_fit {
	int64_t k;
	double r2;
} t_fit;

typedef struct t_item {
	int64_t block;
	double density;
} t_item;

typedef struct t_rec {
	const char *name;
	int64_t n;
	uint64_t seed;
	double ratio, missing;
	bool causal;
	t_fit fit;
	const t_fit *none;   /* NULL: null */
	const t_item *items;
	int64_t nitems;
	const double *values;
	int64_t nvalues;
	const char *note; /* NULL: left out (MK_FF_OMIT) */
	int64_t hidden;   /* text only */
} t_rec;

static const mk_field t_fit_fields[] = {
	{MK_FIELD(t_fit, k, "k", MK_FT_I64)},
	{MK_FIELD(t_fit, r2, "r2", MK_FT_REAL), .label = "R^2", .fmt = "%.3f"},
};
static const mk_record t_fit_record = MK_RECORD("fit", t_fit, t_fit_fields);

static const mk_field t_item_fields[] = {
	{MK_FIELD(t_item, block, "block", MK_FT_I64)},
	{MK_FIELD(t_item, density, "density", MK_FT_REAL), .fmt = "%.4f"},
};
static const mk_record t_item_record = MK_RECORD("item", t_item, t_item_fields);

static const mk_field t_fields[] = {
	{MK_FIELD(t_rec, name, "name", MK_FT_STR)},
	{MK_FIELD(t_rec, n, "n", MK_FT_I64), .unit = "tokens", .help = "positions"},
	{MK_FIELD(t_rec, seed, "seed", MK_FT_U64), .flags = MK_FF_EXACT},
	{MK_FIELD(t_rec, ratio, "ratio", MK_FT_REAL), .fmt = "%.2f"},
	{MK_FIELD(t_rec, missing, "missing", MK_FT_REAL)},
	{MK_FIELD(t_rec, causal, "causal", MK_FT_BOOL)},
	{MK_FIELD(t_rec, fit, "fit", MK_FT_OBJ), .sub = &t_fit_record},
	{MK_FIELD(t_rec, none, "none", MK_FT_PTR), .sub = &t_fit_record},
	{MK_FIELD(t_rec, items, "items", MK_FT_LIST), .sub = &t_item_record,
	 .count_offset = offsetof(t_rec, nitems)},
	{MK_FIELD(t_rec, values, "values", MK_FT_REALS), .count_offset = offsetof(t_rec, nvalues)},
	{MK_FIELD(t_rec, note, "note", MK_FT_STR), .flags = MK_FF_OMIT},
	{MK_FIELD(t_rec, hidden, "hidden", MK_FT_I64), .flags = MK_FF_TEXT},
};
static const mk_record t_record = MK_RECORD("test", t_rec, t_fields);

static const t_item items[2] = {{64, 0.5}, {128, 0.25}};
static const double values[3] = {1.5, NAN, -2};

static t_rec sample(const char *name)
{
	return (t_rec){.name = name, .n = 512, .seed = (1ull << 62) + 1, .ratio = 0.125,
		       .missing = NAN, .causal = true, .fit = {4, 0.99951}, .items = items,
		       .nitems = 2, .values = values, .nvalues = 3, .hidden = 7};
}

/* The emitter's output as a string (malloc'd). */
static char *emit(mk_emit_fmt fmt, const t_rec *rows, size_t count, unsigned flags)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(mk_emit(f, fmt, &t_record, rows, count, flags), MK_OK);
	fclose(f);
	return buf;
}

/* The same object built by hand with cJSON, as the commands did. */
static cJSON *by_hand(const t_rec *r)
{
	cJSON *o = cJSON_CreateObject(), *fit, *a;
	char seed[32];

	cJSON_AddStringToObject(o, "name", r->name);
	cJSON_AddNumberToObject(o, "n", (double)r->n);
	snprintf(seed, sizeof seed, "%llu", (unsigned long long)r->seed);
	cJSON_AddRawToObject(o, "seed", seed);
	cJSON_AddNumberToObject(o, "ratio", r->ratio);
	cJSON_AddNullToObject(o, "missing");
	cJSON_AddBoolToObject(o, "causal", r->causal);
	fit = cJSON_AddObjectToObject(o, "fit");
	cJSON_AddNumberToObject(fit, "k", (double)r->fit.k);
	cJSON_AddNumberToObject(fit, "r2", r->fit.r2);
	cJSON_AddNullToObject(o, "none");
	a = cJSON_AddArrayToObject(o, "items");
	for (int64_t k = 0; k < r->nitems; k++) {
		cJSON *x = cJSON_CreateObject();
		cJSON_AddNumberToObject(x, "block", (double)r->items[k].block);
		cJSON_AddNumberToObject(x, "density", r->items[k].density);
		cJSON_AddItemToArray(a, x);
	}
	a = cJSON_AddArrayToObject(o, "values");
	for (int64_t k = 0; k < r->nvalues; k++)
		cJSON_AddItemToArray(a, isfinite(r->values[k]) ? cJSON_CreateNumber(r->values[k])
							       : cJSON_CreateNull());
	if (r->note)
		cJSON_AddStringToObject(o, "note", r->note);
	return o;
}

START_TEST(json_is_what_cjson_writes)
{
	t_rec r[2] = {sample("a"), sample("b,\"c\"")};
	cJSON *one = by_hand(&r[0]), *two = cJSON_CreateArray();
	char *want, *got;

	r[1].note = "here";
	want = cJSON_Print(one);
	got = emit(MK_EMIT_JSON, r, 1, 0);
	ck_assert_uint_eq(strlen(got), strlen(want) + 1);
	ck_assert_int_eq(strncmp(got, want, strlen(want)), 0);
	ck_assert_str_eq(got + strlen(want), "\n");
	/* the seed above 2^53 is exact, not rounded through a double */
	ck_assert_ptr_nonnull(strstr(got, "4611686018427387905"));
	free(want);
	free(got);

	cJSON_AddItemToArray(two, by_hand(&r[0]));
	cJSON_AddItemToArray(two, by_hand(&r[1]));
	want = cJSON_Print(two);
	got = mk_emit_json_text(&t_record, r, 2, 0);
	ck_assert_str_eq(got, want);
	free(got);
	free(want);
	/* MK_EMIT_ARRAY: one record is still an array */
	got = mk_emit_json_text(&t_record, r, 1, MK_EMIT_ARRAY);
	ck_assert_int_eq(got[0], '[');
	free(got);
	cJSON_Delete(one);
	cJSON_Delete(two);
}
END_TEST

START_TEST(csv_quotes_and_flattens)
{
	t_rec r[2] = {sample("plain"), sample("b,\"c\"\nd")};
	char *got = emit(MK_EMIT_CSV, r, 2, 0);
	const char *want =
		"name,n,seed,ratio,missing,causal,fit.k,fit.r2,none.k,none.r2,note\n"
		"plain,512,4611686018427387905,0.125,,true,4,0.99951000000000001,,,\n"
		"\"b,\"\"c\"\"\nd\",512,4611686018427387905,0.125,,true,4,0.99951000000000001,,,\n";

	/* lists and text-only fields are not columns; absent values are empty */
	ck_assert_str_eq(got, want);
	free(got);
	got = emit(MK_EMIT_CSV, r, 1, MK_EMIT_NO_HEAD);
	ck_assert_int_eq(strncmp(got, "plain,", 6), 0);
	free(got);
}
END_TEST

/* Every line of a table has its columns' right edges in the same places. */
START_TEST(table_aligns_columns)
{
	t_rec r[3] = {sample("x"), sample("a much longer name"), sample("y")};
	char *got;
	size_t width = 0;
	int lines = 0;

	r[1].n = 1234567;
	got = emit(MK_EMIT_TABLE, r, 3, 0);
	/* "hidden" is the last column, right-aligned: every line ends at one place */
	for (const char *line = got, *end; *line; line = end + 1) {
		end = strchr(line, '\n');
		ck_assert_ptr_nonnull(end);
		if (!width)
			width = (size_t)(end - line);
		ck_assert_uint_eq((size_t)(end - line), width);
		lines++;
	}
	ck_assert_int_eq(lines, 4);
	ck_assert_ptr_nonnull(strstr(got, "fit.R^2"));      /* labels, nested names */
	ck_assert_ptr_nonnull(strstr(got, "1234567"));
	ck_assert_ptr_nonnull(strstr(got, " 0.12 "));        /* the field's format */
	ck_assert_ptr_null(strstr(got, "density"));         /* lists are JSON's */
	free(got);
}
END_TEST

START_TEST(text_lines_per_field)
{
	t_rec r = sample("x");
	char *got = emit(MK_EMIT_TEXT, &r, 1, 0);

	ck_assert_ptr_nonnull(strstr(got, "name        x\n"));
	ck_assert_ptr_nonnull(strstr(got, "n           512 tokens   (positions)\n"));
	ck_assert_ptr_nonnull(strstr(got, "missing     -\n"));
	ck_assert_ptr_nonnull(strstr(got, "causal      yes\n"));
	ck_assert_ptr_nonnull(strstr(got, "fit.R^2     1.000\n"));
	ck_assert_ptr_nonnull(strstr(got, "none        -\n"));
	ck_assert_ptr_nonnull(strstr(got, "items:\n  block  density\n     64   0.5000\n"));
	ck_assert_ptr_nonnull(strstr(got, "values      1.5 nan -2\n"));
	ck_assert_ptr_nonnull(strstr(got, "hidden      7\n"));
	ck_assert_ptr_null(strstr(got, "note")); /* absent and MK_FF_OMIT */
	free(got);
	got = emit(MK_EMIT_TEXT, &r, 1, MK_EMIT_NO_NOTE);
	ck_assert_ptr_null(strstr(got, "(positions)"));
	free(got);
}
END_TEST

START_TEST(path_is_written_atomically)
{
	t_rec r = sample("x");
	char dir[] = "/tmp/mk_resultXXXXXX", path[64], *want = emit(MK_EMIT_CSV, &r, 1, 0);
	char got[512] = {0};
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/r.csv", dir);
	ck_assert_int_eq(mk_emit_path(path, MK_EMIT_CSV, &t_record, &r, 1, 0), MK_OK);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fread(got, 1, sizeof got - 1, f), strlen(want));
	fclose(f);
	ck_assert_str_eq(got, want);
	unlink(path);
	snprintf(path, sizeof path, "%s/no/r.csv", dir);
	ck_assert_int_ne(mk_emit_path(path, MK_EMIT_CSV, &t_record, &r, 1, 0), MK_OK);
	rmdir(dir);
	free(want);
}
END_TEST

START_TEST(describe_lists_every_field)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_int_eq(mk_record_describe(f, &t_record), MK_OK);
	fclose(f);
	for (size_t k = 0; k < t_record.count; k++)
		ck_assert_ptr_nonnull(strstr(buf, t_fields[k].name));
	ck_assert_ptr_nonnull(strstr(buf, "  density")); /* nested, indented */
	free(buf);
}
END_TEST

START_TEST(error_prefix_keeps_the_message)
{
	char long_msg[600];
	const mk_error_info *e;

	memset(long_msg, 'x', sizeof long_msg - 1);
	long_msg[sizeof long_msg - 1] = '\0';
	ck_assert_int_eq(mk_error_set(MK_EFORMAT, "%s!", long_msg), MK_EFORMAT);
	ck_assert_int_eq(mk_error_prefix("'%s': ", "model.h5"), MK_EFORMAT);
	ck_assert_int_eq(strncmp(mk_error(), "'model.h5': xxx", 15), 0);
	/* nothing cut: the old 512-byte copy lost the end of such a message */
	ck_assert_uint_eq(strlen(mk_error()), strlen("'model.h5': ") + sizeof long_msg);
	ck_assert_int_eq(mk_error()[strlen(mk_error()) - 1], '!');

	ck_assert_int_eq(mk_error_set(MK_ERANGE, "over the memory limit of 1 GiB"), MK_ERANGE);
	ck_assert_int_eq(mk_error_param("max_memory"), MK_ERANGE);
	ck_assert_int_eq(mk_error_file("a\nb.h5"), MK_ERANGE);
	e = mk_error_get();
	ck_assert_int_eq(e->status, MK_ERANGE);
	ck_assert_str_eq(e->param, "max_memory");
	ck_assert_str_eq(e->file, "a\nb.h5");
	ck_assert_str_eq(e->message, "over the memory limit of 1 GiB (max_memory)");
	/* a new error forgets the old one's parameter and file */
	mk_error_set(MK_EINVAL, "bad\tvalue");
	e = mk_error_get();
	ck_assert_ptr_null(e->param);
	ck_assert_ptr_null(e->file);
	ck_assert_str_eq(e->message, "bad?value");
}
END_TEST

static Suite *result_suite(void)
{
	Suite *s = suite_create("result");
	TCase *tc = tcase_create("result");
	tcase_add_test(tc, json_is_what_cjson_writes);
	tcase_add_test(tc, csv_quotes_and_flattens);
	tcase_add_test(tc, table_aligns_columns);
	tcase_add_test(tc, text_lines_per_field);
	tcase_add_test(tc, path_is_written_atomically);
	tcase_add_test(tc, describe_lists_every_field);
	tcase_add_test(tc, error_prefix_keeps_the_message);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return mk_test_main(result_suite());
}
