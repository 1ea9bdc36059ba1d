/* Unit tests of the adaptive axis masks: known answers (no indicators, one
 * row and one column, local2's closed form over samples of differing
 * lengths, a hand-counted 3-sample file), a dense recount of random blocks,
 * and each kind of corrupt or mismatched file giving one error line. */
#include "config.h"
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "axis_internal.h"
#include "h5testutil.h"

static char path[4096];

static void setup(void)
{
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	h5t_tmpname(path, sizeof path, "check_axis");
}

static void teardown(void)
{
	remove(path);
}

static mk_expr *bound(const char *text, int64_t n)
{
	mk_expr *e;
	mk_bind_opts b = {.n = n};
	ck_assert_int_eq(mk_expr_parse(text, &e), MK_OK);
	ck_assert_int_eq(mk_expr_bind(e, &b), MK_OK);
	return e;
}

/* Writes rows and cols [samples, layers, n] as uint8, and lengths unless NULL. */
static void write_file(int64_t samples, int64_t layers, int64_t n, const double *rows,
		       const double *cols, const double *lengths)
{
	hid_t f = h5t_create(path);
	hsize_t dims[3] = {(hsize_t)samples, (hsize_t)layers, (hsize_t)n};
	h5t_write(f, "rows", 3, dims, H5T_STD_U8LE, rows);
	h5t_write(f, "cols", 3, dims, H5T_STD_U8LE, cols);
	if (lengths)
		h5t_write(f, "lengths", 1, dims, H5T_STD_I32LE, lengths);
	H5Fclose(f);
}

/* The status of measuring path with o (defaults when NULL); the message
 * must be one line holding `want`. */
static void expect_error(const mk_axis_opts *o, int status, const char *want)
{
	mk_axis_opts d;
	mk_axis_result r;
	if (!o) {
		mk_axis_opts_init(&d);
		o = &d;
	}
	ck_assert_int_eq(mk_axis_measure(path, o, &r), status);
	ck_assert_msg(strstr(mk_error(), want), "'%s' lacks '%s'", mk_error(), want);
	ck_assert_ptr_null(strchr(mk_error(), '\n'));
	ck_assert_ptr_null(r.by_layer);
}

/* ---- one block --------------------------------------------------------------- */

START_TEST(test_no_indicators_no_local)
{
	uint8_t zero[100] = {0};
	mk_axis_cells c;
	ck_assert_int_eq(mk_axis_count(zero, zero, 100, NULL, &c), MK_OK);
	ck_assert_uint_eq(c.count, 0);
	ck_assert_uint_eq(c.axis, 0);
	ck_assert_uint_eq(c.local, 0);
	ck_assert_int_eq(c.rows + c.cols, 0);
}
END_TEST

/* One important row r and column c: row r is whole, column c is whole, and
 * they share one cell, so |B| = 2 len - 1. */
START_TEST(test_one_row_one_column)
{
	for (int64_t len = 1; len <= 130; len += 43) {
		uint8_t *r = calloc((size_t)len, 1), *c = calloc((size_t)len, 1);
		for (int64_t i = 0; i < len; i += 1 + len / 3)
			for (int64_t j = 0; j < len; j += 1 + len / 4) {
				mk_axis_cells x;
				r[i] = c[j] = 1;
				ck_assert_int_eq(mk_axis_count(r, c, len, NULL, &x), MK_OK);
				ck_assert_uint_eq(x.count, (uint64_t)(2 * len - 1));
				ck_assert_uint_eq(x.axis, x.count);
				ck_assert_int_eq(x.rows, 1);
				ck_assert_int_eq(x.cols, 1);
				r[i] = c[j] = 0;
			}
		free(r);
		free(c);
	}
}
END_TEST

