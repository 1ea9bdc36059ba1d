/* Unit tests of the TISA kernel fit against synthetic profiles with known answers. */
#include "config.h"
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "maskkit.h"
#include "testutil.h"

/* A Toeplitz profile over d = -(n-1)..n-1 with the diagonal lengths as weights. */
struct profile {
	int64_t n, m, d0;
	double *t, *w;
};

struct kernel {
	double a, b, c;
};

static struct profile profile_new(int64_t n)
{
	struct profile p = {.n = n, .m = 2 * n - 1, .d0 = -(n - 1)};
	p.t = calloc((size_t)p.m, sizeof *p.t);
	p.w = calloc((size_t)p.m, sizeof *p.w);
	ck_assert(p.t && p.w);
	for (int64_t i = 0; i < p.m; i++)
		p.w[i] = (double)(n - llabs(p.d0 + i));
	return p;
}

static void profile_release(struct profile *p)
{
	free(p->t);
	free(p->w);
}

static double kernels_at(const struct kernel *k, int S, double d)
{
	double y = 0;
	for (int s = 0; s < S; s++)
		y += k[s].a * exp(-k[s].b * (d - k[s].c) * (d - k[s].c));
	return y;
}

static void profile_fill(struct profile *p, const struct kernel *k, int S)
{
	for (int64_t i = 0; i < p->m; i++)
		p->t[i] = kernels_at(k, S, (double)(p->d0 + i));
}

/* A standard normal deviate from a 64-bit LCG (Box-Muller). */
static double normal(uint64_t *state)
{
	double u[2];
	for (int k = 0; k < 2; k++) {
		*state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
		u[k] = ((double)(*state >> 11) + 0.5) / 9007199254740992.0;
	}
	return sqrt(-2 * log(u[0])) * cos(6.283185307179586 * u[1]);
}

/* Fits and checks what every successful fit must satisfy. */
static void fit(const struct profile *p, const double *w, int S, mk_tisa *r)
{
	ck_assert_msg(mk_tisa_fit(p->t, w, p->m, p->d0, S, r) == MK_OK, "%s", mk_error());
	ck_assert_int_eq(r->kernels, S);
	ck_assert(r->starts >= 0 && r->iterations >= 0);
	ck_assert(r->r2 >= 0 && r->r2 <= 1 && isfinite(r->wrss) && r->wrss >= 0);
	for (int s = 0; s < S; s++)
		ck_assert_msg(isfinite(r->a[s]) && isfinite(r->c[s]) && isfinite(r->b[s]) &&
			      r->b[s] >= 0, "kernel %d: a %g b %g c %g", s, r->a[s], r->b[s],
			      r->c[s]);
}

/* Bit for bit the same fit (memcmp on the whole struct would see padding). */
static bool same_fit(const mk_tisa *x, const mk_tisa *y)
{
	size_t k = (size_t)x->kernels * sizeof(double);
	return x->kernels == y->kernels && !memcmp(x->a, y->a, k) && !memcmp(x->b, y->b, k) &&
	       !memcmp(x->c, y->c, k) && x->r2 == y->r2 && x->wrss == y->wrss &&
	       x->starts == y->starts && x->iterations == y->iterations;
}

/* The fitted kernel matching k by centre, within relative tolerance rel. */
static void expect_kernel(const mk_tisa *r, struct kernel k, double rel)
{
	int best = 0;
	for (int s = 1; s < r->kernels; s++)
		if (fabs(r->c[s] - k.c) < fabs(r->c[best] - k.c))
			best = s;
	ck_assert_msg(fabs(r->a[best] - k.a) <= rel * fabs(k.a) &&
		      fabs(r->b[best] - k.b) <= rel * k.b &&
		      fabs(r->c[best] - k.c) <= rel * fmax(fabs(k.c), 1 / sqrt(k.b)),
		      "expected a %g b %g c %g, got a %.12g b %.12g c %.12g", k.a, k.b, k.c,
		      r->a[best], r->b[best], r->c[best]);
}

