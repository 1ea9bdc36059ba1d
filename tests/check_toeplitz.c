/* Unit tests of the Toeplitz fit and the Gram matrix: known answers from
 * closed forms (sinusoidal embeddings, Toeplitz plus noise, a hand example). */
#include "config.h"
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* A reproducible standard normal from a 64-bit LCG and Box-Muller. */
static double test_uniform(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return ((double)(*s >> 11) + 0.5) / 9007199254740992.0;
}

static double test_normal(uint64_t *s)
{
	double u = test_uniform(s), v = test_uniform(s);
	return sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
}

static mk_matrix test_matrix(int64_t rows, int64_t cols)
{
	mk_matrix m;
	ck_assert_int_eq(mk_matrix_new(rows, cols, 0, "test", &m), MK_OK);
	return m;
}

/* Vaswani et al.'s embeddings: E[p][2i] = sin(p w_i), E[p][2i+1] = cos(p w_i),
 * so (E E^T)[p][q] = sum_i cos((p - q) w_i) depends on p - q only. */
START_TEST(test_sinusoidal_is_toeplitz)
{
	int64_t n = 300, d = 64;
	mk_matrix e = test_matrix(n, d), p;
	mk_toeplitz t;
	for (int64_t pos = 0; pos < n; pos++)
		for (int64_t i = 0; i < d / 2; i++) {
			double w = pow(10000.0, -2.0 * (double)i / (double)d);
			e.data[pos * d + 2 * i] = sin((double)pos * w);
			e.data[pos * d + 2 * i + 1] = cos((double)pos * w);
		}
	ck_assert_int_eq(mk_matrix_gram(&e, 0, &p), MK_OK);
	ck_assert_int_eq(mk_toeplitz_fit(p.data, n, n, true, NULL, &t), MK_OK);
	ck_assert_double_gt(t.tss, 1.0);
	ck_assert_double_le(fabs(1.0 - t.r2), 1e-9);
	ck_assert_int_eq(mk_toeplitz_fit(p.data, n, 128, false, NULL, &t), MK_OK);
	ck_assert_double_le(fabs(1.0 - t.r2), 1e-9);
	mk_matrix_release(&e);
	mk_matrix_release(&p);
}
END_TEST

/* E = [[1,0],[0,1],[1,1]]: P = [[1,0,1],[0,1,1],[1,1,2]].  Diagonal means:
 * d=0 4/3, d=+-1 1/2, d=+-2 1; RSS = 2/3 + 1 = 5/3; mean 8/9, TSS = 10 - 64/9
 * = 26/9; R^2 = 1 - 15/26 = 11/26. */
START_TEST(test_hand_example)
{
	mk_matrix e = test_matrix(3, 2), p;
	double prof[5];
	const double want[5] = {1.0, 0.5, 4.0 / 3.0, 0.5, 1.0};
	mk_toeplitz t;
	const double ev[6] = {1, 0, 0, 1, 1, 1};
	memcpy(e.data, ev, sizeof ev);
	ck_assert_int_eq(mk_matrix_gram(&e, 0, &p), MK_OK);
	ck_assert_double_eq(p.data[2], 1.0);
	ck_assert_double_eq(p.data[6], 1.0);
	ck_assert_double_eq(p.data[8], 2.0);
	for (int sym = 0; sym < 2; sym++) {
		ck_assert_int_eq(mk_toeplitz_fit(p.data, 3, 3, sym, prof, &t), MK_OK);
		ck_assert_double_eq_tol(t.rss, 5.0 / 3.0, 1e-14);
		ck_assert_double_eq_tol(t.tss, 26.0 / 9.0, 1e-14);
		ck_assert_double_eq_tol(t.mean, 8.0 / 9.0, 1e-15);
		ck_assert_double_eq_tol(t.r2, 11.0 / 26.0, 1e-14);
		for (int k = 0; k < 5; k++)
			ck_assert_double_eq_tol(prof[k], want[k], 1e-15);
	}
	mk_matrix_release(&e);
	mk_matrix_release(&p);
}
END_TEST