/* The band |i - j| <= 2 holds n + 2 (n - 1) + 2 (n - 2) = 5n - 6 cells. */
START_TEST(test_local2_alone)
{
	for (int64_t n = 2; n <= 200; n += 11) {
		uint8_t *zero = calloc((size_t)n, 1);
		mk_expr *e = bound("local2", n);
		mk_axis_cells c;
		ck_assert_int_eq(mk_axis_count(zero, zero, n, e, &c), MK_OK);
		ck_assert_uint_eq(c.count, (uint64_t)(5 * n - 6));
		ck_assert_uint_eq(c.local, c.count);
		ck_assert_uint_eq(c.axis, 0);
		mk_expr_free(e);
		free(zero);
	}
}
END_TEST

/* Random blocks against a cell-by-cell count of the materialised pattern. */
START_TEST(test_matches_dense_count)
{
	static const char *const exprs[] = {"local2", "local(w=70)", "causal", "bigbird(seed=3)",
					    "diagonal(offsets=0,64,65)"};
	const int64_t lens[] = {1, 63, 64, 65, 130, 257};
	uint64_t seed = 99;
	for (size_t k = 0; k < sizeof lens / sizeof *lens; k++)
		for (size_t x = 0; x < sizeof exprs / sizeof *exprs; x++) {
			int64_t n = lens[k];
			uint8_t *r = malloc((size_t)n), *c = malloc((size_t)n);
			mk_expr *e = NULL;
			mk_mask *m = NULL;
			mk_axis_cells got;
			uint64_t want = 0, local = 0;
			mk_bind_opts b = {.n = n};
			ck_assert_int_eq(mk_expr_parse(exprs[x], &e), MK_OK);
			if (mk_expr_bind(e, &b) != MK_OK) { /* e.g. bigbird at n = 1 */
				mk_expr_free(e);
				free(r);
				free(c);
				continue;
			}
			ck_assert_int_eq(mk_expr_to_mask(e, &m), MK_OK);
			for (int64_t i = 0; i < n; i++) {
				seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
				r[i] = (seed >> 33) % 10 == 0;
				c[i] = (seed >> 40) % 7 == 0 ? (uint8_t)(1 + (seed >> 50) % 200) : 0;
			}
			for (int64_t i = 0; i < n; i++)
				for (int64_t j = 0; j < n; j++) {
					want += r[i] || c[j] || mk_mask_test(m, i, j);
					local += mk_mask_test(m, i, j);
				}
			ck_assert_int_eq(mk_axis_count(r, c, n, e, &got), MK_OK);
			ck_assert_msg(got.count == want, "%s at %lld: %llu vs %llu", exprs[x],
				      (long long)n, (unsigned long long)got.count,
				      (unsigned long long)want);
			ck_assert_uint_eq(got.local, local);
			mk_mask_free(m);
			mk_expr_free(e);
			free(r);
			free(c);
		}
}
END_TEST

START_TEST(test_count_rejects_other_n)
{
	uint8_t zero[10] = {0};
	mk_expr *e = bound("local2", 12);
	mk_axis_cells c;
	ck_assert_int_eq(mk_axis_count(zero, zero, 10, e, &c), MK_EINVAL);
	ck_assert_int_eq(mk_axis_count(zero, zero, 0, NULL, &c), MK_EINVAL);
	mk_expr_free(e);
}
END_TEST

/* ---- whole files -------------------------------------------------------------- */

/* Eq. 9 for local2 alone is the mean of 1 - 5/N_i + 6/N_i^2; with no
 * local pattern and no indicators it is 1. */
