/* Unit tests for the column sums of explaining away (src/attn/colsum.c,
 * analysis/explain.c, src/io/explain_input.c): closed forms on separable
 * scores, Theorem 2's bound on random, masked and adversarial inputs, hnas
 * at its ends, agreement with the engine's own pi, the Sinkhorn trace. */
#include <math.h>
#include <string.h>
#include "testutil.h"

static const mk_norm softmax = {.kind = MK_NORM_SOFTMAX};
static const mk_norm dnas = {.kind = MK_NORM_DNAS};

/* Values in [-1, 1) from a 64-bit LCG (independent of rng.c). */
static float lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return (float)((double)(*s >> 11) * 0x1p-52 - 1.0);
}

static float *randn(int64_t count, uint64_t seed, float scale)
{
	float *x = malloc((size_t)count * sizeof *x);
	ck_assert_ptr_nonnull(x);
	for (int64_t e = 0; e < count; e++)
		x[e] = scale * lcg(&seed);
	return x;
}

static double *colsums(const mk_norm *norm, int64_t n, int64_t d, const float *q,
		       const float *k, const mk_attn_layout *l)
{
	double *c = malloc((size_t)n * sizeof *c);
	ck_assert_ptr_nonnull(c);
	ck_assert_msg(mk_attn_colsums(norm, n, d, q, k, l, c, NULL) == MK_OK, "%s", mk_error());
	return c;
}

static mk_attn_layout *layout_of(const char *expr, int64_t n, mk_mask **keep)
{
	mk_expr *e;
	mk_mask *m;
	mk_attn_layout *l;
	mk_bind_opts b = {.n = n};

	ck_assert_int_eq(mk_expr_parse(expr, &e), MK_OK);
	ck_assert_msg(mk_expr_bind(e, &b) == MK_OK, "%s", mk_error());
	ck_assert_int_eq(mk_expr_to_mask(e, &m), MK_OK);
	ck_assert_int_eq(mk_attn_layout_new(m, 16, 0, &l), MK_OK);
	mk_expr_free(e);
	if (keep)
		*keep = m;
	else
		mk_mask_free(m);
	return l;
}

/* Scores s_ij = a_i + b_j: q_i = sqrt(2) (a_i, 1), k_j = (1, b_j) / ... with
 * d = 2, q.k / sqrt(2) = a_i + b_j. */
static void separable(int64_t n, const double *a, const double *b, float *q, float *k)
{
	for (int64_t i = 0; i < n; i++) {
		q[2 * i] = (float)(sqrt(2.0) * a[i]);
		q[2 * i + 1] = (float)sqrt(2.0);
		k[2 * i] = 1.0f;
		k[2 * i + 1] = (float)b[i];
	}
}

/* Separable scores: softmax's column j sums to S softmax(b)_j whatever a is,
 * and one Sinkhorn round already makes every column sum 1. */
START_TEST(test_separable_closed_form)
{
	const int64_t n = 40;
	double a[40], b[40], lse = -INFINITY;
	float q[80], k[80];
	uint64_t s = 7;

	for (int64_t i = 0; i < n; i++) {
		a[i] = 3 * lcg(&s);
		b[i] = 4 * lcg(&s);
	}
	for (int64_t j = 0; j < n; j++)
		lse = fmax(lse, b[j]) + log1p(exp(-fabs(lse - b[j])));
	separable(n, a, b, q, k);
	for (int masked = 0; masked < 2; masked++) {
		mk_attn_layout *l = masked ? layout_of("full", n, NULL) : NULL;
		double *u = colsums(&softmax, n, 2, q, k, l), *dn = colsums(&dnas, n, 2, q, k, l);
		for (int64_t j = 0; j < n; j++) {
			double want = log((double)n) + (double)(float)b[j] - lse;
			ck_assert_msg(fabs(u[j] - want) <= 2e-5, "softmax column %lld: %.9g, closed "
				      "form %.9g", (long long)j, u[j], want);
			ck_assert_msg(fabs(dn[j]) <= 2e-5, "dnas column %lld: log sum %.9g",
				      (long long)j, dn[j]);
		}
		free(u);
		free(dn);
		mk_attn_layout_free(l);
	}
}
END_TEST

/* The smallest log column sum; every column of these masks has an entry,
 * so each must be finite. */
static double min_of(const double *x, int64_t n)
{
	double m = INFINITY;
	for (int64_t j = 0; j < n; j++) {
		ck_assert_msg(isfinite(x[j]), "column %lld: log sum %g", (long long)j, x[j]);
		m = fmin(m, x[j]);
	}
	return m;
}

