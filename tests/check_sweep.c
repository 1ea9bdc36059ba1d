/* Unit tests of the sweep: parameter solving, the double reference and the
 * checker (analysis/sweep.c, src/attn/attn_ref.c), the statistics of the
 * timed runs (analysis/sweep_stats.c) and their interleaving, timed with a
 * scripted clock. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "testutil.h"
#include "attn_backend.h"
#include "attn_ref.h"
#include "sweep_internal.h"

#define LN2 0.69314718055994530942

static mk_sweep_point solve(const char *pattern, int64_t n, double target)
{
	mk_sweep_solver *s;
	mk_sweep_point p;
	ck_assert_int_eq(mk_sweep_solver_new(pattern, n, 0, 0, &s), MK_OK);
	ck_assert_int_eq(mk_sweep_solve(s, target, &p), MK_OK);
	mk_sweep_solver_free(s);
	return p;
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
	ck_assert_int_eq(mk_sweep_solver_new("causal", 64, 0, 0, &s), MK_EINVAL);
	ck_assert_ptr_null(s);
	ck_assert_ptr_null(mk_sweep_param("bigbrd"));
	ck_assert_int_eq(mk_sweep_solver_new("local", 64, 0, 0, &s), MK_OK);
	ck_assert_int_eq(mk_sweep_solve(s, 1.5, &p), MK_EINVAL);
	mk_sweep_solver_free(s);
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
		   const mk_attn_layout *mask, float *o, mk_attn_stats *st)
{
	int ret = mk_attn_run(mk_attn_backend_get("cpu"), kernel, norm, s, q, k, v, mask, o, st);
	(void)b;
	if (kernel == MK_KERNEL_CSR)
		o[3] += 0.01f;
	return ret;
}

static int count_rows(const mk_sweep_row *r, void *arg)
{
	ck_assert_double_le(r->max_err, 1e-4);
	ck_assert_double_gt(r->median_s, 0.0);
	ck_assert_double_le(r->min_s, r->q1_s);
	ck_assert_double_le(r->q1_s, r->median_s);
	ck_assert_double_le(r->median_s, r->q3_s);
	ck_assert_double_le(r->speedup_q1, r->speedup);
	ck_assert_double_le(r->speedup, r->speedup_q3);
	ck_assert(r->rank_ok == !r->unranked);
	if (r->kernel == MK_KERNEL_DENSE)
		ck_assert(r->speedup == 1.0 && r->dense_s == r->median_s);
	(*(int *)arg)++;
	return MK_OK;
}

static mk_sweep_opts tiny_opts(const mk_attn_backend *b, const mk_norm *nm)
{
	static const char *const patterns[] = {"local", "star"};
	static const double targets[] = {0.5, 0.8};
	return (mk_sweep_opts){.patterns = patterns, .npatterns = 2, .targets = targets,
			       .ntargets = 2, .norms = nm, .nnorms = 1, .kernels = 15,
			       .backend = b, .shape = {1, 2, 80, 8}, .dtype = MK_COMPUTE_FP32,
			       .tile = 16, .reps = 1};
}

START_TEST(test_run_checks_every_kernel)
{
	mk_norm nm = {.kind = MK_NORM_SOFTMAX};
	mk_attn_backend bad = *mk_attn_backend_get("cpu");
	mk_sweep_opts o = tiny_opts(mk_attn_backend_get("cpu"), &nm);
	int rows = 0;

	ck_assert_int_eq(mk_sweep_run(&o, count_rows, &rows), MK_OK);
	ck_assert_int_eq(rows, 2 * 2 * 4);
	bad.run = bad_run;
	o.backend = &bad;
	rows = 0;
	ck_assert_int_eq(mk_sweep_run(&o, count_rows, &rows), MK_EINTERNAL);
	ck_assert_int_eq(rows, 0); /* checked after the warm-ups, before any timing */
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
	int rows = 0;

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
	ck_assert_int_eq(mk_sweep_run(&o, count_rows, &rows), MK_EINVAL);
	ck_assert_int_eq(rows, 0);
	o.dtype = MK_COMPUTE_FP16;
	ck_assert_int_eq(mk_sweep_run(&o, count_rows, &rows), MK_EINVAL);
	ck_assert_ptr_nonnull(strstr(mk_error(), "fp32 only, not 'fp16'"));
	ck_assert_int_eq(rows, 0);
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
	ck_assert_str_eq(mk_error(), "the cpu backend computes in fp32 only, not 'fp16'");
	ck_assert_int_eq(mk_attn_check_dtype(b, MK_COMPUTE_COUNT), MK_EINVAL);
	ck_assert_int_eq(mk_attn_check_dtype(b, (mk_compute)-1), MK_EINVAL);
	ck_assert_int_eq(mk_attn_configure(b, 0, MK_COMPUTE_BF16), MK_EINVAL);
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