START_TEST(test_local2_closed_form_over_lengths)
{
	enum { S = 9, L = 2, N = 97 };
	double *zero = calloc(S * L * N, sizeof *zero), len[S] = {97, 2, 3, 50, 64, 65, 11, 96, 7};
	double want = 0;
	mk_axis_opts o;
	mk_axis_result r;
	for (int i = 0; i < S; i++)
		want += (1 - 5.0 / len[i] + 6.0 / (len[i] * len[i])) / S;
	write_file(S, L, N, zero, zero, len);
	mk_axis_opts_init(&o);
	ck_assert_int_eq(mk_axis_measure(path, &o, &r), MK_OK);
	ck_assert_double_eq_tol(r.all.rho, want, 1e-12);
	ck_assert_double_eq_tol(r.all.rho_local, want, 1e-12);
	ck_assert_double_eq_tol(r.all.rho_axis, 1.0, 1e-15);
	for (int l = 0; l < L; l++)
		ck_assert_double_eq_tol(r.by_layer[l].rho, want, 1e-12);
	ck_assert_int_eq(r.len_min, 2);
	ck_assert_int_eq(r.len_max, 97);
	ck_assert_str_eq(r.local, "local2");
	mk_axis_result_release(&r);
	o.local = "none";
	ck_assert_int_eq(mk_axis_measure(path, &o, &r), MK_OK);
	ck_assert_double_eq(r.all.rho, 1.0);
	ck_assert_double_eq(r.all.rows_pct + r.all.cols_pct, 0.0);
	ck_assert_ptr_null(r.local);
	mk_axis_result_release(&r);
	free(zero);
}
END_TEST

/* 3 samples x 2 layers, N = 4, lengths 4, 3, 2; indicators beyond a length
 * are set and must be ignored.  Block by block (|axis part|, |B| with local2):
 *   s0 l0: r {0}, c {2}: 2*4 - 1 = 7; local2 (14 cells) adds rows 1-3:
 *          4 + 4 + 4 + 3 = 15        s0 l1: nothing: 0; 14
 *   s1 l0: r {1}, c {0}: 2*3 - 1 = 5; 9 (local2 fills 3 x 3)
 *   s1 l1: c {2}: 3; 9               s2 l0: r {0, 1}: 4; 4   s2 l1: c {1}: 2; 4 */
static const double hand_rows[24] = {1, 0, 0, 0, /**/ 0, 0, 0, 0, /**/ 0, 1, 0, 1, /**/ 0, 0, 0, 1,
				     1, 1, 1, 0, /**/ 0, 0, 1, 1};
static const double hand_cols[24] = {0, 0, 1, 0, /**/ 0, 0, 0, 0, /**/ 1, 0, 0, 1, /**/ 0, 0, 1, 0,
				     0, 0, 1, 1, /**/ 0, 1, 0, 1};
static const double hand_len[3] = {4, 3, 2};

START_TEST(test_hand_file)
{
	mk_axis_opts o;
	mk_axis_result r;
	double axis[6] = {1 - 7 / 16.0, 1, 1 - 5 / 9.0, 1 - 3 / 9.0, 0, 1 - 2 / 4.0};
	write_file(3, 2, 4, hand_rows, hand_cols, hand_len);
	mk_axis_opts_init(&o);
	o.by_sample = true;
	ck_assert_int_eq(mk_axis_measure(path, &o, &r), MK_OK);
	ck_assert_int_eq(r.samples * 10 + r.layers, 32);
	ck_assert_int_eq(r.heads * 10 + r.n, 14);
	ck_assert_double_eq_tol(r.all.rho, (1 / 16.0 + 2 / 16.0) / 6, 1e-15);
	ck_assert_double_eq_tol(r.all.rho_local, (2 / 16.0 + 2 / 16.0) / 6, 1e-15);
	ck_assert_double_eq_tol(r.all.rho_axis, (axis[0] + axis[1] + axis[2] + axis[3] + axis[4] +
						 axis[5]) / 6, 1e-15);
	ck_assert_double_eq_tol(r.by_layer[0].rho_axis, (axis[0] + axis[2] + axis[4]) / 3, 1e-15);
	ck_assert_double_eq_tol(r.by_layer[1].rho_axis, (axis[1] + axis[3] + axis[5]) / 3, 1e-15);
	ck_assert_double_eq_tol(r.by_sample[0].rho, (1 / 16.0 + 2 / 16.0) / 2, 1e-15);
	ck_assert_double_eq_tol(r.by_sample[2].rho_axis, (0 + 0.5) / 2, 1e-15);
	/* rows: layer 0 has 1 + 1 + 2 of 9 real tokens, layer 1 none; cols 2 and 2 */
	ck_assert_uint_eq(r.by_layer[0].rows, 4);
	ck_assert_uint_eq(r.by_layer[0].tokens, 9);
	ck_assert_double_eq_tol(r.by_layer[0].rows_pct, 400.0 / 9, 1e-12);
	ck_assert_double_eq(r.by_layer[1].rows_pct, 0.0);
	ck_assert_double_eq_tol(r.by_layer[0].cols_pct, 200.0 / 9, 1e-12);
	ck_assert_double_eq_tol(r.by_layer[1].cols_pct, 200.0 / 9, 1e-12);
	ck_assert_double_eq_tol(r.all.rows_pct, 400.0 / 18, 1e-12);
	ck_assert_int_eq(r.lengths[1], 3);
	ck_assert_str_eq(r.lengths_name, "/lengths");
	ck_assert_int_eq(r.dtype, MK_DTYPE_U8);
	mk_axis_result_release(&r);
}
END_TEST

