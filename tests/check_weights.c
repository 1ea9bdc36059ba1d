/* Unit tests of the HDF5 weights reader: round trips of every number type,
 * finding datasets in nested groups and dotted names, and every error. */
#define _XOPEN_SOURCE 700 /* nftw */
#include "config.h"
#include <check.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "h5testutil.h"
#include "testutil.h"

#define TF "/bert/tf_bert_model/bert/"

static char scratch[PATH_MAX]; /* one directory for the whole run */

static void scratch_setup(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(scratch, sizeof scratch, "%s/check_weights.XXXXXX", tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(scratch));
}

static int scratch_remove(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(p);
}

/* Runs in the parent process, so it tidies up after failed tests too. */
static void scratch_teardown(void)
{
	nftw(scratch, scratch_remove, 8, FTW_DEPTH | FTW_PHYS);
}

static const char *path(const char *name)
{
	static char buf[PATH_MAX + 64];
	snprintf(buf, sizeof buf, "%s/%s", scratch, name);
	return buf;
}

/* $env/rel ($env unset: fallback/rel), an input from outside the test, or
 * NULL with a note when it is missing.  That fails the test instead when the
 * input is in the tree and MASKKIT_REQUIRE_ALL is set (CI); the shared data
 * is optional everywhere. */
static const char *input(const char *env, const char *fallback, const char *rel, bool in_tree)
{
	static char p[PATH_MAX];
	const char *dir = getenv(env);
	snprintf(p, sizeof p, "%s/%s", dir ? dir : fallback, rel);
	if (access(p, R_OK) == 0)
		return p;
	ck_assert_msg(!in_tree || !getenv("MASKKIT_REQUIRE_ALL"), "'%s' is missing", p);
	fprintf(stderr, "check_weights: skipped a test: no '%s'\n", p);
	return NULL;
}

static const double v12[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};

/* A small model laid out like HuggingFace's tf_model.h5. */
static const char *tf_model(void)
{
	const char *p = path("tf_model.h5");
	hid_t f = h5t_create(p);
	h5t_write2(f, TF "embeddings/position_embeddings/embeddings:0", 4, 3, v12);
	h5t_write2(f, TF "embeddings/word_embeddings/weight:0", 4, 3, v12);
	h5t_write1(f, TF "embeddings/LayerNorm/gamma:0", 3, v12);
	h5t_write2(f, TF "encoder/layer_._1/attention/self/query/kernel:0", 3, 3, v12);
	h5t_write2(f, TF "encoder/layer_._0/attention/self/query/kernel:0", 3, 3, v12);
	h5t_write1(f, TF "encoder/layer_._0/attention/self/query/bias:0", 3, v12);
	h5t_write2(f, TF "encoder/layer_._0/attention/self/key/kernel:0", 3, 3, v12);
	H5Fclose(f);
	return p;
}

/* One dataset `name` of the given shape holding 1, 2, 3, ... */
static const char *one_dataset(const char *name, int rank, const hsize_t *dims)
{
	const char *p = path("one.h5");
	double data[64];
	hid_t f = h5t_create(p);
	for (int k = 0; k < 64; k++)
		data[k] = k + 1;
	h5t_write(f, name, rank, dims, H5T_IEEE_F64LE, data);
	H5Fclose(f);
	return p;
}

static mk_weights *open_ok(const char *p)
{
	mk_weights *w = NULL;
	ck_assert_msg(mk_weights_open(p, &w) == MK_OK, "%s", mk_error());
	ck_assert_str_eq(mk_weights_file(w), p);
	return w;
}

/* The status is `want` and the message names file p and contains words. */
static void expect_error(int got, int want, const char *p, const char *words)
{
	char quoted[PATH_MAX + 8];
	snprintf(quoted, sizeof quoted, "'%s': ", p);
	ck_assert_msg(got == want, "status %d, expected %d (%s)", got, want, mk_error());
	ck_assert_msg(strncmp(mk_error(), quoted, strlen(quoted)) == 0, "%s", mk_error());
	ck_assert_msg(strstr(mk_error(), words), "'%s' not in '%s'", words, mk_error());
}