/* ---- statistics of the timed runs ----------------------------------------- */

static mk_sweep_spread spread(const double *x, size_t n)
{
	double work[16];
	mk_sweep_spread s;
	mk_sweep_spread_of(x, n, work, &s);
	return s;
}

/* Rank (n - 1) p of the sorted values, between neighbours: 1..5 gives 2, 3,
 * 4; 1..4 gives 1.75, 2.5, 3.25; one value is every quartile. */
START_TEST(test_quartiles_by_hand)
{
	const double odd[] = {5, 1, 4, 2, 3}, even[] = {4, 1, 3, 2}, one[] = {7};
	mk_sweep_spread s = spread(odd, 5);

	ck_assert(s.min == 1 && s.q1 == 2 && s.median == 3 && s.q3 == 4);
	ck_assert(odd[0] == 5 && odd[1] == 1); /* the input keeps its order */
	s = spread(even, 4);
	ck_assert(s.min == 1 && s.q1 == 1.75 && s.median == 2.5 && s.q3 == 3.25);
	s = spread(one, 1);
	ck_assert(s.min == 7 && s.q1 == 7 && s.median == 7 && s.q3 == 7);
}
END_TEST

/* The speed-up is the median of the paired ratios, not the ratio of the
 * medians: dense 4 against 1, 2, 4, 8 gives ratios 0.5, 1, 2, 4: median
 * 1.5 (the medians give 4 / 3), quartiles 0.875 and 2.5. */
START_TEST(test_paired_speedup_by_hand)
{
	const double dense[] = {4, 4, 4, 4}, kernel[] = {8, 4, 2, 1};
	double work[4];
	mk_sweep_spread s;

	mk_sweep_ratio_spread(dense, kernel, 4, work, &s);
	ck_assert(s.min == 0.5 && s.median == 1.5 && s.q1 == 0.875 && s.q3 == 2.5);
}
END_TEST

/* A disturbance in repetitions 3 and 4 that falls on both kernels (as the
 * interleaved runs make it) cancels in the pairs; the same times paired
 * across the disturbance cannot be ranked. */
START_TEST(test_paired_speedup_cancels_disturbance)
{
	const double dense[] = {1, 1, 1, 5, 5}, together[] = {0.5, 0.5, 0.5, 2.5, 2.5};
	const double apart[] = {2.5, 2.5, 0.5, 0.5, 0.5};
	double work[5];
	mk_sweep_spread s;

	mk_sweep_ratio_spread(dense, together, 5, work, &s);
	ck_assert(s.q1 == 2 && s.median == 2 && s.q3 == 2);
	ck_assert(!mk_sweep_unranked(&s));
	mk_sweep_ratio_spread(dense, apart, 5, work, &s);
	ck_assert(s.q1 == 0.4 && s.q3 == 10);
	ck_assert(mk_sweep_unranked(&s));
}
END_TEST

/* Unranked: the IQR of the paired ratio contains 1 and is wider than
 * MK_SWEEP_TIE; entirely on one side of 1, or narrow (a tie), it ranks. */
START_TEST(test_unranked_rule)
{
	const mk_sweep_spread faster = {.q1 = 1.1, .q3 = 1.5}, slower = {.q1 = 0.6, .q3 = 0.9};
	const mk_sweep_spread tie = {.q1 = 0.98, .q3 = 1.02}, wide = {.q1 = 0.9, .q3 = 1.2};
	const mk_sweep_spread edge = {.q1 = 1.0, .q3 = 1.2}, above = {.q1 = 1.0001, .q3 = 3};

	ck_assert_double_eq(MK_SWEEP_TIE, 0.05);
	ck_assert(!mk_sweep_unranked(&faster));
	ck_assert(!mk_sweep_unranked(&slower));
	ck_assert(!mk_sweep_unranked(&tie));
	ck_assert(mk_sweep_unranked(&wide));
	ck_assert(mk_sweep_unranked(&edge));
	ck_assert(!mk_sweep_unranked(&above));
}
END_TEST