START_TEST(recovers_one_kernel)
{
	struct profile p = profile_new(512);
	struct kernel k = {2.5, 1e-4, 37.5};
	mk_tisa r;
	profile_fill(&p, &k, 1);
	fit(&p, p.w, 1, &r);
	ck_assert_msg(r.r2 > 1 - 1e-9, "r2 %.15g", r.r2);
	expect_kernel(&r, k, 1e-6);
	ck_assert(r.starts >= 1 && r.iterations >= 1);
	profile_release(&p);
}
END_TEST

START_TEST(recovers_two_separated_kernels)
{
	struct profile p = profile_new(1024);
	struct kernel k[2] = {{-0.7, 5e-4, 400}, {1.5, 2e-3, -300}};
	mk_tisa r;
	profile_fill(&p, k, 2);
	fit(&p, p.w, 2, &r);
	ck_assert_msg(r.r2 > 1 - 1e-9, "r2 %.15g", r.r2);
	expect_kernel(&r, k[0], 1e-6);
	expect_kernel(&r, k[1], 1e-6);
	/* reported in order of centre */
	ck_assert(r.c[0] < r.c[1]);
	profile_release(&p);
}
END_TEST

START_TEST(recovers_spike_on_broad_background_at_full_size)
{
	/* the shape attention profiles tend to have, at n = 4096 */
	struct profile p = profile_new(4096);
	struct kernel k[3] = {{1.0, 1e-6, 0}, {0.5, 0.05, 2}, {-0.3, 1e-4, -800}};
	mk_tisa r;
	profile_fill(&p, k, 3);
	fit(&p, p.w, 3, &r);
	ck_assert_msg(r.r2 > 1 - 1e-9, "r2 %.15g", r.r2);
	for (int s = 0; s < 3; s++)
		expect_kernel(&r, k[s], 1e-5);
	ck_assert(r.c[0] < r.c[1] && r.c[1] < r.c[2]);
	profile_release(&p);
}
END_TEST

START_TEST(zero_weights_hide_outliers)
{
	struct profile p = profile_new(256);
	struct kernel k = {1.2, 3e-4, -20};
	mk_tisa weighted, plain;
	double gap = 0;
	profile_fill(&p, &k, 1);
	for (int64_t d = 100; d <= 140; d++) {
		p.t[d - p.d0] = 5;
		p.w[d - p.d0] = 0;
	}
	fit(&p, p.w, 1, &weighted);
	fit(&p, NULL, 1, &plain);
	ck_assert_msg(weighted.r2 > 1 - 1e-9, "r2 %.15g", weighted.r2);
	expect_kernel(&weighted, k, 1e-6);
	ck_assert_msg(plain.r2 < 0.99, "r2 %.15g", plain.r2);
	for (int64_t d = p.d0; d < p.d0 + p.m; d++)
		gap = fmax(gap, fabs(mk_tisa_eval(&weighted, (double)d) -
				     mk_tisa_eval(&plain, (double)d)));
	ck_assert_msg(gap > 0.1, "the unweighted fit is within %g of the weighted one", gap);
	profile_release(&p);
}
END_TEST

START_TEST(null_weights_are_all_ones)
{
	struct profile p = profile_new(300);
	struct kernel k = {0.8, 1e-3, 10};
	uint64_t seed = 11;
	mk_tisa a, b;
	profile_fill(&p, &k, 1);
	for (int64_t i = 0; i < p.m; i++) {
		p.t[i] += 0.01 * normal(&seed);
		p.w[i] = 1;
	}
	fit(&p, NULL, 2, &a);
	fit(&p, p.w, 2, &b);
	ck_assert(same_fit(&a, &b));
	profile_release(&p);
}
END_TEST

START_TEST(only_relative_weights_matter)
{
	struct profile p = profile_new(300);
	struct kernel k = {0.8, 1e-3, 10};
	uint64_t seed = 5;
	double *w7 = malloc((size_t)p.m * sizeof *w7);
	mk_tisa a, b;
	ck_assert(w7);
	profile_fill(&p, &k, 1);
	for (int64_t i = 0; i < p.m; i++) {
		p.t[i] += 0.05 * normal(&seed);
		w7[i] = 7 * p.w[i];
	}
	fit(&p, p.w, 1, &a);
	fit(&p, w7, 1, &b);
	ck_assert_double_eq_tol(b.wrss, 7 * a.wrss, 1e-9 * b.wrss);
	ck_assert_double_eq_tol(b.r2, a.r2, 1e-9);
	expect_kernel(&b, (struct kernel){a.a[0], a.b[0], a.c[0]}, 1e-6);
	free(w7);
	profile_release(&p);
}
END_TEST

