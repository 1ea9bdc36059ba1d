/* Unit tests of a sweep's timing (analysis/sweep_stats.c, the loop of
 * analysis/sweep.c): the statistics of the timed runs, pure functions of the
 * times, checked by hand and against the binomial tables; and the
 * interleaved, adaptive runs on a backend whose clock is a script, so that
 * no test depends on how fast this machine is. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "attn_backend.h"
#include "sweep_internal.h"

#define LN2 0.69314718055994530942

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

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

/* The 95% interval of a median from order statistics, against the
 * binomial tables: n = 5 has none at 95% (min and max cover 1 - 2/2^5);
 * n = 6: x1..x6 (1 - 2/64); n = 9: x2..x8 (P(B <= 1) = 10/512); n = 10:
 * x2..x9 (11/1024); n = 20: x6..x15 (P(B <= 5) = 21700/2^20). */
START_TEST(test_median_ci_by_hand)
{
	const struct {
		size_t n, l;
		double coverage;
	} want[] = {{1, 1, 0.0}, {5, 1, 1 - 2.0 / 32}, {6, 1, 1 - 2.0 / 64},
		    {9, 2, 1 - 20.0 / 512}, {10, 2, 1 - 22.0 / 1024},
		    {20, 6, 1 - 43400.0 / 1048576}};
	double x[20], lo, hi, cov;

	for (int i = 0; i < 20; i++)
		x[i] = i + 1;
	for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
		mk_sweep_median_ci(x, want[k].n, &lo, &hi, &cov);
		ck_assert_double_eq(lo, (double)want[k].l);
		ck_assert_double_eq(hi, (double)(want[k].n + 1 - want[k].l));
		if (want[k].n > 1)
			ck_assert_double_eq_tol(cov, want[k].coverage, 1e-12);
	}
}
END_TEST

/* The coverage claimed is the coverage seen: for 20 000 samples of 20
 * ratios from a skewed distribution (exponential), the interval holds the
 * true median ln 2 about 95.86% of the time (binomial sd 0.14%). */
START_TEST(test_median_ci_covers)
{
	uint64_t state = 12345;
	double x[20], lo, hi, cov = 0;
	int held = 0, trials = 20000;

	for (int t = 0; t < trials; t++) {
		for (int i = 0; i < 20; i++) {
			state = state * 6364136223846793005ULL + 1442695040888963407ULL;
			x[i] = -log(((double)(state >> 11) + 0.5) * 0x1.0p-53);
		}
		qsort(x, 20, sizeof *x, cmp_double);
		mk_sweep_median_ci(x, 20, &lo, &hi, &cov);
		held += lo <= LN2 && LN2 <= hi;
	}
	ck_assert_double_eq_tol((double)held / trials, cov, 0.006);
}
END_TEST

/* The speed-up is the median of the paired ratios, not the ratio of the
 * medians: dense 4 against 8, 4, 2, 1 gives ratios 0.5, 1, 2, 4: median
 * 1.5 (the medians give 4 / 3), and four values have the range as their
 * interval. */
START_TEST(test_paired_speedup_by_hand)
{
	const double dense[] = {4, 4, 4, 4}, kernel[] = {8, 4, 2, 1};
	double work[4];
	mk_sweep_ci c;

	mk_sweep_ratio_ci(dense, kernel, 4, work, &c);
	ck_assert(c.median == 1.5 && c.lo == 0.5 && c.hi == 4);
}
END_TEST

/* A disturbance in repetitions 3 and 4 that falls on both kernels (as the
 * interleaved runs make it) cancels in the pairs; the same times paired
 * across the disturbance give an interval across 1: no ranking. */
START_TEST(test_paired_speedup_cancels_disturbance)
{
	const double dense[] = {1, 1, 1, 5, 5}, together[] = {0.5, 0.5, 0.5, 2.5, 2.5};
	const double apart[] = {2.5, 2.5, 0.5, 0.5, 0.5};
	const mk_sweep_ci one = {1, 1, 1};
	double work[5];
	mk_sweep_ci c;

	mk_sweep_ratio_ci(dense, together, 5, work, &c);
	ck_assert(c.lo == 2 && c.median == 2 && c.hi == 2);
	ck_assert(!mk_sweep_overlap(&c, &one));
	mk_sweep_ratio_ci(dense, apart, 5, work, &c);
	ck_assert(c.lo == 0.4 && c.hi == 10);
	ck_assert(mk_sweep_overlap(&c, &one));
}
END_TEST