/* One point, four repetitions: masked ties dense (within 1%), block is 4x
 * faster, csr alternates 2x faster and 2x slower: it cannot be ranked
 * against dense or masked, but it is always slower than block. */
START_TEST(test_point_stats_flags)
{
	const double times[4][4] = {{4, 4, 4, 4}, {4.04, 3.96, 4.02, 3.98}, {1, 1, 1, 1},
				    {2, 8, 2, 8}};
	double work[4];
	mk_sweep_stats st;

	mk_sweep_point_stats(&times[0][0], 4, 15, work, &st);
	ck_assert(st.speedup[MK_KERNEL_DENSE].median == 1.0);
	ck_assert(st.speedup[MK_KERNEL_BLOCK].median == 4.0);
	ck_assert_double_eq_tol(st.speedup[MK_KERNEL_MASKED].median, 1.0, 1e-3);
	ck_assert(st.speedup[MK_KERNEL_CSR].q1 == 0.5 && st.speedup[MK_KERNEL_CSR].q3 == 2.0);
	ck_assert(st.time[MK_KERNEL_CSR].median == 5.0 && st.time[MK_KERNEL_CSR].min == 2.0);
	ck_assert_uint_eq(st.unranked[MK_KERNEL_DENSE], 1u << MK_KERNEL_CSR);
	ck_assert_uint_eq(st.unranked[MK_KERNEL_MASKED], 1u << MK_KERNEL_CSR);
	ck_assert_uint_eq(st.unranked[MK_KERNEL_BLOCK], 0);
	ck_assert_uint_eq(st.unranked[MK_KERNEL_CSR],
			  1u << MK_KERNEL_DENSE | 1u << MK_KERNEL_MASKED);
	/* without csr, every kernel ranks */
	mk_sweep_point_stats(&times[0][0], 4, 7, work, &st);
	for (int k = 0; k < MK_KERNEL_COUNT; k++)
		ck_assert_uint_eq(st.unranked[k], 0);
}
END_TEST

/* A row from the statistics: times, speed-up, the flag and throughput
 * (4BH|M|d over the median; n^2 entries for dense). */
START_TEST(test_row_fill)
{
	const double times[4][2] = {{2, 2}, {0}, {1, 1}, {0}};
	const mk_attn_shape s = {1, 2, 10, 5, 0};
	mk_sweep_row r = {.point = {.count = 50}};
	double work[2];
	mk_sweep_stats st;

	mk_sweep_point_stats(&times[0][0], 2, 5, work, &st);
	st.unranked[MK_KERNEL_BLOCK] = 1u << MK_KERNEL_DENSE;
	mk_sweep_row_fill(&s, &st, MK_KERNEL_BLOCK, 1e-6, &r);
	ck_assert(r.kernel == MK_KERNEL_BLOCK && r.median_s == 1 && r.speedup == 2);
	ck_assert(r.dense_s == 2 && r.max_err == 1e-6 && !r.rank_ok);
	ck_assert_double_eq_tol(r.gflops_actual, 4.0 * 2 * 5 * 50 * 1e-9, 1e-18);
	ck_assert_double_eq_tol(r.gflops_dense, 4.0 * 2 * 5 * 100 * 1e-9, 1e-18);
	mk_sweep_row_fill(&s, &st, MK_KERNEL_DENSE, 0, &r);
	ck_assert(r.speedup == 1 && r.rank_ok && r.median_s == 2);
	ck_assert_double_eq_tol(r.gflops_actual, 4.0 * 2 * 5 * 100 / 2 * 1e-9, 1e-18);
}
END_TEST

/* ---- interleaving, on a scripted clock -------------------------------------- */

/* Each run advances the clock by its kernel's cost, times slow for the
 * calls in [slow_from, slow_to) (a disturbance), and is recorded. */
static struct {
	double now, cost[MK_KERNEL_COUNT], slow;
	int calls, slow_from, slow_to;
	int seq[64];
} script;

static double script_clock(const mk_attn_backend *b)
{
	(void)b;
	return script.now;
}