static void expect_read_error(const char *p, const char *dataset, int rank, uint64_t max_memory,
			      int want, const char *words)
{
	mk_weights *w = open_ok(p);
	mk_matrix m;
	expect_error(mk_weights_read(w, dataset, rank, max_memory, &m), want, p, words);
	ck_assert_ptr_null(m.data);
	mk_weights_close(w);
}

static void expect_find_error(const char *p, const char *needle, const char *words)
{
	mk_weights *w = open_ok(p);
	char *found = NULL;
	expect_error(mk_weights_find(w, needle, "the position embeddings", &found), MK_EFORMAT, p,
		     words);
	ck_assert_ptr_null(found);
	mk_weights_close(w);
}

/* Reads dataset "/w" of p as rank 2 and compares it with want exactly. */
static void expect_values(const char *p, int64_t rows, int64_t cols, const double *want)
{
	mk_weights *w = open_ok(p);
	mk_matrix m;
	ck_assert_msg(mk_weights_read(w, "/w", 2, 0, &m) == MK_OK, "%s", mk_error());
	ck_assert_int_eq(m.rows, rows);
	ck_assert_int_eq(m.cols, cols);
	for (int64_t k = 0; k < rows * cols; k++)
		ck_assert_msg(m.data[k] == want[k] && signbit(m.data[k]) == signbit(want[k]),
			      "[%lld] = %.17g, expected %.17g", (long long)k, m.data[k], want[k]);
	mk_matrix_release(&m);
	mk_weights_close(w);
}

/* Writes data (2 x 3) stored as ftype and reads it back as want. */
static void expect_round_trip(hid_t ftype, const double *data, const double *want)
{
	hsize_t dims[2] = {2, 3};
	hid_t f = h5t_create(path("t.h5"));
	h5t_write(f, "w", 2, dims, ftype, data);
	H5Fclose(f);
	expect_values(path("t.h5"), 2, 3, want);
}

/* ---- round trips ---------------------------------------------------------- */

START_TEST(float64_round_trip)
{
	const double v[6] = {0.1, -2.5e-300, 1e300, -0.0, 3.0, 1.0 / 3.0};
	expect_round_trip(H5T_IEEE_F64LE, v, v);
}
END_TEST

START_TEST(float32_round_trip)
{
	const double v[6] = {0.1, -2.5, 1e30, -0.0, 3.0, 1.0 / 3.0};
	const double want[6] = {(float)0.1, -2.5, (float)1e30, -0.0, 3.0, (float)(1.0 / 3.0)};
	expect_round_trip(H5T_IEEE_F32BE, v, want);
}
END_TEST

START_TEST(int32_round_trip)
{
	const double v[6] = {-7, 0, 123456, 2147483647, -2147483648.0, 1};
	expect_round_trip(H5T_STD_I32LE, v, v);
}
END_TEST

/* Half floats stored bit for bit as h5py writes numpy's float16. */
START_TEST(float16_round_trip)
{
	const uint16_t bits[6] = {0x3800, 0xc000, 0x7bff, 0x0001, 0x3555, 0x8000};
	const double want[6] = {0.5, -2, 65504, 0x1p-24, 0.333251953125, -0.0};
	hsize_t dims[2] = {2, 3};
	hid_t f = h5t_create(path("f16.h5")), f16 = h5t_float16();
	h5t_write_raw(f, "w", 2, dims, f16, bits);
	H5Tclose(f16);
	H5Fclose(f);
	expect_values(path("f16.h5"), 2, 3, want);
}
END_TEST

/* HDF5 converts doubles to half floats when the test helpers write them. */
START_TEST(float16_written_from_doubles)
{
	const double v[6] = {0.5, -2, 65504, 1.0 / 3.0, 0.1, -0.0};
	const double want[6] = {0.5, -2, 65504, 0.333251953125, 0.0999755859375, -0.0};
	hid_t f16 = h5t_float16();
	expect_round_trip(f16, v, want);
	H5Tclose(f16);
}
END_TEST

