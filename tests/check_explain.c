/* Unit tests for the explaining-away toy models (analysis/explain_toy.c,
 * explain_curves.c): the paper's closed-form centre distances against one
 * simulated step, the Fig. 7 grid, and the mode-collapse run's cluster
 * counts for the documented seed, with dot scores (the paper's result) and
 * with the Gaussian-kernel reading. */
#include <math.h>
#include <string.h>
#include "testutil.h"
#include "explain_toy.h"

#define NPTS MK_TOY_COLLAPSE_POINTS

/* (n0, n1) pairs giving r = n0 / n1 in {0.1, 0.5, 1, 2, 10}, twice each at
 * different sizes: the closed forms depend on r alone. */
static const int64_t sizes[][2] = {
	{1, 10}, {5, 50}, {1, 2}, {7, 14}, {1, 1}, {6, 6}, {2, 1}, {30, 15}, {10, 1}, {40, 4},
};
static const double halves[] = {0.2, 0.5, 1, 1.5};

#define NSIZES (sizeof sizes / sizeof sizes[0])
#define NHALVES (sizeof halves / sizeof halves[0])

static double step_with(int dnas, mk_toy_score score, int64_t n0, int64_t n1, double a)
{
	double d = NAN;
	int ret = mk_toy_distance_step(dnas, score, n0, n1, a, &d);
	ck_assert_msg(ret == MK_OK, "step: %s", mk_error());
	return d;
}