START_TEST(constant_profile_is_fitted_exactly)
{
	struct profile p = profile_new(200);
	mk_tisa r;
	for (int64_t i = 0; i < p.m; i++)
		p.t[i] = 0.37;
	for (int S = 1; S <= 3; S++) {
		fit(&p, p.w, S, &r);
		/* without a search */
		ck_assert(r.r2 == 1 && r.wrss == 0 && r.starts == 0 && r.iterations == 0);
		for (double d = -199; d <= 199; d += 37)
			ck_assert_double_eq(mk_tisa_eval(&r, d), 0.37);
	}
	/* all zero; and constant where it counts, other values weighing nothing */
	memset(p.t, 0, (size_t)p.m * sizeof *p.t);
	fit(&p, NULL, 2, &r);
	ck_assert(r.r2 == 1 && r.wrss == 0 && mk_tisa_eval(&r, 5) == 0);
	for (int64_t i = 0; i < p.m; i++)
		p.t[i] = i % 2 ? -1.5 : 3;
	for (int64_t i = 0; i < p.m; i += 2)
		p.w[i] = 0;
	fit(&p, p.w, 1, &r);
	ck_assert(r.r2 == 1 && r.wrss == 0 && mk_tisa_eval(&r, 0) == -1.5);
	profile_release(&p);
}
END_TEST

START_TEST(never_worse_than_the_mean)
{
	/* an alternation no Gaussian can follow, on an offset: the best fit is the
	 * flat b = 0 limit, which the search only approaches */
	struct profile p = profile_new(300);
	mk_tisa r;
	for (int64_t i = 0; i < p.m; i++)
		p.t[i] = 10 + ((p.d0 + i) % 2 ? 0.1 : -0.1);
	fit(&p, p.w, 1, &r);
	ck_assert_msg(r.r2 >= 0 && r.r2 < 1e-6, "r2 %.6g", r.r2);
	profile_release(&p);
}
END_TEST

START_TEST(fits_are_deterministic)
{
	struct profile p = profile_new(700), q = profile_new(100);
	struct kernel k[2] = {{1, 1e-2, 0}, {0.3, 1e-5, 150}};
	uint64_t seed = 3;
	mk_tisa a, b, other;
	profile_fill(&p, k, 2);
	for (int64_t i = 0; i < p.m; i++)
		p.t[i] += 0.02 * normal(&seed) / sqrt(p.w[i]);
	for (int64_t i = 0; i < q.m; i++)
		q.t[i] = normal(&seed);
	fit(&p, p.w, 3, &a);
	fit(&q, q.w, 2, &other);
	fit(&p, p.w, 3, &b);
	ck_assert(same_fit(&a, &b));
	profile_release(&p);
	profile_release(&q);
}
END_TEST

START_TEST(noisy_profile_leaves_the_noise)
{
	/* diagonal means of n - |d| entries with noise sigma have variance
	 * sigma^2 / w_d, so each weighted residual has variance sigma^2 and the
	 * fit should leave (m - 3) sigma^2 of the true parameters' wRSS */
	struct profile p = profile_new(1000);
	struct kernel k = {1, 2e-5, -50};
	const double sigma = 0.3;
	uint64_t seed = 2021;
	double truth = 0, mean = 0, tss = 0, sw = 0, expect, tol;
	mk_tisa r;
	profile_fill(&p, &k, 1);
	for (int64_t i = 0; i < p.m; i++) {
		double e = sigma * normal(&seed) / sqrt(p.w[i]);
		p.t[i] += e;
		truth += p.w[i] * e * e;
		mean += p.w[i] * p.t[i];
		sw += p.w[i];
	}
	mean /= sw;
	for (int64_t i = 0; i < p.m; i++)
		tss += p.w[i] * (p.t[i] - mean) * (p.t[i] - mean);
	fit(&p, p.w, 1, &r);
	/* no worse than the truth, and the 3 fitted parameters absorb about
	 * 3 sigma^2 (a chi-square with 3 degrees of freedom: 40 is far out) */
	ck_assert_msg(r.wrss <= truth * (1 + 1e-9), "wrss %.10g, truth %.10g", r.wrss, truth);
	ck_assert_msg(r.wrss >= truth - 40 * sigma * sigma, "wrss %.10g, truth %.10g", r.wrss,
		      truth);
	ck_assert_double_eq_tol(r.r2, 1 - r.wrss / tss, 1e-12);
	/* 1 - r2 against its expectation, within 5 standard deviations */
	expect = (double)(p.m - 3) * sigma * sigma / tss;
	tol = 5 * sqrt(2.0 / (double)(p.m - 3)) * expect;
	ck_assert_msg(r.r2 < 1 && fabs((1 - r.r2) - expect) < tol, "1 - r2 %.6g, expected %.6g",
		      1 - r.r2, expect);
	expect_kernel(&r, k, 0.05);
	profile_release(&p);
}
END_TEST