START_TEST(rank1_reads_as_one_row)
{
	hsize_t len = 5;
	mk_weights *w = open_ok(one_dataset("b", 1, &len));
	mk_matrix m;
	ck_assert_int_eq(mk_weights_read(w, "b", 1, 0, &m), MK_OK);
	ck_assert_int_eq(m.rows, 1);
	ck_assert_int_eq(m.cols, 5);
	ck_assert_double_eq(m.data[4], 5.0);
	mk_matrix_release(&m);
	mk_weights_close(w);
}
END_TEST

START_TEST(leading_slash_is_optional)
{
	mk_weights *w = open_ok(tf_model());
	const char *name = TF "embeddings/word_embeddings/weight:0";
	mk_matrix a, b;
	ck_assert_int_eq(mk_weights_read(w, name, 2, 0, &a), MK_OK);
	ck_assert_int_eq(mk_weights_read(w, name + 1, 2, 0, &b), MK_OK);
	ck_assert(a.rows == 4 && b.rows == 4 && b.cols == 3);
	ck_assert_mem_eq(a.data, b.data, 12 * sizeof(double));
	mk_matrix_release(&a);
	mk_matrix_release(&b);
	mk_weights_close(w);
}
END_TEST

/* ---- finding and listing ------------------------------------------------- */

static void expect_found(const char *p, const char *needle, const char *want)
{
	mk_weights *w = open_ok(p);
	char *found = NULL;
	ck_assert_msg(mk_weights_find(w, needle, "the position embeddings", &found) == MK_OK, "%s",
		      mk_error());
	ck_assert_str_eq(found, want);
	free(found);
	mk_weights_close(w);
}

START_TEST(find_in_nested_groups)
{
	expect_found(tf_model(), "position_embeddings",
		     TF "embeddings/position_embeddings/embeddings:0");
}
END_TEST

START_TEST(find_dotted_name)
{
	hid_t f = h5t_create(path("torch.h5"));
	h5t_write2(f, "bert.embeddings.position_embeddings.weight", 4, 3, v12);
	h5t_write1(f, "bert.embeddings.position_ids", 4, v12);
	h5t_write2(f, "bert.embeddings.word_embeddings.weight", 4, 3, v12);
	H5Fclose(f);
	expect_found(path("torch.h5"), "position", "/bert.embeddings.position_embeddings.weight");
}
END_TEST

START_TEST(find_none_lists_2d_datasets)
{
	hid_t f = h5t_create(path("few.h5"));
	h5t_write2(f, "g/b", 4, 3, v12);
	h5t_write2(f, "a", 4, 3, v12);
	h5t_write1(f, "pos_bias", 4, v12);
	H5Fclose(f);
	expect_find_error(path("few.h5"), "pos", "no 2-D dataset matches 'pos' (the position "
			  "embeddings); the file's 2 2-D datasets: /a, /g/b");
}
END_TEST

START_TEST(find_none_lists_the_first_few)
{
	hid_t f = h5t_create(path("many.h5"));
	char name[16];
	for (int k = 0; k < 9; k++) {
		snprintf(name, sizeof name, "w%d", k);
		h5t_write2(f, name, 4, 3, v12);
	}
	H5Fclose(f);
	expect_find_error(path("many.h5"), "pos", "9 2-D datasets: /w0, /w1, /w2, /w3, /w4, ...");
}
END_TEST

START_TEST(find_none_without_2d_datasets)
{
	hsize_t len = 4;
	expect_find_error(one_dataset("pos", 1, &len), "pos", "the file has no 2-D datasets");
}
END_TEST

START_TEST(find_several_lists_matches)
{
	hid_t f = h5t_create(path("two.h5"));
	char want[PATH_MAX + 256];
	h5t_write2(f, "b/position_embeddings/y:0", 4, 3, v12);
	h5t_write2(f, "a/position_embeddings/x:0", 4, 3, v12);
	H5Fclose(f);
	expect_find_error(path("two.h5"), "position_embeddings", "choose one");
	snprintf(want, sizeof want, "'%s': 2 datasets match 'position_embeddings' (the position "
		 "embeddings): /a/position_embeddings/x:0, /b/position_embeddings/y:0; choose one",
		 path("two.h5"));
	ck_assert_str_eq(mk_error(), want);
}
END_TEST