/* Theorem 2 on random inputs, full and masked, for dnas and sinkhorn:K. */
START_TEST(test_bound_random)
{
	static const char *const masks[] = {NULL, "local(w=5)", "bigbird(w=3,g=2,r=2)",
					    "random4 + axis(rows=3, cols=7)", "causal"};
	static const float scales[] = {1, 4, 8};
	const mk_norm norms[] = {dnas, {.kind = MK_NORM_SINKHORN, .iters = 3}};
	const int64_t n = 97, d = 16;

	for (size_t mi = 0; mi < sizeof masks / sizeof *masks; mi++)
		for (size_t si = 0; si < 3; si++) {
			mk_attn_layout *l = masks[mi] ? layout_of(masks[mi], n, NULL) : NULL;
			float *q = randn(n * d, 11 + si, scales[si]), *k = randn(n * d, 99, scales[si]);
			for (size_t ni = 0; ni < 2; ni++) {
				double *c = colsums(&norms[ni], n, d, q, k, l);
				ck_assert_msg(min_of(c, n) >= -log((double)n) - 1e-5, "%s, scale %g, "
					      "norm %d: min column sum %.9g < 1/%lld",
					      masks[mi] ? masks[mi] : "full", scales[si], (int)ni,
					      exp(min_of(c, n)), (long long)n);
				free(c);
			}
			free(q);
			free(k);
			mk_attn_layout_free(l);
		}
}
END_TEST

/* One key every query prefers by far: softmax explains every other key
 * away, dnas keeps each at 1/S or more. */
START_TEST(test_bound_adversarial)
{
	const int64_t n = 64, d = 8;
	float *q = randn(n * d, 3, 0.1f), *k = randn(n * d, 4, 0.1f);
	mk_explain_opts o = {.norms = (mk_norm[]){softmax, dnas}, .nnorms = 2, .eps = 1e-8,
			     .bins = 10};
	mk_explain e;

	for (int64_t i = 0; i < n; i++)
		q[i * d] = 10.0f;
	k[0] = 10.0f; /* key 0: score 100 / sqrt(8) = 35 above the rest */
	ck_assert_msg(mk_explain_run(&o, 1, n, d, q, k, NULL, &e) == MK_OK, "%s", mk_error());
	ck_assert_int_eq(e.stat[0].away, n - 1);
	ck_assert_double_ge(e.log10[0], log10((double)n) - 1e-4); /* key 0 takes it all */
	ck_assert_int_eq(e.stat[2].away, 0);
	ck_assert_double_ge(e.stat[2].min, -log10((double)n) - 1e-5);
	mk_explain_release(&e);
	free(q);
	free(k);
}
END_TEST

/* hnas:0 is softmax and hnas:1 dnas exactly; between, sums mix linearly. */
START_TEST(test_hnas_ends)
{
	const int64_t n = 50, d = 8;
	float *q = randn(n * d, 5, 3), *k = randn(n * d, 6, 3);
	mk_attn_layout *l = _i ? layout_of("local(w=4) + global(g=1)", n, NULL) : NULL;
	mk_norm h0 = {.kind = MK_NORM_HNAS, .u = 0}, h1 = {.kind = MK_NORM_HNAS, .u = 1};
	mk_norm h3 = {.kind = MK_NORM_HNAS, .u = 0.3};
	double *u = colsums(&softmax, n, d, q, k, l), *dn = colsums(&dnas, n, d, q, k, l);
	double *a = colsums(&h0, n, d, q, k, l), *b = colsums(&h1, n, d, q, k, l);
	double *c = colsums(&h3, n, d, q, k, l);

	for (int64_t j = 0; j < n; j++) {
		double want = log(0.3 * exp(dn[j]) + 0.7 * exp(u[j]));
		ck_assert_double_eq(a[j], u[j]);
		ck_assert_double_eq(b[j], dn[j]);
		ck_assert_double_eq_tol(c[j], want, 1e-12);
	}
	free(u), free(dn), free(a), free(b), free(c);
	free(q);
	free(k);
	mk_attn_layout_free(l);
}
END_TEST

/* With V = I the engine's output is pi: its column sums must be what the
 * column passes give, and nothing may lie outside the mask. */