/* Two intervals overlap when they share a point (touching ends count):
 * their kernels cannot be ranked. */
START_TEST(test_overlap_rule)
{
	const mk_sweep_ci one = {1, 1, 1}, faster = {1.3, 1.1, 1.5}, slower = {0.8, 0.6, 0.9};
	const mk_sweep_ci across = {1.05, 0.9, 1.2}, edge = {1.1, 1.0, 1.2};
	const mk_sweep_ci above = {2, 1.0001, 3};

	ck_assert(!mk_sweep_overlap(&faster, &one));
	ck_assert(!mk_sweep_overlap(&slower, &one));
	ck_assert(!mk_sweep_overlap(&faster, &slower));
	ck_assert(mk_sweep_overlap(&across, &one) && mk_sweep_overlap(&one, &across));
	ck_assert(mk_sweep_overlap(&edge, &one));
	ck_assert(!mk_sweep_overlap(&above, &one));
	ck_assert(mk_sweep_overlap(&above, &faster));
}
END_TEST

/* One point, six repetitions: masked within 1% of dense (its interval
 * holds 1: not ranked against dense), block 4x faster, csr alternating 2x
 * faster and 2x slower (unranked against dense and masked, always slower
 * than block).  The medians agree with the pairs, and dense's median at
 * each kernel is taken over that kernel's repetitions. */
START_TEST(test_point_stats_flags)
{
	double t[4][6] = {{4, 4, 4, 4, 4, 4}, {4.04, 3.96, 4.02, 3.98, 4.01, 3.99},
			  {1, 1, 1, 1, 1, 1}, {2, 8, 2, 8, 2, 8}};
	double *const times[4] = {t[0], t[1], t[2], t[3]};
	int reps[4] = {6, 6, 6, 6};
	double work[6];
	mk_sweep_stats st;

	mk_sweep_point_stats(times, reps, 15, work, &st);
	ck_assert(st.speedup[MK_KERNEL_DENSE].median == 1.0);
	ck_assert(st.speedup[MK_KERNEL_BLOCK].median == 4.0);
	ck_assert_double_eq_tol(st.speedup[MK_KERNEL_MASKED].median, 1.0, 1e-3);
	ck_assert(st.speedup[MK_KERNEL_CSR].lo == 0.5 && st.speedup[MK_KERNEL_CSR].hi == 2.0);
	ck_assert(st.time[MK_KERNEL_CSR].median == 5.0 && st.time[MK_KERNEL_CSR].min == 2.0);
	ck_assert_uint_eq(st.unranked[MK_KERNEL_DENSE],
			  1u << MK_KERNEL_CSR | 1u << MK_KERNEL_MASKED);
	ck_assert_uint_eq(st.unranked[MK_KERNEL_MASKED],
			  1u << MK_KERNEL_CSR | 1u << MK_KERNEL_DENSE);
	ck_assert_uint_eq(st.unranked[MK_KERNEL_BLOCK], 0);
	ck_assert_uint_eq(st.unranked[MK_KERNEL_CSR],
			  1u << MK_KERNEL_DENSE | 1u << MK_KERNEL_MASKED);
	for (int k = 0; k < 4; k++)
		ck_assert(st.agree[k] && st.dense_median[k] == 4);
	ck_assert(mk_sweep_all_agree(&st, 15));
	/* block alone is precise (its interval a point); masked is within 1% */
	ck_assert(mk_sweep_precise(&st, MK_KERNEL_BLOCK, 0.0));
	ck_assert(mk_sweep_precise(&st, MK_KERNEL_MASKED, 0.05));
	ck_assert(!mk_sweep_precise(&st, MK_KERNEL_MASKED, 0.005));
	ck_assert(!mk_sweep_precise(&st, MK_KERNEL_CSR, 0.5));
	/* without csr and masked, every kernel ranks */
	mk_sweep_point_stats(times, reps, 5, work, &st);
	for (int k = 0; k < MK_KERNEL_COUNT; k++)
		ck_assert_uint_eq(st.unranked[k], 0);
	/* fewer than 6 runs: an interval, but not a 95% one: never precise */
	reps[MK_KERNEL_BLOCK] = 5;
	mk_sweep_point_stats(times, reps, 5, work, &st);
	ck_assert(!mk_sweep_precise(&st, MK_KERNEL_BLOCK, 0.05));
}
END_TEST

/* A disturbance that hit dense in more repetitions than the kernel: the
 * ratio of the medians (10 / 2.75) falls outside the paired interval (every
 * ratio but one is 2). */