/* Long names: the message keeps its end and cuts the list between names. */
START_TEST(find_several_long_names_fit)
{
	hid_t f = h5t_create(path("long.h5"));
	char name[256];
	const char *msg, *tail = ", ...; choose one";
	for (int k = 0; k < 4; k++) {
		snprintf(name, sizeof name, "g%d/%0120d/position_embeddings", k, 0);
		h5t_write2(f, name, 4, 3, v12);
	}
	H5Fclose(f);
	expect_find_error(path("long.h5"), "position_embeddings", "4 datasets match");
	msg = mk_error();
	ck_assert_uint_lt(strlen(msg), 511);
	ck_assert_str_eq(msg + strlen(msg) - strlen(tail), tail);
	ck_assert_ptr_nonnull(strstr(msg, "0/position_embeddings, /g1/"));
	ck_assert_ptr_null(strstr(msg, "/g2/"));
}
END_TEST

/* mk_weights_list gives exactly want, a NULL-terminated list. */
static void expect_list(const char *p, int rank, const char *const *needles,
			const char *const *want)
{
	mk_weights *w = open_ok(p);
	char **list = NULL;
	size_t count = 99, n = 0;
	while (want[n])
		n++;
	ck_assert_msg(mk_weights_list(w, rank, needles, &list, &count) == MK_OK, "%s", mk_error());
	ck_assert_uint_eq(count, n);
	for (size_t k = 0; k < n; k++)
		ck_assert_str_eq(list[k], want[k]);
	ck_assert_ptr_null(list[n]);
	mk_weights_list_free(list);
	mk_weights_close(w);
}

START_TEST(list_needles_and_rank_sorted)
{
	const char *needles[] = {"layer_._", "query", NULL};
	const char *want[] = {TF "encoder/layer_._0/attention/self/query/kernel:0",
			      TF "encoder/layer_._1/attention/self/query/kernel:0", NULL};
	expect_list(tf_model(), 2, needles, want);
}
END_TEST

/* strcmp order, which is not the order of a walk group by group. */
START_TEST(list_any_rank_sorted_by_path)
{
	hid_t f = h5t_create(path("order.h5"));
	hsize_t dims3[3] = {2, 2, 2};
	const char *want[] = {"/a-b/x", "/a/x", "/b", NULL};
	h5t_write1(f, "b", 4, v12);
	h5t_write2(f, "a/x", 2, 2, v12);
	h5t_write(f, "a-b/x", 3, dims3, H5T_IEEE_F64LE, v12);
	H5Fclose(f);
	expect_list(path("order.h5"), 0, NULL, want);
}
END_TEST

START_TEST(list_empty_is_terminated)
{
	const char *needles[] = {"no such thing", NULL}, *want[] = {NULL};
	expect_list(tf_model(), 0, needles, want);
}
END_TEST

/* ---- errors -------------------------------------------------------------- */

static const struct {
	int rank;
	hsize_t dims[3];
	int asked;
	const char *words;
} bad_shapes[] = {
	{3, {2, 3, 4}, 2, "dataset '/x' has 3 dimensions, expected 2"},
	{1, {4}, 2, "dataset '/x' has 1 dimension, expected 2"},
	{2, {4, 3}, 1, "dataset '/x' has 2 dimensions, expected 1"},
	{2, {0, 4}, 2, "dataset '/x' is empty (shape 0 x 4)"},
	{1, {0}, 1, "dataset '/x' is empty (shape 0)"},
};

START_TEST(bad_shape)
{
	expect_read_error(one_dataset("x", bad_shapes[_i].rank, bad_shapes[_i].dims), "x",
			  bad_shapes[_i].asked, 0, MK_EFORMAT, bad_shapes[_i].words);
}
END_TEST