/* The masks of sample 0, layer 0 as written: row 0 whole, column 2 whole,
 * the band |i - j| <= 2: 15 cells, missing (3, 0) only. */
START_TEST(test_write_sample)
{
	char out[4096];
	mk_axis_opts o;
	hid_t f, d;
	uint8_t m[2][4][4];
	write_file(3, 2, 4, hand_rows, hand_cols, hand_len);
	h5t_tmpname(out, sizeof out, "check_axis_out");
	mk_axis_opts_init(&o);
	ck_assert_int_eq(mk_axis_write(path, &o, 0, out), MK_OK);
	f = H5Fopen(out, H5F_ACC_RDONLY, H5P_DEFAULT);
	d = H5Dopen2(f, "mask", H5P_DEFAULT);
	ck_assert_int_ge(d, 0);
	ck_assert_int_ge(H5Dread(d, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, m), 0);
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++) {
			ck_assert_int_eq(m[0][i][j], !(i == 3 && j == 0));
			ck_assert_int_eq(m[1][i][j], abs(i - j) <= 2);
		}
	H5Dclose(d);
	H5Fclose(f);
	ck_assert_int_eq(mk_axis_write(path, &o, 3, out), MK_EINVAL);
	ck_assert_ptr_nonnull(strstr(mk_error(), "sample 3 is outside 0..2"));
	remove(out);
}
END_TEST

START_TEST(test_float_threshold_and_heads)
{
	/* [1 sample, 1 layer, 2 heads, 3]: head 0 rows 0.5 / 0.49 / 0.9 */
	const double p[6] = {0.5, 0.49, 0.9, 0, 0, 0}, q[6] = {0, 0, 0, 0.2, 0.6, 0.1};
	hsize_t dims[4] = {1, 1, 2, 3};
	hid_t f = h5t_create(path);
	mk_axis_opts o;
	mk_axis_result r;
	h5t_write(f, "row", 4, dims, H5T_IEEE_F32LE, p);
	h5t_write(f, "columns", 4, dims, H5T_IEEE_F64LE, q);
	H5Fclose(f);
	mk_axis_opts_init(&o);
	o.local = "none";
	ck_assert_int_eq(mk_axis_measure(path, &o, &r), MK_OK);
	ck_assert_int_eq(r.heads, 2);
	ck_assert_int_eq(r.dtype, MK_DTYPE_F32);
	ck_assert_uint_eq(r.by_head[0].rows, 2); /* 0.5 and 0.9 */
	ck_assert_uint_eq(r.by_head[1].cols, 1); /* 0.6 */
	ck_assert_double_eq_tol(r.by_head[0].rho, 1 - 6 / 9.0, 1e-15);
	ck_assert_double_eq_tol(r.by_head[1].rho, 1 - 3 / 9.0, 1e-15);
	mk_axis_result_release(&r);
	o.threshold = 0.15;
	ck_assert_int_eq(mk_axis_measure(path, &o, &r), MK_OK);
	ck_assert_uint_eq(r.by_head[0].rows, 3);
	ck_assert_uint_eq(r.by_head[1].cols, 2);
	mk_axis_result_release(&r);
}
END_TEST

