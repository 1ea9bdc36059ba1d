/* Unit tests of the sweep: parameter solving (analysis/sweep_solve.c), the
 * double reference and the checker (analysis/sweep.c, src/attn/attn_ref.c).
 * The statistics of the timed runs and the timing loop: check_sweep_timing.c. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "testutil.h"
#include "attn_backend.h"
#include "attn_ref.h"
#include "sweep_internal.h"

#define LN2 0.69314718055994530942

static mk_sweep_point solve_block(const char *pattern, int64_t n, int64_t block, double target)
{
	mk_sweep_solver *s;
	mk_sweep_point p;
	ck_assert_int_eq(mk_sweep_solver_new(pattern, n, block, 0, 0, &s), MK_OK);
	ck_assert_int_eq(mk_sweep_solve(s, target, &p), MK_OK);
	mk_sweep_solver_free(s);
	return p;
}

static mk_sweep_point solve(const char *pattern, int64_t n, double target)
{
	return solve_block(pattern, n, 0, target);
}

static uint64_t count_of(const char *text, int64_t n)
{
	mk_expr *e;
	mk_measure m;
	mk_bind_opts b = {.n = n};
	ck_assert_int_eq(mk_expr_parse(text, &e), MK_OK);
	ck_assert_int_eq(mk_expr_bind(e, &b), MK_OK);
	ck_assert_int_eq(mk_measure_expr(e, NULL, 0, NULL, NULL, &m), MK_OK);
	mk_expr_free(e);
	return m.count;
}

/* |M| = n + 2 sum_{k=1..w} (n - k) = n(2w + 1) - w(w + 1): at n = 1024 and
 * 90%, w = 52 gives 104764 (rho 0.900089), w = 53 gives 106706 (0.898234). */
START_TEST(test_solve_local_by_hand)
{
	mk_sweep_point p = solve("local", 1024, 0.9);
	ck_assert_int_eq(p.value, 52);
	ck_assert_uint_eq(p.count, 104764);
	ck_assert_double_eq_tol(p.sparsity, 1.0 - 104764.0 / 1048576.0, 1e-12);
	ck_assert_str_eq(p.expr, "local(w=52)");
	ck_assert_str_eq(mk_sweep_param("local"), "w");
}
END_TEST

/* 2 * size keys per query: 50% of n = 1024 is size 256 exactly. */
START_TEST(test_solve_random_exact)
{
	mk_sweep_point p = solve("random", 1024, 0.5);
	ck_assert_int_eq(p.value, 256);
	ck_assert_double_eq_tol(p.sparsity, 0.5, 1e-12);
}
END_TEST

/* strided's |M| is not monotone in l: the scan must find the true nearest. */
START_TEST(test_solve_scan_is_nearest)
{
	const int64_t n = 96;
	const double targets[] = {0.1, 0.5, 0.8, 0.95};
	const char *patterns[] = {"strided", "fixed", "star", "logsparse"};
	for (size_t q = 0; q < 4; q++)
		for (size_t t = 0; t < 4; t++) {
			mk_sweep_point p = solve(patterns[q], n, targets[t]);
			double want = (1.0 - targets[t]) * n * n, gap = fabs((double)p.count - want);
			char text[64];
			ck_assert_uint_eq(p.count, count_of(p.expr, n));
			for (int64_t v = 1; v <= n; v++) {
				snprintf(text, sizeof text, "%s(%s=%lld%s)", patterns[q],
					 mk_sweep_param(patterns[q]), (long long)v,
					 !strcmp(patterns[q], "fixed") ? ",c=1" : "");
				ck_assert(fabs((double)count_of(text, n) - want) >= gap);
			}
		}
}
END_TEST

START_TEST(test_solve_rejects)
{
	mk_sweep_solver *s;
	mk_sweep_point p;
	ck_assert_int_eq(mk_sweep_solver_new("causal", 64, 0, 0, 0, &s), MK_EINVAL);
	ck_assert_ptr_null(s);
	ck_assert_ptr_null(mk_sweep_param("bigbrd"));
	ck_assert_int_eq(mk_sweep_solver_new("local(w=3)", 64, 0, 0, 0, &s), MK_EINVAL);
	ck_assert_int_eq(mk_sweep_solver_new("local", 64, 0, 0, 0, &s), MK_OK);
	ck_assert_int_eq(mk_sweep_solve(s, 1.5, &p), MK_EINVAL);
	mk_sweep_solver_free(s);
}
END_TEST