START_TEST(test_engine_agrees)
{
	static const char *const masks[] = {"local(w=3) + axis(cols=5)", "random(size=5)"};
	const mk_norm norms[] = {softmax, dnas, {.kind = MK_NORM_HNAS, .u = 0.5},
				 {.kind = MK_NORM_SINKHORN, .iters = 4}};
	const int64_t n = 48, d = 48;
	const mk_attn_backend *cpu = mk_attn_backend_get("cpu");
	mk_attn_shape sh = {1, 1, n, n, 0};
	float *q = randn(n * d, 8, 2), *k = randn(n * d, 9, 2), *v = calloc((size_t)(n * n), 4);
	float *o = malloc((size_t)(n * n) * sizeof *o);

	for (int64_t i = 0; i < n; i++)
		v[i * n + i] = 1.0f;
	for (size_t mi = 0; mi < 2; mi++) {
		mk_mask *m;
		mk_attn_layout *l = layout_of(masks[mi], n, &m);
		for (size_t ni = 0; ni < 4; ni++) {
			double *c = colsums(&norms[ni], n, d, q, k, l);
			for (int kern = MK_KERNEL_MASKED; kern < MK_KERNEL_COUNT; kern++) {
				mk_attn_stats st;
				ck_assert_int_eq(mk_attn_run(cpu, (mk_attn_kernel)kern, &norms[ni], &sh,
							     q, k, v, l, o, &st), MK_OK);
				for (int64_t j = 0; j < n; j++) {
					double sum = 0;
					for (int64_t i = 0; i < n; i++) {
						ck_assert(mk_mask_test(m, i, j) || o[i * n + j] == 0.0f);
						sum += o[i * n + j];
					}
					ck_assert_msg(sum == 0 ? isinf(c[j]) && c[j] < 0
							       : fabs(log(sum) - c[j]) <= 1e-4,
						      "%s %s norm %zu column %lld: engine %.9g, "
						      "column pass %.9g", masks[mi],
						      mk_attn_kernel_name((mk_attn_kernel)kern), ni,
						      (long long)j, sum, exp(c[j]));
				}
			}
			free(c);
		}
		mk_attn_layout_free(l);
		mk_mask_free(m);
	}
	free(q), free(k), free(v), free(o);
}
END_TEST

/* A key no query may see has no column sum (-inf) and counts as empty,
 * never as explained away. */
START_TEST(test_empty_column)
{
	const int64_t n = 20, d = 4;
	float *q = randn(n * d, 1, 1), *k = randn(n * d, 2, 1);
	mk_explain_opts o = {.norms = (mk_norm[]){softmax, dnas}, .nnorms = 2, .eps = 1e-8,
			     .bins = 5};
	mk_mask *m;
	mk_attn_layout *l = layout_of("causal", n, &m);
	mk_explain e;

	mk_attn_layout_free(l);
	for (int64_t i = 0; i < n; i++)
		mk_mask_set(m, i, n - 1, false); /* key n-1: only query n-1 saw it */
	ck_assert_int_eq(mk_attn_layout_new(m, 8, 0, &l), MK_OK);
	ck_assert_int_eq(mk_explain_run(&o, 1, n, d, q, k, l, &e), MK_OK);
	for (int a = 0; a < 2; a++) {
		const mk_explain_stat *st = &e.stat[a * 2];
		ck_assert_int_eq(st->empty, 1);
		ck_assert_int_eq(st->keys, n - 1);
		ck_assert(isinf(e.log10[(size_t)a * (size_t)n + (size_t)(n - 1)]));
	}
	mk_explain_release(&e);
	mk_attn_layout_free(l);
	mk_mask_free(m);
	free(q), free(k);
}
END_TEST

/* Separable scores: one round is exact (both residuals ~0); random scores:
 * the column residual falls round after round. */
START_TEST(test_sinkhorn_trace)
{
	const int64_t n = 64, d = 16;
	double a[64], b[64];
	float q2[128], k2[128], *q = randn(n * d, 12, 3), *k = randn(n * d, 13, 3);
	mk_sinkhorn_step tr[40];
	mk_norm sk = {.kind = MK_NORM_SINKHORN, .iters = 40};
	double *c = malloc((size_t)n * sizeof *c);
	uint64_t s = 3;

	for (int64_t i = 0; i < n; i++) {
		a[i] = 2 * lcg(&s);
		b[i] = 2 * lcg(&s);
	}
	separable(n, a, b, q2, k2);
	ck_assert_int_eq(mk_attn_colsums(&sk, n, 2, q2, k2, NULL, c, tr), MK_OK);
	ck_assert_double_le(tr[0].col_max, 1e-5);
	ck_assert_double_le(tr[1].row_max, 1e-5);
	ck_assert_double_gt(tr[0].row_max, 0.1); /* before the first row scaling */
	ck_assert_int_eq(mk_attn_colsums(&sk, n, d, q, k, NULL, c, tr), MK_OK);
	ck_assert_double_gt(tr[0].col_max, 0.05);
	for (int r = 1; r < 40; r++)
		ck_assert_msg(tr[r].col_max <= tr[r - 1].col_max * 1.0001 + 1e-6,
			      "round %d: %.6g after %.6g", r + 1, tr[r].col_max, tr[r - 1].col_max);
	ck_assert_double_le(tr[39].col_max, tr[0].col_max / 10);
	free(c), free(q), free(k);
}
END_TEST