START_TEST(test_given_lengths)
{
	double zero[24] = {0};
	int64_t len[3] = {2, 4, 3};
	mk_axis_opts o;
	mk_axis_result r;
	write_file(3, 2, 4, zero, zero, NULL);
	mk_axis_opts_init(&o);
	ck_assert_int_eq(mk_axis_measure(path, &o, &r), MK_OK);
	ck_assert_double_eq_tol(r.all.rho, 1 - 14 / 16.0, 1e-15); /* every sample N = 4 long */
	ck_assert_ptr_null(r.lengths_name);
	mk_axis_result_release(&r);
	o.given = len;
	o.ngiven = 3;
	ck_assert_int_eq(mk_axis_measure(path, &o, &r), MK_OK);
	ck_assert_double_eq_tol(r.all.rho, (0 + 2 / 16.0 + 0) / 3, 1e-15);
	mk_axis_result_release(&r);
	o.ngiven = 2;
	expect_error(&o, MK_EFORMAT, "2 lengths given for 3 samples");
	len[2] = 5;
	o.ngiven = 3;
	expect_error(&o, MK_EFORMAT, "lengths[2] = 5 is outside 1..4");
}
END_TEST

/* ---- corrupt and mismatched files -------------------------------------------- */

START_TEST(test_wrong_rank)
{
	double v[64] = {0};
	hsize_t dims[5] = {2, 2, 2, 2, 2};
	hid_t f = h5t_create(path);
	h5t_write(f, "rows", 1, dims, H5T_STD_U8LE, v);
	h5t_write(f, "cols", 1, dims, H5T_STD_U8LE, v);
	h5t_write(f, "r5", 5, dims, H5T_STD_U8LE, v);
	h5t_write(f, "c5", 5, dims, H5T_STD_U8LE, v);
	H5Fclose(f);
	expect_error(NULL, MK_EFORMAT, "dataset '/rows' has 1 dimensions; indicators are");
	{
		mk_axis_opts o;
		mk_axis_opts_init(&o);
		o.rows = "r5";
		o.cols = "c5";
		expect_error(&o, MK_EFORMAT, "dataset '/r5' has 5 dimensions");
	}
}
END_TEST

START_TEST(test_shape_mismatch)
{
	double v[64] = {0};
	hsize_t a[3] = {3, 2, 4}, b[3] = {3, 2, 5};
	hid_t f = h5t_create(path);
	h5t_write(f, "rows", 3, a, H5T_STD_U8LE, v);
	h5t_write(f, "cols", 3, b, H5T_STD_U8LE, v);
	H5Fclose(f);
	expect_error(NULL, MK_EFORMAT, "the row indicators '/rows' are 3 x 2 x 4 but the column "
		     "indicators '/cols' are 3 x 2 x 5");
}
END_TEST