/* What a sweep varies: a pattern alone or with other parameters fixed; a
 * term that fixes the varied parameter, a shorthand or a sum is one mask. */
START_TEST(test_sweep_param_forms)
{
	ck_assert_str_eq(mk_sweep_param("bigbird"), "w");
	ck_assert_str_eq(mk_sweep_param("bigbird(r=3, g=1)"), "w");
	ck_assert_str_eq(mk_sweep_param("bigbird(block=1)"), "w");
	ck_assert_str_eq(mk_sweep_param("fixed(c=2)"), "l");
	ck_assert_ptr_null(mk_sweep_param("local(w=3)"));
	ck_assert_ptr_null(mk_sweep_param("local( w = 3)"));
	ck_assert_ptr_null(mk_sweep_param("local2"));
	ck_assert_ptr_null(mk_sweep_param("local(w=1)+diag"));
	ck_assert_ptr_null(mk_sweep_param("local(dilation=2)+local(w=1)"));
	ck_assert_ptr_null(mk_sweep_param("causal"));
	ck_assert_ptr_null(mk_sweep_param(NULL));
}
END_TEST

/* BigBird's paper defines it by blocks: swept with block = the tile, its
 * window counted in blocks (16 of them at n = 1024), unless block= is
 * given; fixed parameters keep their place and fixed's c = 1 is added only
 * where the user did not set c. */
START_TEST(test_solve_block_form)
{
	mk_sweep_point p = solve_block("bigbird", 1024, 64, 0.5);

	ck_assert_ptr_nonnull(strstr(p.expr, ",block=64)"));
	ck_assert_int_le(p.value, 15);
	ck_assert_uint_eq(p.count, count_of(p.expr, 1024));
	ck_assert_uint_eq(p.count % (64 * 64), 0); /* whole tiles */
	p = solve_block("bigbird(block=1)", 1024, 64, 0.5);
	ck_assert_ptr_null(strstr(p.expr, "block=64"));
	ck_assert_int_gt(p.value, 15);
	p = solve_block("bigbird(r=3)", 256, 0, 0.5);
	ck_assert_str_eq(strchr(p.expr, ','), ",r=3)");
	p = solve_block("local", 1024, 64, 0.9); /* defined by tokens: no block */
	ck_assert_str_eq(p.expr, "local(w=52)");
	p = solve_block("fixed(c=2)", 96, 0, 0.5);
	ck_assert_ptr_nonnull(strstr(p.expr, ",c=2)"));
	ck_assert_ptr_null(strstr(p.expr, "c=1"));
	ck_assert_uint_eq(p.count, count_of(p.expr, 96));
}
END_TEST

START_TEST(test_ref_rows)
{
	int64_t rows[MK_REF_MAX_ROWS];
	ck_assert_int_eq(mk_attn_ref_rows(100, rows), 100);
	ck_assert_int_eq(rows[99], 99);
	ck_assert_int_eq(mk_attn_ref_rows(1024, rows), 64);
	ck_assert_int_eq(rows[0], 0);
	ck_assert_int_eq(rows[63], 1023);
	for (int r = 1; r < 64; r++)
		ck_assert_int_gt(rows[r], rows[r - 1]);
}
END_TEST

static void ref2(const char *norm, const float *q, const float *k, const float *v,
		 const mk_mask *m, double *out)
{
	mk_norm nm;
	mk_attn_shape s = {1, 1, 2, 1, 0};
	int64_t rows[2] = {0, 1};
	ck_assert_int_eq(mk_norm_parse(norm, &nm), MK_OK);
	ck_assert_int_eq(mk_attn_reference(&nm, &s, q, k, v, m, rows, 2, out), MK_OK);
}

/* n = 2, d = 1: row 0 scores (0, ln 2) weigh v by (1/3, 2/3): 1/3 + 8/3 = 3;
 * row 1 scores (0, 0): 2.5. */
START_TEST(test_ref_softmax_by_hand)
{
	const float q[2] = {1, 0}, k[2] = {0, (float)LN2}, v[2] = {1, 4};
	double o[2];
	ref2("softmax", q, k, v, NULL, o);
	ck_assert_double_eq_tol(o[0], 3.0, 1e-6);
	ck_assert_double_eq_tol(o[1], 2.5, 1e-6);
}
END_TEST