START_TEST(test_point_stats_disagree)
{
	double d[20], k[20], work[20];
	double *const times[4] = {d, NULL, k, NULL};
	int reps[4] = {20, 0, 20, 0};
	mk_sweep_stats st;

	for (int r = 0; r < 20; r++) {
		d[r] = r < 11 ? 10 : 1;
		k[r] = r < 10 ? 5 : 0.5;
	}
	mk_sweep_point_stats(times, reps, 5, work, &st);
	ck_assert(st.speedup[MK_KERNEL_BLOCK].median == 2 && st.speedup[MK_KERNEL_BLOCK].hi == 2);
	ck_assert(st.dense_median[MK_KERNEL_BLOCK] == 10 && st.time[MK_KERNEL_BLOCK].median == 2.75);
	ck_assert(!st.agree[MK_KERNEL_BLOCK] && !mk_sweep_all_agree(&st, 5));
}
END_TEST

/* A row from the statistics: times, speed-up, the flag and throughput
 * (4BH|M|d over the median; n^2 entries for dense). */
START_TEST(test_row_fill)
{
	double t[4][6] = {{2, 2, 2, 2, 2, 2}, {0}, {1, 1, 1, 1, 1, 1}, {0}};
	double *const times[4] = {t[0], t[1], t[2], t[3]};
	const int reps[4] = {6, 0, 6, 0};
	const mk_attn_shape s = {1, 2, 10, 5, 0};
	mk_sweep_row r = {.point = {.count = 50}};
	double work[6];
	mk_sweep_stats st;

	mk_sweep_point_stats(times, reps, 5, work, &st);
	mk_sweep_row_fill(&s, &st, MK_KERNEL_BLOCK, 1e-6, &r);
	ck_assert(r.kernel == MK_KERNEL_BLOCK && r.median_s == 1 && r.speedup == 2);
	ck_assert(r.speedup_lo == 2 && r.speedup_hi == 2 && r.reps == 6 && r.agree);
	ck_assert(r.dense_s == 2 && r.max_err == 1e-6 && r.rank_ok);
	ck_assert_double_eq_tol(r.gflops_actual, 4.0 * 2 * 5 * 50 * 1e-9, 1e-18);
	ck_assert_double_eq_tol(r.gflops_dense, 4.0 * 2 * 5 * 100 * 1e-9, 1e-18);
	st.unranked[MK_KERNEL_BLOCK] = 1u << MK_KERNEL_DENSE;
	mk_sweep_row_fill(&s, &st, MK_KERNEL_BLOCK, 1e-6, &r);
	ck_assert(!r.rank_ok);
	mk_sweep_row_fill(&s, &st, MK_KERNEL_DENSE, 0, &r);
	ck_assert(r.speedup == 1 && r.rank_ok && r.median_s == 2);
	ck_assert_double_eq_tol(r.gflops_actual, 4.0 * 2 * 5 * 100 / 2 * 1e-9, 1e-18);
}
END_TEST

/* The baseline is the median over points (a point: consecutive rows of one
 * grid point and norm) of dense's median there, per norm. */
START_TEST(test_baseline)
{
	const mk_norm n1 = {.kind = MK_NORM_SOFTMAX}, n2 = {.kind = MK_NORM_DNAS};
	mk_sweep_row r[] = {{.grid = 0, .norm = &n1, .dense_s = 3},
			    {.grid = 0, .norm = &n1, .dense_s = 3},
			    {.grid = 0, .norm = &n2, .dense_s = 9},
			    {.grid = 1, .norm = &n1, .dense_s = 1},
			    {.grid = 2, .norm = &n1, .dense_s = 2},
			    {.grid = 2, .norm = &n1, .dense_s = 2}};

	ck_assert_double_eq(mk_sweep_baseline(r, 6, &n1), 2);
	ck_assert_double_eq(mk_sweep_baseline(r, 6, &n2), 9);
	ck_assert_double_eq(mk_sweep_baseline(r, 6, NULL), 2.5);
	ck_assert_double_eq(mk_sweep_baseline(r, 0, NULL), 0);
}
END_TEST

/* ---- interleaving, on a scripted clock -------------------------------------- */

/* Each run advances the clock by its kernel's cost (costs[k][r % 2] for
 * kernel k's run r when alt is set: a kernel whose speed alternates), times
 * slow for the calls in [slow_from, slow_to) (a disturbance), and is
 * recorded. */