START_TEST(offset_d0_moves_the_centres)
{
	struct profile p = profile_new(400);
	struct kernel k[2] = {{1, 4e-3, -100}, {0.5, 2e-4, 60}};
	mk_tisa centred, shifted;
	profile_fill(&p, k, 2);
	fit(&p, p.w, 2, &centred);
	p.d0 = 1000;
	fit(&p, p.w, 2, &shifted);
	for (int s = 0; s < 2; s++) {
		ck_assert_double_eq_tol(shifted.c[s], centred.c[s] + 1000 + 399, 1e-6);
		ck_assert_double_eq_tol(shifted.a[s], centred.a[s], 1e-9);
		ck_assert_double_eq_tol(shifted.b[s], centred.b[s], 1e-9 * centred.b[s]);
	}
	profile_release(&p);
}
END_TEST

START_TEST(accepts_three_points_per_kernel)
{
	double t[6] = {0.1, 0.5, 1, 0.4, 0.2, 0.9};
	mk_tisa r;
	ck_assert_msg(mk_tisa_fit(t, NULL, 6, -3, 2, &r) == MK_OK, "%s", mk_error());
	ck_assert(isfinite(r.r2) && isfinite(r.wrss));
	ck_assert_msg(mk_tisa_fit(t, NULL, 3, 0, 1, &r) == MK_OK, "%s", mk_error());
	ck_assert(isfinite(r.r2) && isfinite(r.wrss));
}
END_TEST

static void expect_einval(const double *t, const double *w, int64_t m, int S, mk_tisa *r,
			  const char *what)
{
	mk_error_set(MK_OK, "%s", "");
	ck_assert_msg(mk_tisa_fit(t, w, m, 0, S, r) == MK_EINVAL, "%s accepted", what);
	ck_assert_msg(mk_error()[0] != '\0', "%s: no message", what);
}

START_TEST(rejects_bad_arguments)
{
	double t[12], w[12];
	mk_tisa r;
	for (int i = 0; i < 12; i++) {
		t[i] = sin(i);
		w[i] = 1;
	}
	expect_einval(t, w, 12, 0, &r, "0 kernels");
	expect_einval(t, w, 12, MK_TISA_MAX_KERNELS + 1, &r, "too many kernels");
	expect_einval(t, w, 5, 2, &r, "5 points for 2 kernels");
	expect_einval(t, w, 0, 1, &r, "no points");
	expect_einval(NULL, w, 12, 1, &r, "a NULL profile");
	expect_einval(t, w, 12, 1, NULL, "a NULL result");
	t[4] = NAN;
	expect_einval(t, w, 12, 1, &r, "a NaN in the profile");
	t[4] = -INFINITY;
	expect_einval(t, w, 12, 1, &r, "an infinity in the profile");
	t[4] = 0;
	w[7] = NAN;
	expect_einval(t, w, 12, 1, &r, "a NaN weight");
	w[7] = INFINITY;
	expect_einval(t, w, 12, 1, &r, "an infinite weight");
	w[7] = -1e-9;
	expect_einval(t, w, 12, 1, &r, "a negative weight");
	memset(w, 0, sizeof w);
	expect_einval(t, w, 12, 1, &r, "all-zero weights");
	/* a size no Toeplitz profile can have, refused before reading t */
	ck_assert_int_eq(mk_tisa_fit(t, NULL, 2 * MK_N_MAX, 0, 1, &r), MK_ERANGE);
}
END_TEST