static double step(int dnas, int64_t n0, int64_t n1, double a)
{
	return step_with(dnas, MK_TOY_SCORE_DOT, n0, n1, a);
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

/* Every point has |x| = a, so x_i . x_j = -|x_i - x_j|^2 / 2 + a^2: the
 * scores differ by a constant, which neither normalisation sees. */
START_TEST(test_distance_score_free)
{
	for (size_t k = 0; k < NSIZES; k++)
		for (int dnas = 0; dnas < 2; dnas++)
			ck_assert_double_eq_tol(step_with(dnas, MK_TOY_SCORE_DIST, sizes[k][0],
							  sizes[k][1], 0.7),
						step(dnas, sizes[k][0], sizes[k][1], 0.7), 1e-12);
}
END_TEST

/* The CLI's default grid: r from 0.01 to 100 (exact decades), and the
 * closed forms within 1e-9 of all 196 simulated steps. */
START_TEST(test_distance_grid)
{
	static const double a[] = {0.25, 0.5, 0.75, 1};
	static const int64_t ns[] = {1, 2, 5, 10, 20, 50, 100};
	mk_toy_distance_opts o = {.a = a, .na = 4, .r_min = 0.01, .r_max = 100, .nr = 201,
				  .sizes = ns, .nsizes = 7};
	mk_toy_distance_result r;

	ck_assert_int_eq(mk_toy_distance(&o, &r), MK_OK);
	ck_assert_int_eq(r.ncheck, 4 * 7 * 7);
	ck_assert_double_eq(r.r[0], 0.01);
	ck_assert_double_eq(r.r[50], 0.1);
	ck_assert_double_eq(r.r[100], 1);
	ck_assert_double_eq(r.r[200], 100);
	ck_assert_double_eq(r.curve[1][3 * 201 + 100], mk_toy_distance_closed(1, 1, 1));
	for (int d = 0; d < 2; d++)
		ck_assert_double_le(r.max_error[d], 1e-9);
	/* a = 0.5, n0 = 100, n1 = 1: index (1 * 7 + 6) * 7 + 0 */
	ck_assert_int_eq(r.check[(1 * 7 + 6) * 7].n0, 100);
	ck_assert_double_eq(r.check[(1 * 7 + 6) * 7].r, 100);
	ck_assert_double_eq(r.check[(1 * 7 + 6) * 7].simulated[1], step(1, 100, 1, 0.5));
	mk_toy_distance_release(&r);
	o.r_min = 0;
	ck_assert_int_eq(mk_toy_distance(&o, &r), MK_EINVAL);
	mk_toy_distance_release(&r);
	o.r_min = 1;
	o.sizes = (const int64_t[]){MK_TOY_DISTANCE_SIZE_MAX + 1};
	o.nsizes = 1;
	ck_assert_int_eq(mk_toy_distance(&o, &r), MK_EINVAL);
	mk_toy_distance_release(&r);
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
	mk_toy_score sc;
	ck_assert_int_eq(mk_toy_distance_step(0, MK_TOY_SCORE_DOT, 0, 5, 1, &d), MK_EINVAL);
	ck_assert_ptr_nonnull(strstr(mk_error(), "n0 = 0"));
	ck_assert_int_eq(mk_toy_distance_step(1, MK_TOY_SCORE_DOT, 5, -1, 1, &d), MK_EINVAL);
	ck_assert_int_eq(mk_toy_distance_step(0, MK_TOY_SCORE_DOT, 5, 5, NAN, &d), MK_EINVAL);
	ck_assert_int_eq(mk_toy_distance_step(0, MK_TOY_SCORE_DOT, MK_TOY_DISTANCE_MAX, 1, 1, &d),
			 MK_ERANGE);
	ck_assert_int_eq(mk_toy_distance_step(0, (mk_toy_score)7, 5, 5, 1, &d), MK_EINVAL);
	ck_assert_int_eq(mk_toy_score_parse("cosine", &sc), MK_EINVAL);
	ck_assert_ptr_nonnull(strstr(mk_error(), "'cosine'"));
	ck_assert_int_eq(mk_toy_score_parse("dist", &sc), MK_OK);
	ck_assert_int_eq(sc, MK_TOY_SCORE_DIST);
	ck_assert_str_eq(mk_toy_score_name(MK_TOY_SCORE_DOT), "dot");
	ck_assert(isnan(mk_toy_distance_closed(0, 0, 1)));
	ck_assert(isnan(mk_toy_distance_closed(1, -2, 1)));
}
END_TEST

static double *collapse_with(int dnas, const mk_toy_collapse_opts *o, int64_t *clusters)
{
	double *p = malloc((size_t)(o->steps + 1) * NPTS * 2 * sizeof *p);
	int ret;
	ck_assert_ptr_nonnull(p);
	ret = mk_toy_collapse(dnas, o, p, clusters);
	ck_assert_msg(ret == MK_OK, "collapse: %s", mk_error());
	return p;
}

/* The defaults (dot scores, sd 0.1, MK_TOY_COLLAPSE_SEED) with this many steps. */
static double *collapse(int dnas, int steps, int64_t *clusters)
{
	mk_toy_collapse_opts o;
	mk_toy_collapse_opts_init(&o);
	o.steps = steps;
	return collapse_with(dnas, &o, clusters);
}

/* The literal reading: Gaussian-kernel scores, variance 0.1. */
static double *collapse_literal(int dnas, int steps, int64_t *clusters)
{
	mk_toy_collapse_opts o;
	mk_toy_collapse_opts_init(&o);
	o.steps = steps;
	o.score = MK_TOY_SCORE_DIST;
	o.sd = sqrt(0.1);
	return collapse_with(dnas, &o, clusters);
}

START_TEST(test_collapse_defaults)
{
	mk_toy_collapse_opts o;
	mk_toy_collapse_opts_init(&o);
	ck_assert_uint_eq(o.seed, MK_TOY_COLLAPSE_SEED);
	ck_assert_int_eq(o.steps, 4);
	ck_assert_int_eq(o.score, MK_TOY_SCORE_DOT);
	ck_assert_double_eq(o.sd, 0.1);
}
END_TEST

/* sd 0 puts every point on its centre: two clusters from the start. */
START_TEST(test_collapse_no_spread)
{
	mk_toy_collapse_opts o;
	int64_t c[2];
	double *p;
	mk_toy_collapse_opts_init(&o);
	o.sd = 0;
	o.steps = 1;
	p = collapse_with(1, &o, c);
	ck_assert_int_eq(c[0], 2);
	ck_assert_int_eq(c[1], 2);
	ck_assert_double_eq(p[0], 1.8);
	ck_assert_double_eq(p[2 * 549 + 1], -1);
	free(p);
}
END_TEST

/* The paper's Fig. 6: after 4 steps UNAS has merged everything into one
 * cluster and DNAS keeps the two modes, and keeps them (12 steps). */
START_TEST(test_paper_result)
{
	int64_t u[5], d[13];
	double *pu = collapse(0, 4, u), *pd = collapse(1, 12, d);
	const double *x = pd + (size_t)4 * NPTS * 2;
	ck_assert_int_eq(u[4], 1);
	ck_assert_int_gt(u[3], 2); /* it takes the 4 steps */
	for (int t = 4; t <= 12; t++)
		ck_assert_int_eq(d[t], 2);
	/* after 4 steps the two DNAS clusters are the two modes (not a split
	 * of one); with dot scores they then drift slowly toward each other */
	ck_assert_double_lt(hypot(x[0] - 1.8, x[1] - 0.7), 0.2);
	ck_assert_double_lt(hypot(x[2 * 549] + 1, x[2 * 549 + 1] + 1), 0.2);
	ck_assert_int_eq(mk_toy_clusters(x, 500, 2, 1e-3), 1);
	free(pu);
	free(pd);
}
END_TEST

/*
 * With scores -|x_i - x_j|^2 / 2 and variance 0.1 UNAS takes longer than
 * the paper's 4 steps: after 4 the 500 points are one cluster but the 50
 * are strung out on the way to it (tens of clusters at 1e-3); for seeds
 * 0..99 all 550 are one cluster at step 5 to 7, and DNAS is 2 by step 5.
 */
START_TEST(test_literal_reading)
{
	int64_t u[8], d[8];
	double *pu = collapse_literal(0, 7, u), *pd = collapse_literal(1, 7, d);
	double *x4 = pu + (size_t)4 * NPTS * 2;
	ck_assert_int_eq(mk_toy_clusters(x4, 500, 2, 1e-3), 1);
	ck_assert_int_gt(u[4], 2);
	for (int64_t i = 500; i < NPTS; i++) /* every small-mode point has left (-1, -1) */
		ck_assert_double_gt(hypot(x4[2 * i] + 1, x4[2 * i + 1] + 1), 0.3);
	ck_assert_int_eq(u[7], 1);
	for (int t = 5; t <= 7; t++)
		ck_assert_int_eq(d[t], 2);
	free(pu);
	free(pd);
}
END_TEST

/* Both score readings of a step agree with a direct evaluation of one
 * query's new position. */
START_TEST(test_step_by_hand)
{
	const double x[] = {0, 0, 1, 0, 0, 2};
	double y[6], w[3], sum = 0, want = 0;
	/* UNAS, dot scores: query 2 = (0, 2) scores 0, 0, 4 */
	ck_assert_int_eq(mk_toy_step(0, MK_TOY_SCORE_DOT, x, 3, 2, y), MK_OK);
	for (int j = 0; j < 3; j++)
		sum += w[j] = exp(x[2 * j + 1] * 2);
	for (int j = 0; j < 3; j++)
		want += w[j] / sum * x[2 * j + 1];
	ck_assert_double_eq_tol(y[5], want, 1e-15);
	ck_assert_int_eq(mk_toy_step(1, MK_TOY_SCORE_DIST, x, 0, 2, y), MK_EINVAL);
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
	mk_toy_collapse_opts o;
	mk_toy_collapse_opts_init(&o);
	o.steps = -1;
	ck_assert_int_eq(mk_toy_collapse(0, &o, p, c), MK_EINVAL);
	ck_assert_ptr_nonnull(strstr(mk_error(), "-1"));
	o.steps = MK_TOY_COLLAPSE_STEPS_MAX + 1;
	ck_assert_int_eq(mk_toy_collapse(0, &o, p, c), MK_EINVAL);
	o.steps = 0;
	o.sd = -0.5;
	ck_assert_int_eq(mk_toy_collapse(0, &o, p, c), MK_EINVAL);
	o.sd = NAN;
	ck_assert_int_eq(mk_toy_collapse(0, &o, p, c), MK_EINVAL);
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
	tcase_add_test(d, test_distance_score_free);
	tcase_add_test(d, test_distance_grid);
	tcase_add_test(c, test_collapse_defaults);
	tcase_add_test(c, test_collapse_no_spread);
	tcase_add_test(c, test_paper_result);
	tcase_add_test(c, test_literal_reading);
	tcase_add_test(c, test_step_by_hand);
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