/* Both rows score (0, ln 2).  dnas: g = (ln 2, ln 4), so s - g = (-ln 2,
 * -ln 2) in each row: equal weights, 2.5; softmax gives 3; hnas:0.5 2.75. */
START_TEST(test_ref_dnas_by_hand)
{
	const float q[2] = {1, 1}, k[2] = {0, (float)LN2}, v[2] = {1, 4};
	double o[2];
	ref2("dnas", q, k, v, NULL, o);
	ck_assert_double_eq_tol(o[0], 2.5, 1e-6);
	ck_assert_double_eq_tol(o[1], 2.5, 1e-6);
	ref2("softmax", q, k, v, NULL, o);
	ck_assert_double_eq_tol(o[1], 3.0, 1e-6);
	ref2("hnas:0.5", q, k, v, NULL, o);
	ck_assert_double_eq_tol(o[0], 2.75, 1e-6);
	ref2("sinkhorn:20", q, k, v, NULL, o);
	ck_assert_double_eq_tol(o[0], 2.5, 1e-6);
}
END_TEST

/* Row 0 keeps only key 1 (o = v_1 whatever the norm); row 1 is empty: 0. */
START_TEST(test_ref_mask_and_empty_row)
{
	const float q[2] = {1, 0.5f}, k[2] = {0.3f, -0.2f}, v[2] = {1, 4};
	const char *norms[] = {"softmax", "dnas", "hnas:0.3", "sinkhorn:3"};
	mk_mask *m;
	double o[2];
	ck_assert_int_eq(mk_mask_new(2, 0, &m), MK_OK);
	mk_mask_set(m, 0, 1, true);
	for (int k2 = 0; k2 < 4; k2++) {
		ref2(norms[k2], q, k, v, m, o);
		ck_assert_double_eq_tol(o[0], 4.0, 1e-9);
		ck_assert_double_eq(o[1], 0.0);
	}
	mk_mask_free(m);
}
END_TEST

static void fill(float *x, size_t count, uint64_t seed)
{
	for (size_t c = 0; c < count; c++) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		x[c] = (float)((double)(seed >> 40) / (double)(1 << 24) * 2.0 - 1.0);
	}
}

/* The CPU engine agrees with the reference; a wrong output is caught. */
START_TEST(test_checker_catches_wrong_output)
{
	mk_attn_shape s = {1, 2, 100, 16, 0};
	size_t cells = 2 * 100 * 16;
	float *q = malloc(cells * 4), *k = malloc(cells * 4), *v = malloc(cells * 4);
	float *o = malloc(cells * 4);
	double *ref = malloc(cells * 8);
	int64_t rows[MK_REF_MAX_ROWS], nrows = mk_attn_ref_rows(100, rows);
	mk_mask *m = mk_test_random_mask(100, 7, 30);
	mk_attn_layout *l;
	mk_attn_stats st;
	mk_norm nm;
	const char *norms[] = {"softmax", "dnas"};

	fill(q, cells, 1);
	fill(k, cells, 2);
	fill(v, cells, 3);
	ck_assert_int_eq(mk_attn_layout_new(m, 32, 0, &l), MK_OK);
	for (int t = 0; t < 2; t++) {
		ck_assert_int_eq(mk_norm_parse(norms[t], &nm), MK_OK);
		ck_assert_int_eq(mk_attn_reference(&nm, &s, q, k, v, m, rows, nrows, ref), MK_OK);
		ck_assert_int_eq(mk_attn_run(mk_attn_backend_get("cpu"), MK_KERNEL_BLOCK, &nm, &s, q,
					     k, v, l, o, &st), MK_OK);
		ck_assert_double_lt(mk_attn_ref_error(&s, rows, nrows, ref, o), 1e-5);
		o[cells - 5] += 1e-3f;
		ck_assert_double_gt(mk_attn_ref_error(&s, rows, nrows, ref, o),
				    mk_compute_tolerance(MK_COMPUTE_FP32));
		o[cells - 5] = NAN;
		ck_assert(isinf(mk_attn_ref_error(&s, rows, nrows, ref, o)));
	}
	mk_attn_layout_free(l);
	mk_mask_free(m);
	free(q);
	free(k);
	free(v);
	free(o);
	free(ref);
}
END_TEST