/* A Toeplitz matrix plus i.i.d. noise of variance s^2: the fit removes
 * 2n - 1 degrees of freedom, so E[RSS] = s^2 (n^2 - 2n + 1) and
 * E[TSS] = TSS(T) + s^2 (n^2 - 1).  With n^2 = 160000 samples the relative
 * standard deviation of RSS is about 0.4%; we allow 3%. */
START_TEST(test_toeplitz_plus_noise)
{
	int64_t n = 400;
	double s = 0.7, nn = (double)n * (double)n, tss_t, want_rss, want_r2;
	mk_matrix a = test_matrix(n, n), clean = test_matrix(n, n);
	mk_toeplitz t, tc;
	uint64_t seed = 42;
	for (int64_t i = 0; i < n; i++)
		for (int64_t j = 0; j < n; j++) {
			double d = (double)(j - i);
			clean.data[i * n + j] = 2.0 * exp(-d * d / 800.0) + 0.3 * cos(d / 7.0) +
						(d > 0 ? 0.5 : 0.0);
			a.data[i * n + j] = clean.data[i * n + j] + s * test_normal(&seed);
		}
	ck_assert_int_eq(mk_toeplitz_fit(clean.data, n, n, false, NULL, &tc), MK_OK);
	ck_assert_double_le(tc.rss, 1e-18 * tc.tss);
	ck_assert_int_eq(mk_toeplitz_fit(a.data, n, n, false, NULL, &t), MK_OK);
	tss_t = tc.tss;
	want_rss = s * s * (nn - 2.0 * (double)n + 1.0);
	want_r2 = 1.0 - want_rss / (tss_t + s * s * (nn - 1.0));
	ck_assert_double_eq_tol(t.rss / want_rss, 1.0, 0.03);
	ck_assert_double_eq_tol(t.r2, want_r2, 0.03 * (1.0 - want_r2));
	ck_assert_double_lt(t.r2, 1.0 - 1e-3);
	mk_matrix_release(&a);
	mk_matrix_release(&clean);
}
END_TEST

/* The symmetric path (lower triangle only) equals the general one. */
START_TEST(test_symmetric_matches_general)
{
	int64_t n = 157, d = 19;
	mk_matrix e = test_matrix(n, d), p;
	mk_toeplitz a, b;
	double pa[2 * 157 - 1], pb[2 * 157 - 1];
	uint64_t seed = 7;
	for (int64_t k = 0; k < n * d; k++)
		e.data[k] = test_normal(&seed);
	ck_assert_int_eq(mk_matrix_gram(&e, 0, &p), MK_OK);
	ck_assert_int_eq(mk_toeplitz_fit(p.data, n, n, true, pa, &a), MK_OK);
	ck_assert_int_eq(mk_toeplitz_fit(p.data, n, n, false, pb, &b), MK_OK);
	ck_assert_double_eq_tol(a.rss, b.rss, 1e-10 * b.rss);
	ck_assert_double_eq_tol(a.tss, b.tss, 1e-10 * b.tss);
	ck_assert_double_eq_tol(a.r2, b.r2, 1e-12);
	for (int64_t k = 0; k < 2 * n - 1; k++)
		ck_assert_double_eq_tol(pa[k], pb[k], 1e-12);
	mk_matrix_release(&e);
	mk_matrix_release(&p);
}
END_TEST

/* The leading block with lda = n equals the fit of a copy of that block. */
START_TEST(test_leading_block)
{
	int64_t n = 90, k = 33;
	mk_matrix a = test_matrix(n, n), c = test_matrix(k, k);
	mk_toeplitz x, y;
	uint64_t seed = 9;
	for (int64_t i = 0; i < n * n; i++)
		a.data[i] = test_normal(&seed);
	for (int64_t i = 0; i < k; i++)
		memcpy(c.data + i * k, a.data + i * n, (size_t)k * sizeof(double));
	ck_assert_int_eq(mk_toeplitz_fit(a.data, n, k, false, NULL, &x), MK_OK);
	ck_assert_int_eq(mk_toeplitz_fit(c.data, k, k, false, NULL, &y), MK_OK);
	ck_assert_int_eq(x.k, k);
	ck_assert_double_eq(x.rss, y.rss);
	ck_assert_double_eq(x.tss, y.tss);
	mk_matrix_release(&a);
	mk_matrix_release(&c);
}
END_TEST

