/* Unit tests for the explaining-away toy models (analysis/explain_toy.c):
 * the paper's closed-form centre distances against one simulated step, and
 * the mode-collapse run's cluster counts for the documented seed. */
#include <math.h>
#include <string.h>
#include "testutil.h"

#define NPTS MK_TOY_COLLAPSE_POINTS

/* (n0, n1) pairs giving r = n0 / n1 in {0.1, 0.5, 1, 2, 10}, twice each at
 * different sizes: the closed forms depend on r alone. */
static const int64_t sizes[][2] = {
	{1, 10}, {5, 50}, {1, 2}, {7, 14}, {1, 1}, {6, 6}, {2, 1}, {30, 15}, {10, 1}, {40, 4},
};
static const double halves[] = {0.2, 0.5, 1, 1.5};

#define NSIZES (sizeof sizes / sizeof sizes[0])
#define NHALVES (sizeof halves / sizeof halves[0])

static double step(int dnas, int64_t n0, int64_t n1, double a)
{
	double d = NAN;
	int ret = mk_toy_distance_step(dnas, n0, n1, a, &d);
	ck_assert_msg(ret == MK_OK, "step: %s", mk_error());
	return d;
}

static void check_closed(int dnas)
{
	for (size_t k = 0; k < NSIZES; k++)
		for (size_t h = 0; h < NHALVES; h++) {
			double r = (double)sizes[k][0] / (double)sizes[k][1], a = halves[h];
			double want = mk_toy_distance_closed(dnas, r, a);
			double got = step(dnas, sizes[k][0], sizes[k][1], a);
			ck_assert_msg(fabs(got - want) <= 1e-9, "%s n0 = %lld n1 = %lld a = %g: "
				      "step %.17g, closed form %.17g", dnas ? "dnas" : "unas",
				      (long long)sizes[k][0], (long long)sizes[k][1], a, got, want);
		}
}

START_TEST(test_unas_closed_form)
{
	check_closed(0);
}
END_TEST

START_TEST(test_dnas_closed_form)
{
	check_closed(1);
}
END_TEST

/* At r = 1 DNAS's column sums are all equal (q = 1), so it is UNAS. */
START_TEST(test_equal_at_r1)
{
	for (size_t h = 0; h < NHALVES; h++) {
		double a = halves[h];
		ck_assert_double_eq_tol(mk_toy_distance_closed(1, 1, a),
					mk_toy_distance_closed(0, 1, a), 1e-15);
		ck_assert_double_eq_tol(step(1, 8, 8, a), step(0, 8, 8, a), 1e-12);
	}
}
END_TEST

/* Swapping the clusters (r -> 1/r) mirrors the line, so c0 - c1 stays;
 * and away from r = 1 DNAS keeps the clusters further apart than UNAS. */
START_TEST(test_swap_and_order)
{
	for (size_t k = 0; k < NSIZES; k++)
		for (size_t h = 0; h < NHALVES; h++) {
			int64_t n0 = sizes[k][0], n1 = sizes[k][1];
			double a = halves[h];
			for (int dnas = 0; dnas < 2; dnas++)
				ck_assert_double_eq_tol(step(dnas, n0, n1, a), step(dnas, n1, n0, a),
							1e-12);
			if (n0 != n1)
				ck_assert_double_gt(step(1, n0, n1, a), step(0, n0, n1, a));
		}
}
END_TEST

/* At a = 30 the cross-cluster scores are -1800, where exp() underflows;
 * the step must not turn into 0/0, and each cluster stays put. */
START_TEST(test_far_clusters)
{
	for (int dnas = 0; dnas < 2; dnas++) {
		double d = step(dnas, 3, 300, 30);
		ck_assert(isfinite(d));
		ck_assert_double_eq_tol(d, 60, 1e-9);
	}
}
END_TEST

START_TEST(test_distance_errors)
{
	double d;
	ck_assert_int_eq(mk_toy_distance_step(0, 0, 5, 1, &d), MK_EINVAL);
	ck_assert_ptr_nonnull(strstr(mk_error(), "n0 = 0"));
	ck_assert_int_eq(mk_toy_distance_step(1, 5, -1, 1, &d), MK_EINVAL);
	ck_assert_int_eq(mk_toy_distance_step(0, 5, 5, NAN, &d), MK_EINVAL);
	ck_assert_int_eq(mk_toy_distance_step(0, MK_TOY_DISTANCE_MAX, 1, 1, &d), MK_ERANGE);
	ck_assert(isnan(mk_toy_distance_closed(0, 0, 1)));
	ck_assert(isnan(mk_toy_distance_closed(1, -2, 1)));
}
END_TEST