START_TEST(test_bad_lengths)
{
	double zero[24] = {0}, big[3] = {4, 9, 2}, neg[3] = {4, 3, -1}, frac[3] = {1, 2, 3};
	hsize_t two = 2, three = 3;
	hid_t f;
	write_file(3, 2, 4, zero, zero, big);
	expect_error(NULL, MK_EFORMAT, "lengths[1] = 9 is outside 1..4 (the indicators' N)");
	write_file(3, 2, 4, zero, zero, neg);
	expect_error(NULL, MK_EFORMAT, "lengths[2] = -1 is outside 1..4");
	write_file(3, 2, 4, zero, zero, NULL);
	f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
	h5t_write(f, "lengths", 1, &three, H5T_IEEE_F32LE, frac);
	h5t_write(f, "short", 1, &two, H5T_STD_I64LE, frac);
	H5Fclose(f);
	expect_error(NULL, MK_EFORMAT, "lengths '/lengths' must be a 1-D integer dataset");
	{
		mk_axis_opts o;
		mk_axis_opts_init(&o);
		o.lengths = "short";
		expect_error(&o, MK_EFORMAT, "lengths '/short' has 2 entries for 3 samples");
		o.lengths = "nothere";
		expect_error(&o, MK_EFORMAT, "no lengths dataset '/nothere' in the file");
	}
}
END_TEST

START_TEST(test_missing_datasets)
{
	double v[8] = {0};
	hsize_t dims[2] = {2, 4};
	hid_t f = h5t_create(path);
	h5t_write(f, "cols", 2, dims, H5T_STD_U8LE, v);
	h5t_write(f, "other/x", 2, dims, H5T_STD_U8LE, v);
	H5Fclose(f);
	expect_error(NULL, MK_EFORMAT, "no dataset 'rows' or 'row' for the row indicators; the "
		     "file holds /cols, /other/x (rows)");
	{
		mk_axis_opts o;
		mk_axis_opts_init(&o);
		o.rows = "other/x";
		o.cols = "deep/missing/c";
		expect_error(&o, MK_EFORMAT, "no dataset 'deep/missing/c' for the column indicators");
		o.cols = "other/x";
		expect_error(&o, MK_EINVAL, "the same dataset '/other/x'");
	}
}
END_TEST

START_TEST(test_wrong_dtype_and_nan)
{
	const char *s[2] = {"a", "b"};
	double v[8] = {0, 0.7, NAN, 0, 0, 0, 0, 0};
	hsize_t dims[2] = {2, 4}, two = 2;
	hid_t f = h5t_create(path), t = H5Tcopy(H5T_C_S1), space, d;
	H5Tset_size(t, H5T_VARIABLE);
	space = H5Screate_simple(1, &two, NULL);
	d = H5Dcreate2(f, "text", t, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, s);
	H5Dclose(d);
	H5Sclose(space);
	H5Tclose(t);
	h5t_write(f, "rows", 2, dims, H5T_IEEE_F64LE, v);
	h5t_write(f, "cols", 2, dims, H5T_STD_U8LE, v);
	H5Fclose(f);
	expect_error(NULL, MK_EFORMAT, "dataset '/rows' holds NaN (sample 0, entry 2)");
	{
		mk_axis_opts o;
		mk_axis_opts_init(&o);
		o.rows = "text";
		expect_error(&o, MK_EFORMAT, "dataset '/text' does not hold importance indicators");
	}
}
END_TEST

START_TEST(test_empty_axis)
{
	double v[1] = {0};
	hsize_t dims[3] = {0, 2, 4};
	hid_t f = h5t_create(path);
	h5t_write(f, "rows", 3, dims, H5T_STD_U8LE, v);
	h5t_write(f, "cols", 3, dims, H5T_STD_U8LE, v);
	H5Fclose(f);
	expect_error(NULL, MK_EFORMAT, "dataset '/rows' has an empty dimension 0");
}
END_TEST

START_TEST(test_truncated_file)
{
	enum { S = 64, L = 4, N = 256 };
	double *v = calloc(S * L * N, sizeof *v);
	FILE *fp;
	long size;
	write_file(S, L, N, v, v, NULL);
	fp = fopen(path, "r+");
	fseek(fp, 0, SEEK_END);
	size = ftell(fp);
	fclose(fp);
	ck_assert_int_eq(truncate(path, size / 2), 0);
	expect_error(NULL, MK_EFORMAT, path);
	free(v);
}
END_TEST