/* A backend that gets every non-dense kernel slightly wrong. */
static int bad_run(const mk_attn_backend *b, mk_attn_kernel kernel, const mk_norm *norm,
		   const mk_attn_shape *s, const float *q, const float *k, const float *v,
		   const mk_attn_layout *mask, float *o, mk_attn_stats *st, mk_progress_fn progress,
		   void *parg)
{
	int ret = mk_attn_run_progress(mk_attn_backend_get("cpu"), kernel, norm, s, q, k, v, mask,
				       o, st, progress, parg);
	(void)b;
	if (kernel == MK_KERNEL_CSR)
		o[3] += 0.01f;
	return ret;
}

/* Runs o and checks what every row must hold; the number of rows (-1: the
 * run failed, and returned no rows). */
static int count_rows(const mk_sweep_opts *o, int *status)
{
	mk_sweep_row *rows = (void *)1;
	size_t n = 7;

	*status = mk_sweep_run(o, &rows, &n);
	if (*status) {
		ck_assert(rows == NULL && n == 0);
		return -1;
	}
	for (size_t k = 0; k < n; k++) {
		const mk_sweep_row *r = &rows[k];
		ck_assert_double_le(r->max_err, 1e-4);
	ck_assert_double_gt(r->median_s, 0.0);
	ck_assert_double_le(r->min_s, r->q1_s);
	ck_assert_double_le(r->q1_s, r->median_s);
	ck_assert_double_le(r->median_s, r->q3_s);
	ck_assert_double_le(r->speedup_lo, r->speedup);
	ck_assert_double_le(r->speedup, r->speedup_hi);
	ck_assert(!r->rank_ok || (!r->unranked && r->agree && r->reps >= MK_SWEEP_MIN_REPS));
		if (r->kernel == MK_KERNEL_DENSE)
			ck_assert(r->speedup == 1.0 && r->dense_s == r->median_s);
	}
	free(rows);
	return (int)n;
}

static mk_sweep_opts tiny_opts(const mk_attn_backend *b, const mk_norm *nm)
{
	static const char *const patterns[] = {"local", "star"};
	static const double targets[] = {0.5, 0.8};
	return (mk_sweep_opts){.patterns = patterns, .npatterns = 2, .targets = targets,
			       .ntargets = 2, .norms = nm, .nnorms = 1, .kernels = 15,
			       .backend = b, .shape = {1, 2, 80, 8}, .dtype = MK_COMPUTE_FP32,
			       .tile = 16, .min_reps = 1};
}

START_TEST(test_run_checks_every_kernel)
{
	mk_norm nm = {.kind = MK_NORM_SOFTMAX};
	mk_attn_backend bad = *mk_attn_backend_get("cpu");
	mk_sweep_opts o = tiny_opts(mk_attn_backend_get("cpu"), &nm);
	int status;

	ck_assert_int_eq(count_rows(&o, &status), 2 * 2 * 4);
	ck_assert_int_eq(status, MK_OK);
	bad.run = bad_run;
	o.backend = &bad;
	ck_assert_int_eq(count_rows(&o, &status), -1); /* checked before any timing */
	ck_assert_int_eq(status, MK_EINTERNAL);
	ck_assert_ptr_nonnull(strstr(mk_error(), "pattern 'local'"));
	ck_assert_ptr_nonnull(strstr(mk_error(), "kernel 'csr'"));
}
END_TEST

START_TEST(test_memory_check)
{
	mk_norm nm = {.kind = MK_NORM_SOFTMAX};
	mk_sweep_opts o = tiny_opts(mk_attn_backend_get("cpu"), &nm);
	o.shape.n = MK_N_MAX;
	ck_assert_int_eq(mk_sweep_check_memory(&o), MK_ERANGE);
}
END_TEST

/* The compute types: names (the CLI's and the outputs' spellings), sets,
 * tolerances, and a sweep refusing a value outside the enum. */