/* Quartiles are numpy's linear ones; the histogram holds every key. */
START_TEST(test_stats_and_histogram)
{
	const int64_t n = 30, d = 2;
	double a[30], b[30], sorted[30];
	float q[60], k[60];
	uint64_t s = 9;
	mk_explain_opts o = {.norms = &softmax, .nnorms = 1, .eps = 1e-3, .bins = 7};
	mk_explain e;
	int64_t total = 0;

	for (int64_t i = 0; i < n; i++) {
		a[i] = lcg(&s);
		b[i] = 6 * lcg(&s);
	}
	separable(n, a, b, q, k);
	ck_assert_int_eq(mk_explain_run(&o, 1, n, d, q, k, NULL, &e), MK_OK);
	memcpy(sorted, e.log10, sizeof sorted);
	for (int x = 0; x < 30; x++) /* insertion sort: independent of qsort */
		for (int y = x; y > 0 && sorted[y] < sorted[y - 1]; y--) {
			double t = sorted[y];
			sorted[y] = sorted[y - 1];
			sorted[y - 1] = t;
		}
	ck_assert_double_eq(e.stat[0].min, sorted[0]);
	ck_assert_double_eq(e.stat[0].max, sorted[29]);
	ck_assert_double_eq_tol(e.stat[0].q1, sorted[7] + 0.25 * (sorted[8] - sorted[7]), 1e-15);
	ck_assert_double_eq_tol(e.stat[0].median, (sorted[14] + sorted[15]) / 2, 1e-15);
	ck_assert_double_eq_tol(e.stat[0].q3, sorted[21] + 0.75 * (sorted[22] - sorted[21]), 1e-15);
	for (int x = 0, away = 0; x <= 30; x++)
		if (x == 30)
			ck_assert_int_eq(e.stat[0].away, away);
		else
			away += sorted[x] < -3;
	for (int bin = 0; bin < 7; bin++)
		total += e.hist[bin];
	ck_assert_int_eq(total, n);
	ck_assert_double_le(e.lo, fmin(sorted[0], -3));
	ck_assert_double_ge(e.lo + 7 * e.width, sorted[29]);
	mk_explain_release(&e);
}
END_TEST

START_TEST(test_errors)
{
	float q[8] = {0}, k[8] = {0};
	mk_norm bad_u = {.kind = MK_NORM_HNAS, .u = 1.5};
	mk_explain_opts o = {.norms = &softmax, .nnorms = 1, .eps = 1e-8, .bins = 10};
	mk_explain e;
	mk_tensor a = {0}, b = {0};
	mk_qk qk;

	ck_assert_int_eq(mk_explain_run(&o, 1, 1, 8, q, k, NULL, &e), MK_EINVAL);
	ck_assert_ptr_nonnull(strstr(mk_error(), "2 or more"));
	o.eps = 0;
	ck_assert_int_eq(mk_explain_run(&o, 1, 4, 2, q, k, NULL, &e), MK_EINVAL);
	o.eps = 1e-8;
	o.bins = 0;
	ck_assert_int_eq(mk_explain_run(&o, 1, 4, 2, q, k, NULL, &e), MK_EINVAL);
	ck_assert_int_eq(mk_norm_parse("hnas:1.5", &bad_u), MK_EINVAL);
	ck_assert_int_eq(mk_norm_parse("sinkhorn:0", &bad_u), MK_EINVAL);
	ck_assert_int_eq(mk_tensor_new(2, (int64_t[]){4, 2}, MK_DTYPE_F32, 0, "q", &a), MK_OK);
	ck_assert_int_eq(mk_tensor_new(2, (int64_t[]){4, 3}, MK_DTYPE_F32, 0, "k", &b), MK_OK);
	ck_assert_int_eq(mk_qk_adopt(&a, &b, &qk), MK_EINVAL);
	ck_assert_ptr_nonnull(strstr(mk_error(), "(4, 2)"));
	ck_assert_ptr_null(a.data);
	ck_assert_ptr_null(b.data);
	ck_assert_int_eq(mk_qk_random(1, 4, 2, -1, 0, 0, &qk), MK_EINVAL);
}
END_TEST