START_TEST(test_constant_matrix)
{
	double a[16];
	mk_toeplitz t;
	for (int k = 0; k < 16; k++)
		a[k] = 3.5;
	ck_assert_int_eq(mk_toeplitz_fit(a, 4, 4, false, NULL, &t), MK_OK);
	ck_assert_double_eq(t.tss, 0.0);
	ck_assert_double_eq(t.rss, 0.0);
	ck_assert_double_eq(t.r2, 1.0);
	ck_assert_double_eq(t.mean, 3.5);
}
END_TEST

/* Identical embeddings give a P that is constant up to rounding: exactly
 * Toeplitz, R^2 = 1 (not a ratio of two rounding errors). */
START_TEST(test_identical_rows_are_constant)
{
	int64_t n = 300, d = 8;
	mk_matrix e = test_matrix(n, d), p;
	mk_toeplitz t, again;
	uint64_t seed = 11;
	for (int64_t k = 0; k < d; k++)
		e.data[k] = test_normal(&seed);
	for (int64_t i = 1; i < n; i++)
		memcpy(e.data + i * d, e.data, (size_t)d * sizeof(double));
	ck_assert_int_eq(mk_matrix_gram(&e, 0, &p), MK_OK);
	ck_assert_int_eq(mk_toeplitz_fit(p.data, n, n, true, NULL, &t), MK_OK);
	ck_assert_double_eq(t.r2, 1.0);
	ck_assert_int_eq(mk_toeplitz_fit(p.data, n, 128, false, NULL, &t), MK_OK);
	ck_assert_double_eq(t.r2, 1.0);
	/* the same input gives the same bits */
	ck_assert_int_eq(mk_toeplitz_fit(p.data, n, 128, false, NULL, &again), MK_OK);
	ck_assert_double_eq(t.rss, again.rss);
	ck_assert_double_eq(t.tss, again.tss);
	mk_matrix_release(&e);
	mk_matrix_release(&p);
}
END_TEST

START_TEST(test_bad_arguments)
{
	double a[4] = {0};
	mk_toeplitz t;
	ck_assert_int_eq(mk_toeplitz_fit(a, 2, 0, false, NULL, &t), MK_EINVAL);
	ck_assert_int_eq(mk_toeplitz_fit(a, 1, 2, false, NULL, &t), MK_EINVAL);
	ck_assert_ptr_nonnull(strstr(mk_error(), "lda"));
	ck_assert_int_eq(mk_toeplitz_fit(NULL, 2, 2, false, NULL, &t), MK_EINVAL);
}
END_TEST

/* Entries near DBL_MAX overflow the sums: an error, not a NaN R^2. */
START_TEST(test_overflow_is_an_error)
{
	double a[4] = {1e300, -1e300, 1e300, 1e-300};
	mk_toeplitz t;
	ck_assert_int_eq(mk_toeplitz_fit(a, 2, 2, false, NULL, &t), MK_ERANGE);
	ck_assert_ptr_nonnull(strstr(mk_error(), "overflow"));
}
END_TEST

START_TEST(test_gram_matches_naive)
{
	int64_t n = 70, d = 13;
	mk_matrix e = test_matrix(n, d), p;
	uint64_t seed = 3;
	for (int64_t k = 0; k < n * d; k++)
		e.data[k] = test_normal(&seed);
	ck_assert_int_eq(mk_matrix_gram(&e, 0, &p), MK_OK);
	ck_assert_int_eq(p.rows, n);
	ck_assert_int_eq(p.cols, n);
	for (int64_t i = 0; i < n; i++)
		for (int64_t j = 0; j < n; j++) {
			double s = 0.0;
			for (int64_t k = 0; k < d; k++)
				s += e.data[i * d + k] * e.data[j * d + k];
			ck_assert_double_eq_tol(p.data[i * n + j], s, 1e-12);
		}
	mk_matrix_release(&e);
	mk_matrix_release(&p);
}
END_TEST