static struct {
	double now, cost[MK_KERNEL_COUNT], alt[MK_KERNEL_COUNT], slow;
	double slowby[MK_KERNEL_COUNT]; /* a kernel's own factor in the window (0: slow) */
	int calls, slow_from, slow_to, runs[MK_KERNEL_COUNT];
	int seq[512];
} script;

static double script_clock(const mk_attn_backend *b)
{
	(void)b;
	return script.now;
}

static int script_run(const mk_attn_backend *b, mk_attn_kernel kernel, const mk_norm *norm,
		      const mk_attn_shape *s, const float *q, const float *k, const float *v,
		      const mk_attn_layout *mask, float *o, mk_attn_stats *st,
		      mk_progress_fn progress, void *parg)
{
	int ret = mk_attn_run_progress(mk_attn_backend_get("cpu"), kernel, norm, s, q, k, v, mask,
				       o, st, progress, parg);
	bool slow = script.calls >= script.slow_from && script.calls < script.slow_to;
	double cost = script.runs[kernel]++ % 2 && script.alt[kernel] ? script.alt[kernel] :
		      script.cost[kernel];
	(void)b;
	script.now += cost * (!slow ? 1.0 : script.slowby[kernel] ? script.slowby[kernel] : script.slow);
	if (script.calls < 512)
		script.seq[script.calls] = (int)kernel;
	script.calls++;
	return ret;
}

/* A sweep of local points on the scripted backend; rows in k. */
typedef struct kept {
	mk_sweep_row rows[8];
	int n;
} kept;

static int script_sweep_at(const double *targets, size_t ntargets, unsigned kernels, int min_reps,
			   int max_reps, double max_time, kept *k)
{
	static const char *const patterns[] = {"local"};
	static mk_norm nm = {.kind = MK_NORM_SOFTMAX};
	static mk_attn_backend fake;
	mk_sweep_opts o = {.patterns = patterns, .npatterns = 1, .targets = targets,
			   .ntargets = ntargets, .norms = &nm, .nnorms = 1, .kernels = kernels,
			   .backend = &fake, .shape = {1, 1, 32, 8}, .dtype = MK_COMPUTE_FP32,
			   .tile = 8, .min_reps = min_reps, .max_reps = max_reps,
			   .precision = 0.05, .max_time = max_time};
	mk_sweep_row *rows;
	size_t n;
	int ret;

	fake = *mk_attn_backend_get("cpu");
	fake.run = script_run;
	fake.clock = script_clock;
	if ((ret = mk_sweep_run(&o, &rows, &n)))
		return ret;
	ck_assert_uint_le(n, 8);
	memcpy(k->rows, rows, n * sizeof *rows);
	k->n = (int)n;
	free(rows);
	return MK_OK;
}

static int script_sweep(unsigned kernels, int min_reps, int max_reps, double max_time, kept *k)
{
	static const double target = 0.5;
	return script_sweep_at(&target, 1, kernels, min_reps, max_reps, max_time, k);
}


/* dense's check (once per norm), a warm-up of each kernel, then repetition
 * r of every kernel in turn (a fixed count: --reps 3).  Repetition 1 runs
 * ten times slower: the times' upper quartile shows it, the paired
 * speed-ups do not. */
START_TEST(test_run_interleaves)
{
	kept k = {.n = 0};

	memset(&script, 0, sizeof script);
	script.cost[MK_KERNEL_DENSE] = script.cost[MK_KERNEL_MASKED] = 4;
	script.cost[MK_KERNEL_BLOCK] = 1;
	script.cost[MK_KERNEL_CSR] = 2;
	script.slow = 10;
	script.slow_from = 1 + 4 + 4; /* check, warm-ups, repetition 0 */
	script.slow_to = script.slow_from + 4;
	ck_assert_int_eq(script_sweep(15, 3, 3, 0, &k), MK_OK);
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
		ck_assert(k.rows[r].speedup == want[r] && k.rows[r].speedup_lo == want[r] &&
			  k.rows[r].speedup_hi == want[r]);
		ck_assert(k.rows[r].reps == 3 && k.rows[r].agree && !k.rows[r].remeasured);
		ck_assert(!k.rows[r].rank_ok && k.rows[r].dense_s == 4); /* 3 runs: no 95% */
	}
}
END_TEST

/* Adaptive: block's ratio alternates 2 and 4, so its interval stays [2, 4]
 * and the point runs until its timed runs took max_time on the script's
 * clock: repetitions cost 6 and 5 in turn (the warm-up had block's first,
 * cheap run), so 50 is reached at the 9th (6 + 5 + ... + 6 = 50).  Steady
 * kernels stop at the minimum. */