static const struct {
	const char *dataset, *words;
} bad_paths[] = {
	{TF "embeddings/nope:0", "no dataset '" TF "embeddings/nope:0'"},
	/* a missing group on the way: H5Lexists fails there rather than saying no */
	{"bert/no/such/kernel:0", "no dataset '/bert/no/such/kernel:0'"},
	{TF "embeddings/word_embeddings/weight:0/x",
	 "no dataset '" TF "embeddings/word_embeddings/weight:0/x'"},
	{"/bert", "'/bert' is a group, not a dataset"},
	{"", "'/' is a group, not a dataset"},
};

START_TEST(bad_path)
{
	expect_read_error(tf_model(), bad_paths[_i].dataset, 2, 0, MK_EFORMAT,
			  bad_paths[_i].words);
}
END_TEST

START_TEST(nan_is_named_with_position)
{
	double v[12] = {[1 * 4 + 2] = NAN};
	hid_t f = h5t_create(path("nan.h5"));
	h5t_write2(f, "x", 3, 4, v);
	H5Fclose(f);
	expect_read_error(path("nan.h5"), "x", 2, 0, MK_EFORMAT,
			  "dataset '/x' has a non-finite value (nan) at [1, 2]");
}
END_TEST

/* A float16 -inf in a bias: HDF5 converts it to a double -inf. */
START_TEST(inf_is_named_with_position)
{
	const uint16_t bits[5] = {0x3c00, 0x3c00, 0x3c00, 0xfc00, 0x7c00};
	hsize_t len = 5;
	hid_t f = h5t_create(path("inf.h5")), f16 = h5t_float16();
	h5t_write_raw(f, "b", 1, &len, f16, bits);
	H5Tclose(f16);
	H5Fclose(f);
	expect_read_error(path("inf.h5"), "b", 1, 0, MK_EFORMAT,
			  "dataset '/b' has a non-finite value (-inf) at [3]");
}
END_TEST

/* A failed open leaves *out NULL, which mk_weights_close takes. */
static void expect_open_error(const char *p, int want, const char *words)
{
	mk_weights *w = (mk_weights *)&w;
	expect_error(mk_weights_open(p, &w), want, p, words);
	ck_assert_ptr_null(w);
	mk_weights_close(w);
}

START_TEST(missing_file)
{
	expect_open_error(path("absent.h5"), MK_EIO, "No such file");
}
END_TEST

START_TEST(not_an_hdf5_file)
{
	FILE *f = fopen(path("text.h5"), "w");
	ck_assert_ptr_nonnull(f);
	fputs("not HDF5 at all\n", f);
	ck_assert_int_eq(fclose(f), 0);
	expect_open_error(path("text.h5"), MK_EFORMAT, "not an HDF5 file");
}
END_TEST

START_TEST(over_max_memory)
{
	hsize_t dims[2] = {8, 8};
	expect_read_error(one_dataset("x", 2, dims), "x", 2, 256, MK_ERANGE,
			  "dataset '/x' would need 512 B, over the memory limit of 256 B");
}
END_TEST

START_TEST(strings_are_not_numbers)
{
	const char *text[2] = {"a", "bc"};
	hsize_t dims[2] = {1, 2};
	hid_t f = h5t_create(path("str.h5")), t = H5Tcopy(H5T_C_S1);
	ck_assert_int_ge(H5Tset_size(t, H5T_VARIABLE), 0);
	h5t_write_raw(f, "s", 2, dims, t, text);
	H5Tclose(t);
	H5Fclose(f);
	expect_read_error(path("str.h5"), "s", 2, 0, MK_EFORMAT,
			  "dataset '/s' holds strings, not floats or integers");
}
END_TEST

/* A weights file must not make the reader open another file. */
START_TEST(external_link_not_followed)
{
	hid_t f = h5t_create(path("other.h5"));
	h5t_write2(f, "w", 4, 3, v12);
	H5Fclose(f);
	f = h5t_create(path("main.h5"));
	ck_assert_int_ge(H5Lcreate_external(path("other.h5"), "/w", f, "ext", H5P_DEFAULT,
					    H5P_DEFAULT), 0);
	H5Fclose(f);
	expect_read_error(path("main.h5"), "ext", 2, 0, MK_EFORMAT,
			  "'/ext' is a link to another file (not followed)");
}
END_TEST