START_TEST(eval_matches_the_formula)
{
	/* b enters as |b| */
	mk_tisa t = {.kernels = 2, .a = {1.5, -0.25}, .b = {2e-3, -1e-4}, .c = {-10, 35.5}};
	for (double d = -300; d <= 300; d += 17.25) {
		double want = 1.5 * exp(-2e-3 * (d + 10) * (d + 10)) -
			      0.25 * exp(-1e-4 * (d - 35.5) * (d - 35.5));
		ck_assert_double_eq_tol(mk_tisa_eval(&t, d), want, 1e-15);
	}
	ck_assert_double_eq(mk_tisa_eval(&t, -10), 1.5 - 0.25 * exp(-1e-4 * 45.5 * 45.5));
	t.kernels = 0;
	ck_assert_double_eq(mk_tisa_eval(&t, 3), 0);
}
END_TEST

/* A kernel inside the data, converged: neither flag. */
START_TEST(interior_kernel_is_not_flagged)
{
	struct profile p = profile_new(512);
	struct kernel k = {2.5, 1e-4, 37.5};
	mk_tisa r;
	profile_fill(&p, &k, 1);
	fit(&p, p.w, 1, &r);
	ck_assert(!r.capped);
	ck_assert_int_eq(r.outside, 0);
	profile_release(&p);
}
END_TEST

/* A kernel centred beyond the last position: over the data only its rising
 * flank is seen, and the fit recovers it there, outside the range. */
START_TEST(kernel_beyond_the_data_is_a_trend)
{
	struct profile p = profile_new(256);
	struct kernel k = {3.0, 2e-5, 600};
	mk_tisa r;
	profile_fill(&p, &k, 1);
	fit(&p, p.w, 1, &r);
	ck_assert_msg(r.r2 > 1 - 1e-6, "r2 %.15g", r.r2);
	ck_assert_msg(r.c[0] > (double)(p.d0 + p.m - 1), "c = %g inside the data", r.c[0]);
	ck_assert_int_eq(r.outside, 1);
	profile_release(&p);
}
END_TEST

/* An exponential is the limit of a kernel with c -> -inf, b -> 0 and b c
 * fixed: the fit follows it without end and stops at the iteration cap. */
START_TEST(exponential_trend_hits_the_cap)
{
	struct profile p = profile_new(128);
	mk_tisa r;
	for (int64_t i = 0; i < p.m; i++)
		p.t[i] = exp(-0.01 * (double)(p.d0 + i));
	fit(&p, p.w, 1, &r);
	ck_assert_msg(r.capped, "converged in %d iterations, c = %g, b = %g", r.iterations,
		      r.c[0], r.b[0]);
	ck_assert_int_eq(r.outside, 1);
	ck_assert_msg(r.r2 > 0.999, "r2 %.15g", r.r2);
	profile_release(&p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tisa_fit");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, recovers_one_kernel);
	tcase_add_test(tc, recovers_two_separated_kernels);
	tcase_add_test(tc, recovers_spike_on_broad_background_at_full_size);
	tcase_add_test(tc, zero_weights_hide_outliers);
	tcase_add_test(tc, null_weights_are_all_ones);
	tcase_add_test(tc, only_relative_weights_matter);
	tcase_add_test(tc, constant_profile_is_fitted_exactly);
	tcase_add_test(tc, never_worse_than_the_mean);
	tcase_add_test(tc, fits_are_deterministic);
	tcase_add_test(tc, noisy_profile_leaves_the_noise);
	tcase_add_test(tc, offset_d0_moves_the_centres);
	tcase_add_test(tc, accepts_three_points_per_kernel);
	tcase_add_test(tc, rejects_bad_arguments);
	tcase_add_test(tc, eval_matches_the_formula);
	tcase_add_test(tc, interior_kernel_is_not_flagged);
	tcase_add_test(tc, kernel_beyond_the_data_is_a_trend);
	tcase_add_test(tc, exponential_trend_hits_the_cap);
	suite_add_tcase(s, tc);
	return mk_test_main(s);
}