static int script_run(const mk_attn_backend *b, mk_attn_kernel kernel, const mk_norm *norm,
		      const mk_attn_shape *s, const float *q, const float *k, const float *v,
		      const mk_attn_layout *mask, float *o, mk_attn_stats *st)
{
	int ret = mk_attn_run(mk_attn_backend_get("cpu"), kernel, norm, s, q, k, v, mask, o, st);
	bool slow = script.calls >= script.slow_from && script.calls < script.slow_to;
	(void)b;
	script.now += script.cost[kernel] * (slow ? script.slow : 1.0);
	if (script.calls < 64)
		script.seq[script.calls] = (int)kernel;
	script.calls++;
	return ret;
}

typedef struct kept {
	mk_sweep_row rows[8];
	int n;
} kept;

static int keep_row(const mk_sweep_row *r, void *arg)
{
	kept *k = arg;
	ck_assert_int_lt(k->n, 8);
	k->rows[k->n++] = *r;
	return MK_OK;
}

/* dense's check (once per norm), a warm-up of each kernel, then repetition
 * r of every kernel in turn.  Repetition 1 runs ten times slower: the
 * times' upper quartile shows it, the paired speed-ups do not. */
START_TEST(test_run_interleaves)
{
	static const char *const patterns[] = {"local"};
	static const double targets[] = {0.5};
	mk_norm nm = {.kind = MK_NORM_SOFTMAX};
	mk_attn_backend fake = *mk_attn_backend_get("cpu");
	mk_sweep_opts o = {.patterns = patterns, .npatterns = 1, .targets = targets,
			   .ntargets = 1, .norms = &nm, .nnorms = 1, .kernels = 15,
			   .backend = &fake, .shape = {1, 1, 32, 8}, .dtype = MK_COMPUTE_FP32,
			   .tile = 8, .reps = 3};
	kept k = {.n = 0};

	fake.run = script_run;
	fake.clock = script_clock;
	script.cost[MK_KERNEL_DENSE] = script.cost[MK_KERNEL_MASKED] = 4;
	script.cost[MK_KERNEL_BLOCK] = 1;
	script.cost[MK_KERNEL_CSR] = 2;
	script.slow = 10;
	script.slow_from = 1 + 4 + 4; /* check, warm-ups, repetition 0 */
	script.slow_to = script.slow_from + 4;
	ck_assert_int_eq(mk_sweep_run(&o, keep_row, &k), MK_OK);
	ck_assert_int_eq(script.calls, 1 + 4 + 3 * 4);
	ck_assert_int_eq(script.seq[0], MK_KERNEL_DENSE);
	for (int c = 1; c < script.calls; c++)
		ck_assert_int_eq(script.seq[c], (c - 1) % 4);
	ck_assert_int_eq(k.n, 4);
	ck_assert(k.rows[0].median_s == 4 && k.rows[0].min_s == 4 && k.rows[0].q3_s == 22);
	ck_assert(k.rows[2].median_s == 1 && k.rows[2].q3_s == 5.5);
	for (int r = 0; r < 4; r++) {
		double want[] = {1, 1, 4, 2};
		ck_assert_int_eq(k.rows[r].kernel, r);
		ck_assert(k.rows[r].speedup == want[r] && k.rows[r].speedup_q1 == want[r] &&
			  k.rows[r].speedup_q3 == want[r]);
		ck_assert(k.rows[r].rank_ok && k.rows[r].dense_s == 4);
	}
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
	tcase_add_test(tc, test_ref_rows);
	tcase_add_test(tc, test_ref_softmax_by_hand);
	tcase_add_test(tc, test_ref_dnas_by_hand);
	tcase_add_test(tc, test_ref_mask_and_empty_row);
	tcase_add_test(tc, test_checker_catches_wrong_output);
	tcase_add_test(tc, test_run_checks_every_kernel);
	tcase_add_test(tc, test_memory_check);
	tcase_add_test(tc, test_backend_slots);
	tcase_add_test(tc, test_compute_types);
	tcase_add_test(tc, test_quartiles_by_hand);
	tcase_add_test(tc, test_paired_speedup_by_hand);
	tcase_add_test(tc, test_paired_speedup_cancels_disturbance);
	tcase_add_test(tc, test_unranked_rule);
	tcase_add_test(tc, test_point_stats_flags);
	tcase_add_test(tc, test_row_fill);
	tcase_add_test(tc, test_run_interleaves);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return mk_test_main(sweep_suite());
}