START_TEST(test_not_hdf5_and_missing_file)
{
	FILE *fp = fopen(path, "w");
	fputs("not hdf5\n", fp);
	fclose(fp);
	expect_error(NULL, MK_EFORMAT, "not an HDF5 file");
	remove(path);
	expect_error(NULL, MK_EIO, path);
}
END_TEST

START_TEST(test_bad_options)
{
	double zero[24] = {0}, len[3] = {4, 1, 2};
	mk_axis_opts o;
	write_file(3, 2, 4, zero, zero, len);
	mk_axis_opts_init(&o);
	o.local = "local(w=";
	expect_error(&o, MK_EINVAL, "");
	o.local = "local2 + axis(rows=3)"; /* row 3 exists at length 4 only */
	expect_error(&o, MK_EINVAL, "at length 1 (sample 1)");
	o.local = "local2";
	o.threshold = NAN;
	expect_error(&o, MK_EINVAL, "threshold");
	o.threshold = 0.5;
	o.max_memory = 8;
	expect_error(&o, MK_ERANGE, "(one sample's, and the per-sample and per-block results) would need");
}
END_TEST

/* A 1.6 KB file may declare 2^30 samples: their lengths and results (8
 * GiB) are checked against max_memory before anything is allocated, and
 * indicators never written (they would read as the fill value) refused. */
START_TEST(test_declared_sizes)
{
	hsize_t dims[2] = {(hsize_t)1 << 30, 4};
	hid_t f = h5t_create(path), space = H5Screate_simple(2, dims, NULL);
	mk_axis_opts o;

	for (int k = 0; k < 2; k++)
		H5Dclose(H5Dcreate2(f, k ? "cols" : "rows", H5T_STD_U8LE, space, H5P_DEFAULT,
				    H5P_DEFAULT, H5P_DEFAULT));
	H5Sclose(space);
	H5Fclose(f);
	mk_axis_opts_init(&o);
	o.max_memory = 64 << 20;
	expect_error(&o, MK_ERANGE, "indicators of 1073741824 samples x 1 blocks x N = 4 (one "
		     "sample's, and the per-sample and per-block results) would need 8.0 GiB, over "
		     "the memory limit of 64.0 MiB");
	o.max_memory = (uint64_t)16 << 30;
	expect_error(&o, MK_EFORMAT, "dataset '/rows' was never written");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("axis");
	TCase *one = tcase_create("block"), *file = tcase_create("file"),
	      *bad = tcase_create("corrupt");
	tcase_add_test(one, test_no_indicators_no_local);
	tcase_add_test(one, test_one_row_one_column);
	tcase_add_test(one, test_local2_alone);
	tcase_add_test(one, test_matches_dense_count);
	tcase_add_test(one, test_count_rejects_other_n);
	tcase_add_checked_fixture(file, setup, teardown);
	tcase_add_test(file, test_local2_closed_form_over_lengths);
	tcase_add_test(file, test_hand_file);
	tcase_add_test(file, test_write_sample);
	tcase_add_test(file, test_float_threshold_and_heads);
	tcase_add_test(file, test_given_lengths);
	tcase_add_checked_fixture(bad, setup, teardown);
	tcase_add_test(bad, test_wrong_rank);
	tcase_add_test(bad, test_shape_mismatch);
	tcase_add_test(bad, test_bad_lengths);
	tcase_add_test(bad, test_missing_datasets);
	tcase_add_test(bad, test_wrong_dtype_and_nan);
	tcase_add_test(bad, test_empty_axis);
	tcase_add_test(bad, test_truncated_file);
	tcase_add_test(bad, test_not_hdf5_and_missing_file);
	tcase_add_test(bad, test_bad_options);
	tcase_add_test(bad, test_declared_sizes);
	suite_add_tcase(s, one);
	suite_add_tcase(s, file);
	suite_add_tcase(s, bad);
	return mk_test_main(s);
}