START_TEST(test_matrix_limits)
{
	mk_matrix m;
	ck_assert_int_eq(mk_matrix_new(0, 3, 0, "x", &m), MK_EINVAL);
	ck_assert_int_eq(mk_matrix_new(INT64_MAX / 2, 4, 0, "the thing", &m), MK_ERANGE);
	ck_assert_ptr_nonnull(strstr(mk_error(), "the thing"));
	ck_assert_int_eq(mk_matrix_new(1024, 1024, 1 << 20, "x", &m), MK_ERANGE);
	ck_assert_ptr_null(m.data);
	mk_matrix_release(&m);
	mk_matrix_release(NULL);
}
END_TEST

/* The in-memory entry point (what Python's maskkit.toeplitz calls) fits
 * the Gram matrix as mk_toeplitz_fit does on it, and refuses what the file
 * readers refuse. */
START_TEST(test_model_fit_in_memory)
{
	int64_t n = 40, d = 6;
	mk_matrix e = test_matrix(n, d), p;
	mk_toeplitz all, first;
	mk_toeplitz_model r;
	mk_toeplitz_model_opts o = {.first = 10};
	uint64_t seed = 5;
	for (int64_t k = 0; k < n * d; k++)
		e.data[k] = test_normal(&seed);
	ck_assert_int_eq(mk_toeplitz_model_fit(&e, &o, &r), MK_OK);
	ck_assert_int_eq(mk_matrix_gram(&e, 0, &p), MK_OK);
	ck_assert_int_eq(mk_toeplitz_fit(p.data, n, n, true, NULL, &all), MK_OK);
	ck_assert_int_eq(mk_toeplitz_fit(p.data, n, 10, true, NULL, &first), MK_OK);
	ck_assert_int_eq(r.n, n);
	ck_assert_int_eq(r.d, d);
	ck_assert_ptr_null(r.file);
	ck_assert_ptr_null(r.p.data); /* without keep */
	ck_assert_double_eq(r.all.r2, all.r2);
	ck_assert_double_eq(r.all.rss, all.rss);
	ck_assert_int_eq(r.first.k, 10);
	ck_assert_double_eq(r.first.r2, first.r2);
	mk_toeplitz_model_release(&r);
	e.data[3 * d + 2] = NAN;
	ck_assert_int_eq(mk_toeplitz_model_fit(&e, &o, &r), MK_EINVAL);
	ck_assert_ptr_nonnull(strstr(mk_error(), "non-finite value (nan) at [3, 2]"));
	e.rows = 1;
	ck_assert_int_eq(mk_toeplitz_model_fit(&e, &o, &r), MK_EINVAL);
	mk_toeplitz_model_release(&r);
	mk_matrix_release(&e);
	mk_matrix_release(&p);
}
END_TEST

static Suite *toeplitz_suite(void)
{
	Suite *s = suite_create("toeplitz");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_sinusoidal_is_toeplitz);
	tcase_add_test(tc, test_hand_example);
	tcase_add_test(tc, test_toeplitz_plus_noise);
	tcase_add_test(tc, test_symmetric_matches_general);
	tcase_add_test(tc, test_leading_block);
	tcase_add_test(tc, test_constant_matrix);
	tcase_add_test(tc, test_identical_rows_are_constant);
	tcase_add_test(tc, test_bad_arguments);
	tcase_add_test(tc, test_overflow_is_an_error);
	tcase_add_test(tc, test_gram_matches_naive);
	tcase_add_test(tc, test_matrix_limits);
	tcase_add_test(tc, test_model_fit_in_memory);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return mk_test_main(toeplitz_suite());
}