/* The library refuses what the parser would: no garbage from a bad norm. */
START_TEST(test_norm_checked)
{
	float q[16] = {0}, k[16] = {0};
	double c[8];
	const mk_norm bad[] = {{.kind = MK_NORM_SINKHORN, .iters = 0},
			       {.kind = MK_NORM_HNAS, .u = 1.5}, {.kind = MK_NORM_HNAS, .u = NAN},
			       {.kind = (mk_norm_kind)42}};
	mk_explain_opts o = {.norms = (mk_norm[]){softmax, softmax}, .nnorms = 2, .eps = 1e-8,
			     .bins = 4};
	mk_explain e;

	for (size_t x = 0; x < sizeof bad / sizeof *bad; x++)
		ck_assert_int_eq(mk_attn_colsums(&bad[x], 8, 2, q, k, NULL, c, NULL), MK_EINVAL);
	ck_assert_int_eq(mk_explain_run(&o, 1, 8, 2, q, k, NULL, &e), MK_EINVAL);
	ck_assert_ptr_nonnull(strstr(mk_error(), "twice"));
	o.nnorms = 1;
	o.trace = 1001;
	ck_assert_int_eq(mk_explain_run(&o, 1, 8, 2, q, k, NULL, &e), MK_EINVAL);
}
END_TEST

/* explain and attn refuse the same inputs under every norm: the limit on
 * the scores is one (Q = K = c in every entry, n = 8; attn's dense kernel
 * used to answer for scores of 1e38 that explain refused). */
START_TEST(test_refuses_as_engine)
{
	static const float cs[] = {1e18f, 3e18f, 1e19f, 1e20f};
	static const int64_t ds[] = {1, 16};
	const mk_norm norms[] = {softmax, dnas, {.kind = MK_NORM_SINKHORN, .iters = 3},
				 {.kind = MK_NORM_HNAS, .u = 0.5}};
	const mk_attn_backend *cpu = mk_attn_backend_get("cpu");
	float q[8 * 16], v[8 * 16], o[8 * 16];
	double c[8];

	ck_assert_ptr_nonnull(cpu);
	for (size_t di = 0; di < 2; di++)
		for (size_t ci = 0; ci < 4; ci++)
			for (size_t ni = 0; ni < 4; ni++) {
				mk_attn_shape s = {1, 1, 8, ds[di], 0};
				mk_attn_stats st;
				int a, b;
				for (int x = 0; x < 8 * 16; x++) {
					q[x] = cs[ci];
					v[x] = (float)x;
				}
				a = mk_attn_colsums(&norms[ni], 8, ds[di], q, q, NULL, c, NULL);
				b = mk_attn_run(cpu, MK_KERNEL_DENSE, &norms[ni], &s, q, q, v, NULL, o,
						&st);
				ck_assert_msg(a == b && (a == MK_OK || a == MK_ERANGE),
					      "c = %g, d = %lld, norm %zu: explain %d, attn %d",
					      (double)cs[ci], (long long)ds[di], ni, a, b);
			}
}
END_TEST

/* Head h of --random does not depend on how many heads are drawn. */
START_TEST(test_random_heads)
{
	mk_qk one, three;
	ck_assert_int_eq(mk_qk_random(1, 16, 8, 2, 42, 0, &one), MK_OK);
	ck_assert_int_eq(mk_qk_random(3, 16, 8, 2, 42, 0, &three), MK_OK);
	ck_assert_int_eq(three.heads, 3);
	ck_assert(!memcmp(one.q.data, three.q.data, 128 * sizeof(float)));
	ck_assert(!memcmp(one.k.data, three.k.data, 128 * sizeof(float)));
	ck_assert(memcmp(three.q.data, three.q.data + 128, 128 * sizeof(float)));
	mk_qk_release(&one);
	mk_qk_release(&three);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("explain_norm");
	TCase *t = tcase_create("colsums");

	tcase_add_test(t, test_separable_closed_form);
	tcase_add_test(t, test_bound_random);
	tcase_add_test(t, test_bound_adversarial);
	tcase_add_loop_test(t, test_hnas_ends, 0, 2);
	tcase_add_test(t, test_engine_agrees);
	tcase_add_test(t, test_empty_column);
	tcase_add_test(t, test_sinkhorn_trace);
	tcase_add_test(t, test_stats_and_histogram);
	tcase_add_test(t, test_errors);
	tcase_add_test(t, test_random_heads);
	tcase_add_test(t, test_norm_checked);
	tcase_add_test(t, test_refuses_as_engine);
	tcase_set_timeout(t, 60);
	suite_add_tcase(s, t);
	return mk_test_main(s);
}