START_TEST(bad_rank_argument)
{
	mk_weights *w = open_ok(tf_model());
	mk_matrix m;
	ck_assert_int_eq(mk_weights_read(w, TF "embeddings/word_embeddings/weight:0", 3, 0, &m),
			 MK_EINVAL);
	ck_assert_ptr_nonnull(strstr(mk_error(), "rank 1 or 2, not 3"));
	mk_weights_close(w);
}
END_TEST

/* The corrupt file of the CLI tests links a group into itself. */
START_TEST(cyclic_groups_end_the_walk)
{
	const char *p = input("SRCDIR", "..", "tests/cli/fixtures/cyclic-groups.h5", true);
	mk_weights *w;
	char **list = NULL;
	size_t count = 0;
	if (!p)
		return;
	w = open_ok(p);
	expect_error(mk_weights_list(w, 2, NULL, &list, &count), MK_EFORMAT, p,
		     "the file's groups loop or are too many to search");
	ck_assert_ptr_null(list);
	mk_weights_close(w);
}
END_TEST

/* keras-bert's test model, a real Keras file (optional shared data). */
START_TEST(real_keras_model)
{
	static const char name[] = "/model_weights/Embedding-Position/Embedding-Position/"
				   "embeddings:0";
	const char *p = input("SHARED_DATA", "../shared/data", "keras-bert/test_bert_fit.h5",
			      false);
	mk_weights *w;
	mk_matrix m;
	if (!p)
		return;
	expect_found(p, "Embedding-Position", name);
	w = open_ok(p);
	ck_assert_msg(mk_weights_read(w, name, 2, 0, &m) == MK_OK, "%s", mk_error());
	ck_assert_int_eq(m.rows, 20);
	ck_assert_int_eq(m.cols, 25);
	mk_matrix_release(&m);
	mk_weights_close(w);
}
END_TEST

static Suite *weights_suite(void)
{
	Suite *s = suite_create("weights");
	TCase *tc = tcase_create("weights");
	tcase_add_unchecked_fixture(tc, scratch_setup, scratch_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, float64_round_trip);
	tcase_add_test(tc, float32_round_trip);
	tcase_add_test(tc, int32_round_trip);
	tcase_add_test(tc, float16_round_trip);
	tcase_add_test(tc, float16_written_from_doubles);
	tcase_add_test(tc, rank1_reads_as_one_row);
	tcase_add_test(tc, leading_slash_is_optional);
	tcase_add_test(tc, find_in_nested_groups);
	tcase_add_test(tc, find_dotted_name);
	tcase_add_test(tc, find_none_lists_2d_datasets);
	tcase_add_test(tc, find_none_lists_the_first_few);
	tcase_add_test(tc, find_none_without_2d_datasets);
	tcase_add_test(tc, find_several_lists_matches);
	tcase_add_test(tc, find_several_long_names_fit);
	tcase_add_test(tc, list_needles_and_rank_sorted);
	tcase_add_test(tc, list_any_rank_sorted_by_path);
	tcase_add_test(tc, list_empty_is_terminated);
	tcase_add_loop_test(tc, bad_shape, 0, sizeof bad_shapes / sizeof bad_shapes[0]);
	tcase_add_loop_test(tc, bad_path, 0, sizeof bad_paths / sizeof bad_paths[0]);
	tcase_add_test(tc, nan_is_named_with_position);
	tcase_add_test(tc, inf_is_named_with_position);
	tcase_add_test(tc, missing_file);
	tcase_add_test(tc, not_an_hdf5_file);
	tcase_add_test(tc, over_max_memory);
	tcase_add_test(tc, strings_are_not_numbers);
	tcase_add_test(tc, external_link_not_followed);
	tcase_add_test(tc, bad_rank_argument);
	tcase_add_test(tc, cyclic_groups_end_the_walk);
	tcase_add_test(tc, real_keras_model);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return mk_test_main(weights_suite());
}