START_TEST(test_compute_types)
{
	static const char *const names[] = {"fp32", "fp16", "bf16"};
	mk_norm nm = {.kind = MK_NORM_SOFTMAX};
	mk_sweep_opts o = tiny_opts(mk_attn_backend_get("cpu"), &nm);
	char buf[32];
	int status;

	ck_assert_int_eq(MK_COMPUTE_COUNT, 3);
	for (int t = 0; t < MK_COMPUTE_COUNT; t++) {
		ck_assert_str_eq(mk_compute_name((mk_compute)t), names[t]);
		ck_assert_double_gt(mk_compute_tolerance((mk_compute)t), 0.0);
	}
	ck_assert_str_eq(mk_compute_name(MK_COMPUTE_COUNT), "?");
	ck_assert_str_eq(mk_compute_name((mk_compute)-1), "?");
	ck_assert_double_eq(mk_compute_tolerance(MK_COMPUTE_FP32), 1e-4);
	ck_assert_double_eq(mk_compute_tolerance(MK_COMPUTE_COUNT), 0.0);
	mk_compute_format((1u << MK_COMPUTE_COUNT) - 1, buf, sizeof buf);
	ck_assert_str_eq(buf, "fp32 fp16 bf16");
	mk_compute_format(1u << MK_COMPUTE_BF16, buf, sizeof buf);
	ck_assert_str_eq(buf, "bf16");
	mk_compute_format(0, buf, sizeof buf);
	ck_assert_str_eq(buf, "");
	mk_compute_format((1u << MK_COMPUTE_COUNT) - 1, buf, 7);
	ck_assert_str_eq(buf, "fp32 f");
	o.dtype = MK_COMPUTE_COUNT;
	ck_assert_int_eq(count_rows(&o, &status), -1);
	ck_assert_int_eq(status, MK_EINVAL);
	o.dtype = MK_COMPUTE_FP16;
	ck_assert_int_eq(count_rows(&o, &status), -1);
	ck_assert_int_eq(status, MK_EINVAL);
	ck_assert_ptr_nonnull(strstr(mk_error(), "fp32 or bf16, not 'fp16'"));
}
END_TEST

/* The backend slots the sweep relies on: dtypes, prepare, clock. */
START_TEST(test_backend_slots)
{
	const mk_attn_backend *b = mk_attn_backend_get("cpu");
	mk_expr *e = NULL;
	mk_mask *m = NULL;
	mk_attn_layout *l = NULL;
	double t0, t1;

	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(mk_attn_check_dtype(b, MK_COMPUTE_FP32), MK_OK);
	ck_assert_int_eq(mk_attn_check_dtype(b, MK_COMPUTE_FP16), MK_EINVAL);
	ck_assert_str_eq(mk_error(), "the cpu backend computes in fp32 or bf16, not 'fp16'");
	ck_assert_int_eq(mk_attn_check_dtype(b, MK_COMPUTE_COUNT), MK_EINVAL);
	ck_assert_int_eq(mk_attn_check_dtype(b, (mk_compute)-1), MK_EINVAL);
	ck_assert_int_eq(mk_attn_configure(b, 0, MK_COMPUTE_FP16), MK_EINVAL);
	ck_assert_int_eq(mk_attn_configure(b, 0, MK_COMPUTE_FP32), MK_OK);
	ck_assert_int_eq(mk_expr_parse("local1", &e), MK_OK);
	ck_assert_int_eq(mk_expr_bind(e, &(mk_bind_opts){.n = 10}), MK_OK);
	ck_assert_int_eq(mk_expr_to_mask(e, &m), MK_OK);
	ck_assert_int_eq(mk_attn_prepare(b, m, 4, 0, &l), MK_OK);
	ck_assert_int_eq(mk_attn_layout_n(l), 10);
	ck_assert_uint_eq(mk_attn_layout_nnz(l), 28); /* 10 + 2 * 9 */
	t0 = mk_attn_clock(b);
	t1 = mk_attn_clock(b);
	ck_assert(t1 >= t0 && t0 > 0.0);
	mk_attn_layout_free(l);
	mk_mask_free(m);
	mk_expr_free(e);
}
END_TEST

static Suite *sweep_suite(void)
{
	Suite *s = suite_create("sweep");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_solve_local_by_hand);
	tcase_add_test(tc, test_solve_random_exact);
	tcase_add_test(tc, test_solve_scan_is_nearest);
	tcase_add_test(tc, test_solve_rejects);
	tcase_add_test(tc, test_sweep_param_forms);
	tcase_add_test(tc, test_solve_block_form);
	tcase_add_test(tc, test_ref_rows);
	tcase_add_test(tc, test_ref_softmax_by_hand);
	tcase_add_test(tc, test_ref_dnas_by_hand);
	tcase_add_test(tc, test_ref_mask_and_empty_row);
	tcase_add_test(tc, test_checker_catches_wrong_output);
	tcase_add_test(tc, test_run_checks_every_kernel);
	tcase_add_test(tc, test_memory_check);
	tcase_add_test(tc, test_backend_slots);
	tcase_add_test(tc, test_compute_types);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return mk_test_main(sweep_suite());
}