START_TEST(test_run_adapts_to_time)
{
	kept k = {.n = 0};

	memset(&script, 0, sizeof script);
	script.cost[MK_KERNEL_DENSE] = 4;
	script.cost[MK_KERNEL_BLOCK] = 1;
	script.alt[MK_KERNEL_BLOCK] = 2;
	ck_assert_int_eq(script_sweep(5, 6, 200, 50, &k), MK_OK);
	ck_assert_int_eq(k.n, 2);
	ck_assert_int_eq(k.rows[1].reps, 9);
	ck_assert_int_eq(k.rows[0].reps, 9);
	ck_assert(k.rows[1].speedup_lo == 2 && k.rows[1].speedup_hi == 4 && k.rows[1].speedup == 2);
	ck_assert(k.rows[1].rank_ok && k.rows[1].agree); /* [2, 4]: above 1, holds 4 / 2 */
	/* the same with max_reps 8: stopped there */
	memset(&script, 0, sizeof script);
	script.cost[MK_KERNEL_DENSE] = 4;
	script.cost[MK_KERNEL_BLOCK] = 1;
	script.alt[MK_KERNEL_BLOCK] = 2;
	k.n = 0;
	ck_assert_int_eq(script_sweep(5, 6, 8, 50, &k), MK_OK);
	ck_assert_int_eq(k.rows[1].reps, 8);
	ck_assert(k.rows[1].speedup == 3);
	/* steady: precise at the minimum, 6 runs */
	memset(&script, 0, sizeof script);
	script.cost[MK_KERNEL_DENSE] = 4;
	script.cost[MK_KERNEL_BLOCK] = 1;
	k.n = 0;
	ck_assert_int_eq(script_sweep(5, 6, 200, 0, &k), MK_OK);
	ck_assert_int_eq(k.rows[1].reps, 6);
	ck_assert(k.rows[1].rank_ok && k.rows[1].speedup == 4);
}
END_TEST

/* A kernel leaves the rotation once it is settled: masked (steady) after
 * the minimum of 6, csr (10x slower than dense: out of the race) after 3,
 * while block (alternating) runs on with dense until max_reps. */
START_TEST(test_run_settled_kernels_leave)
{
	kept k = {.n = 0};
	int per[MK_KERNEL_COUNT] = {0};

	memset(&script, 0, sizeof script);
	script.cost[MK_KERNEL_DENSE] = 4;
	script.cost[MK_KERNEL_MASKED] = 4;
	script.cost[MK_KERNEL_BLOCK] = 1;
	script.alt[MK_KERNEL_BLOCK] = 2;
	script.cost[MK_KERNEL_CSR] = 40;
	ck_assert_int_eq(script_sweep(15, 6, 12, 0, &k), MK_OK);
	ck_assert_int_eq(k.n, 4);
	ck_assert_int_eq(k.rows[MK_KERNEL_DENSE].reps, 12);
	ck_assert_int_eq(k.rows[MK_KERNEL_MASKED].reps, 6);
	ck_assert_int_eq(k.rows[MK_KERNEL_BLOCK].reps, 12);
	ck_assert_int_eq(k.rows[MK_KERNEL_CSR].reps, 3);
	ck_assert(k.rows[MK_KERNEL_CSR].speedup == 0.1 && !k.rows[MK_KERNEL_CSR].rank_ok);
	/* three runs have no 95% interval, but 10x slower in each says enough */
	ck_assert_str_eq(mk_sweep_row_verdict(&k.rows[MK_KERNEL_CSR], 0.05), "slower");
	ck_assert_str_eq(mk_sweep_row_verdict(&k.rows[MK_KERNEL_MASKED], 0.05), "same");
	ck_assert_str_eq(mk_sweep_row_verdict(&k.rows[MK_KERNEL_BLOCK], 0.05), "faster");
	{
		/* three runs within 2x of dense say nothing yet; disagreeing
		 * medians never give a verdict */
		mk_sweep_row r = {.speedup = 0.7, .speedup_lo = 0.6, .speedup_hi = 0.8, .reps = 3,
				  .agree = true};
		ck_assert_str_eq(mk_sweep_row_verdict(&r, 0.05), "unsure");
		r.reps = 6;
		ck_assert_str_eq(mk_sweep_row_verdict(&r, 0.05), "slower");
		r.agree = false;
		ck_assert_str_eq(mk_sweep_row_verdict(&r, 0.05), "unsure");
	}
	/* the calls after the check and warm-ups: as many as the rows say */
	for (int c = 1 + 4; c < script.calls; c++)
		per[script.seq[c]]++;
	for (int r = 0; r < 4; r++)
		ck_assert_int_eq(per[r], k.rows[r].reps);
	/* under a fixed count nobody leaves */
	memset(&script, 0, sizeof script);
	script.cost[MK_KERNEL_DENSE] = script.cost[MK_KERNEL_MASKED] = 4;
	script.cost[MK_KERNEL_BLOCK] = 1;
	script.cost[MK_KERNEL_CSR] = 40;
	k.n = 0;
	ck_assert_int_eq(script_sweep(15, 7, 7, 0, &k), MK_OK);
	for (int r = 0; r < 4; r++)
		ck_assert_int_eq(k.rows[r].reps, 7);
}
END_TEST