static double *collapse(int dnas, int steps, int64_t *clusters)
{
	double *p = malloc((size_t)(steps + 1) * NPTS * 2 * sizeof *p);
	int ret;
	ck_assert_ptr_nonnull(p);
	ret = mk_toy_collapse(dnas, MK_TOY_COLLAPSE_SEED, steps, p, clusters);
	ck_assert_msg(ret == MK_OK, "collapse: %s", mk_error());
	return p;
}

/* DNAS keeps both modes: two clusters after 4 steps, and still two after 12. */
START_TEST(test_dnas_keeps_two)
{
	int64_t c[13];
	double *p = collapse(1, 12, c);
	ck_assert_int_eq(c[0], NPTS);
	ck_assert_int_eq(c[4], 2);
	for (int t = 4; t <= 12; t++)
		ck_assert_int_eq(c[t], 2);
	free(p);
}
END_TEST

/*
 * UNAS absorbs the small mode into the large one.  With scores
 * -|x_i - x_j|^2 / 2 this takes longer than the paper's 4 steps: after 4
 * the 500 points are one cluster but the 50 are strung out along the way
 * to it (tens of clusters at 1e-3), and all 550 are one cluster after 7.
 */
START_TEST(test_unas_collapses)
{
	int64_t c[8];
	double *p = collapse(0, 7, c), *x4 = p + (size_t)4 * NPTS * 2;
	ck_assert_int_eq(mk_toy_clusters(x4, 500, 2, 1e-3), 1);
	ck_assert_int_gt(c[4], 2);
	for (int64_t i = 500; i < NPTS; i++) /* every small-mode point has left (-1, -1) */
		ck_assert_double_gt(hypot(x4[2 * i] + 1, x4[2 * i + 1] + 1), 0.3);
	ck_assert_int_eq(c[7], 1);
	free(p);
}
END_TEST

START_TEST(test_collapse_repeatable)
{
	for (int dnas = 0; dnas < 2; dnas++) {
		int64_t c1[5], c2[5];
		double *p1 = collapse(dnas, 4, c1), *p2 = collapse(dnas, 4, c2);
		ck_assert_mem_eq(p1, p2, (size_t)5 * NPTS * 2 * sizeof *p1);
		ck_assert_mem_eq(c1, c2, sizeof c1);
		free(p1);
		free(p2);
	}
}
END_TEST

START_TEST(test_clusters_single_linkage)
{
	/* a chain of steps below tol links end to end; a gap above it splits */
	const double pts[] = {0, 0, 0.0008, 0, 0.0016, 0, 0.0024, 0, 1, 1};
	ck_assert_int_eq(mk_toy_clusters(pts, 5, 2, 1e-3), 2);
	ck_assert_int_eq(mk_toy_clusters(pts, 5, 2, 1e-4), 5);
	ck_assert_int_eq(mk_toy_clusters(pts, 0, 2, 1e-3), 0);
}
END_TEST

START_TEST(test_collapse_errors)
{
	double p[NPTS * 2];
	int64_t c[1];
	ck_assert_int_eq(mk_toy_collapse(0, 0, -1, p, c), MK_EINVAL);
	ck_assert_ptr_nonnull(strstr(mk_error(), "-1"));
	ck_assert_int_eq(mk_toy_collapse(0, 0, MK_TOY_COLLAPSE_STEPS_MAX + 1, p, c), MK_EINVAL);
}
END_TEST

static Suite *explain_suite(void)
{
	Suite *s = suite_create("explain");
	TCase *d = tcase_create("distance");
	TCase *c = tcase_create("collapse");

	tcase_add_test(d, test_unas_closed_form);
	tcase_add_test(d, test_dnas_closed_form);
	tcase_add_test(d, test_equal_at_r1);
	tcase_add_test(d, test_swap_and_order);
	tcase_add_test(d, test_far_clusters);
	tcase_add_test(d, test_distance_errors);
	tcase_add_test(c, test_dnas_keeps_two);
	tcase_add_test(c, test_unas_collapses);
	tcase_add_test(c, test_collapse_repeatable);
	tcase_add_test(c, test_clusters_single_linkage);
	tcase_add_test(c, test_collapse_errors);
	tcase_set_timeout(c, 60);
	suite_add_tcase(s, d);
	suite_add_tcase(s, c);
	return s;
}

int main(void)
{
	return mk_test_main(explain_suite());
}