/* A disturbance over calls that hit dense in 11 of 20 repetitions but
 * block in 10: the medians disagree with the pairs, so the point is
 * measured again (undisturbed: they agree, remeasured says so); when the
 * disturbance spans both measurements alike, agree is false and the row is
 * not ranked. */
START_TEST(test_run_remeasures)
{
	kept k = {.n = 0};
	const int before = 1 + 2; /* dense's check, two warm-ups */

	memset(&script, 0, sizeof script);
	script.cost[MK_KERNEL_DENSE] = 1;
	script.cost[MK_KERNEL_BLOCK] = 0.5;
	script.slow = 10;
	script.slow_from = before;
	script.slow_to = before + 21; /* dense of repetitions 0..10, block of 0..9 */
	ck_assert_int_eq(script_sweep(5, 20, 20, 0, &k), MK_OK);
	ck_assert_int_eq(script.calls, before + 2 * 20 * 2);
	ck_assert(k.rows[1].remeasured && k.rows[1].agree && k.rows[1].rank_ok);
	ck_assert(k.rows[1].speedup == 2 && k.rows[1].reps == 20);
}
END_TEST

/* Three points; while the second runs, dense is twice as slow and block is
 * not (a machine in another state: the speed-up moves with it).  Its dense
 * median is 100% off the run's baseline (the median over the points, 4), so
 * it is measured again once the others are done: its rows then say 4x, as
 * the others do, and remeasured. */
START_TEST(test_run_rebases_off_points)
{
	static const double targets[] = {0.3, 0.5, 0.7};
	const int per_point = 2 + 2 * 6; /* warm-ups, six repetitions of two kernels */
	kept k = {.n = 0};

	memset(&script, 0, sizeof script);
	script.cost[MK_KERNEL_DENSE] = 4;
	script.cost[MK_KERNEL_BLOCK] = 1;
	script.slow = 2;
	script.slowby[MK_KERNEL_BLOCK] = 1;
	script.slow_from = 1 + per_point;
	script.slow_to = 1 + 2 * per_point;
	ck_assert_int_eq(script_sweep_at(targets, 3, 5, 6, 6, 0, &k), MK_OK);
	ck_assert_int_eq(k.n, 6);
	ck_assert_int_eq(script.calls, 1 + 4 * per_point);
	for (int r = 0; r < 6; r++) {
		ck_assert(k.rows[r].dense_s == 4);
		ck_assert(k.rows[r].speedup == (k.rows[r].kernel == MK_KERNEL_BLOCK ? 4 : 1));
		ck_assert(k.rows[r].remeasured == (r / 2 == 1));
	}
}
END_TEST

static Suite *sweep_timing_suite(void)
{
	Suite *s = suite_create("sweep_timing");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_quartiles_by_hand);
	tcase_add_test(tc, test_median_ci_by_hand);
	tcase_add_test(tc, test_median_ci_covers);
	tcase_add_test(tc, test_paired_speedup_by_hand);
	tcase_add_test(tc, test_paired_speedup_cancels_disturbance);
	tcase_add_test(tc, test_overlap_rule);
	tcase_add_test(tc, test_point_stats_flags);
	tcase_add_test(tc, test_point_stats_disagree);
	tcase_add_test(tc, test_row_fill);
	tcase_add_test(tc, test_baseline);
	tcase_add_test(tc, test_run_interleaves);
	tcase_add_test(tc, test_run_adapts_to_time);
	tcase_add_test(tc, test_run_settled_kernels_leave);
	tcase_add_test(tc, test_run_remeasures);
	tcase_add_test(tc, test_run_rebases_off_points);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return mk_test_main(sweep_timing_suite());
}
