/* Unit tests of the attention engine: every CPU kernel under every
 * normalisation against a naive double-precision reference, Ding et al.'s
 * DNAS properties, Sinkhorn convergence, empty rows.  The API's parsing,
 * backends and errors: check_attn_api.c. */
#include "config.h"
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "maskkit.h"
#include "testutil.h"
#include "attntest.h"

#define TOL 1e-5

/* Rows 0, 17, 63, 64, 99 and column 50 empty (n = 100). */
#define EMPTY_ROWS "local2 - axis(rows=0,17,63,64,99, cols=50)"

/* A mask expression, or "@random" (6% of cells). */
typedef struct mcase {
	const char *expr;
	int64_t n, d;
} mcase;

static const mcase mcases[] = {
	{"full", 100, 16}, {"diag", 100, 32}, {"local3", 100, 16},
	{"global1", 100, 32}, /* row 0 and column 0 only */
	{EMPTY_ROWS, 100, 16}, {"@random", 150, 32}, {"causal", 64, 16},
	{"local4 + random3", 200, 32}, {"full", 1, 16}, {"none", 1, 16}, {"local1", 37, 32},
};
#define NCASES ((int)(sizeof mcases / sizeof mcases[0]))
static const mcase dense_cases[] = {{"full", 1, 16}, {"full", 37, 32}, {"full", 100, 16},
				    {"full", 130, 32}};

static mk_mask *mcase_mask(const mcase *c)
{
	if (!strcmp(c->expr, "@random"))
		return mk_test_random_mask(c->n, 0x5eed, 6);
	return build(c->expr, c->n, 7);
}

static int64_t count_empty_rows(const mk_mask *m)
{
	int64_t e = 0;
	for (int64_t i = 0; i < mk_mask_n(m); i++)
		e += mk_bits_count(mk_mask_crow(m, i), mk_mask_stride(m)) == 0;
	return e;
}

/* ---- the reference -------------------------------------------------------- */

/* LSE of x[0..cnt) skipping -inf (entries off the mask); -inf when none. */
static double lse(const double *x, int64_t cnt)
{
	double mx = -INFINITY, sum = 0.0;
	for (int64_t i = 0; i < cnt; i++)
		mx = x[i] > mx ? x[i] : mx;
	for (int64_t i = 0; i < cnt && !isinf(mx); i++)
		sum += isinf(x[i]) ? 0.0 : exp(x[i] - mx);
	return isinf(mx) ? mx : mx + log(sum);
}

/* pi = exp(s - f - g) after `rounds` column-then-row passes from f = 0, or
 * after one row pass with g = 0 when rounds is 0 (softmax). */
static void ref_scale(const mk_mask *m, const double *s, int64_t n, int rounds, double *pi)
{
	double *f = xcalloc(3 * (size_t)n, sizeof *f), *g = f + n, *tmp = g + n;
	for (int r = 0; r < (rounds ? rounds : 1); r++) {
		for (int64_t j = 0; rounds && j < n; j++) {
			for (int64_t i = 0; i < n; i++)
				tmp[i] = mk_mask_test(m, i, j) ? s[i * n + j] - f[i] : -INFINITY;
			g[j] = lse(tmp, n);
		}
		for (int64_t i = 0; i < n; i++) {
			for (int64_t j = 0; j < n; j++)
				tmp[j] = mk_mask_test(m, i, j) ? s[i * n + j] - g[j] : -INFINITY;
			f[i] = lse(tmp, n);
		}
	}
	for (int64_t i = 0; i < n; i++)
		for (int64_t j = 0; j < n; j++)
			pi[i * n + j] = mk_mask_test(m, i, j) ? exp(s[i * n + j] - f[i] - g[j]) : 0.0;
	free(f);
}

/* The attention matrix of one slice (q, k are n x d) under norm. */
static void ref_pi(const mk_mask *m, int64_t n, int64_t d, const float *q, const float *k,
		   const mk_norm *norm, double *pi)
{
	double *s = xcalloc((size_t)(n * n), sizeof *s), *soft;
	for (int64_t i = 0; i < n; i++)
		for (int64_t j = 0; j < n; j++) {
			double acc = 0.0;
			for (int64_t c = 0; c < d; c++)
				acc += (double)q[i * d + c] * (double)k[j * d + c];
			s[i * n + j] = acc / sqrt((double)d);
		}
	switch (norm->kind) {
	case MK_NORM_SOFTMAX: ref_scale(m, s, n, 0, pi); break;
	case MK_NORM_DNAS: ref_scale(m, s, n, 1, pi); break;
	case MK_NORM_SINKHORN: ref_scale(m, s, n, norm->iters, pi); break;
	case MK_NORM_HNAS:
		soft = xcalloc((size_t)(n * n), sizeof *soft);
		ref_scale(m, s, n, 0, soft);
		ref_scale(m, s, n, 1, pi);
		for (int64_t x = 0; x < n * n; x++)
			pi[x] = norm->u * pi[x] + (1.0 - norm->u) * soft[x];
		free(soft);
		break;
	}
	free(s);
}

/* The whole reference output: O = pi V for every (batch, head) slice. */
static double *ref_output(const mk_mask *m, const tdata *t, const mk_norm *norm)
{
	int64_t n = t->s.n, d = t->s.d;
	size_t sl = (size_t)(n * d);
	double *o = xcalloc(t->len, sizeof *o), *pi = xcalloc((size_t)(n * n), sizeof *pi);
	for (int64_t bh = 0; bh < t->s.batch * t->s.heads; bh++) {
		ref_pi(m, n, d, t->q + bh * sl, t->k + bh * sl, norm, pi);
		for (int64_t i = 0; i < n; i++)
			for (int64_t j = 0; j < n; j++)
				for (int64_t c = 0; c < d && pi[i * n + j] != 0.0; c++)
					o[bh * sl + i * d + c] += pi[i * n + j] * t->v[bh * sl + j * d + c];
	}
	free(pi);
	return o;
}

/* ---- running the engine ---------------------------------------------------- */

static void run_ok(mk_attn_kernel kern, const mk_norm *norm, tdata *t, const mk_attn_layout *l,
		   mk_attn_stats *st)
{
	for (size_t i = 0; i < t->len; i++)
		t->o[i] = 1e30f;
	ck_assert_msg(mk_attn_run(cpu(), kern, norm, &t->s, t->q, t->k, t->v, l, t->o, st) == MK_OK,
		      "%s: %s", mk_attn_kernel_name(kern), mk_error());
}

/* Every output element within TOL of the reference (and finite). */
static void expect_close(const tdata *t, const double *ref, const char *what)
{
	size_t worst = 0;
	double err = 0.0;
	for (size_t i = 0; i < t->len; i++) {
		double e = isfinite(t->o[i]) ? fabs((double)t->o[i] - ref[i]) : INFINITY;
		if (e > err) {
			err = e;
			worst = i;
		}
	}
	ck_assert_msg(err <= TOL, "%s: o[%zu] = %.8g, reference %.8g (error %.3g)", what, worst,
		      (double)t->o[worst], ref[worst], err);
}

/* Runs kern on mask case c under every norm, at tiles 16, 32 and 64 (the
 * dense kernel once, without a mask). */
static void check_kernel_case(mk_attn_kernel kern, const mcase *c)
{
	static const int64_t tiles[] = {16, 32, 48, 64}; /* 48: not one word per row */
	mk_mask *m = mcase_mask(c);
	tdata t = tdata_new(2, 3, c->n, c->d, 0x1234 + (uint64_t)c->n);
	char what[160];
	for (int k = 0; k < NNORMS; k++) {
		double *ref = ref_output(m, &t, &ncases[k].norm);
		for (int ti = 0; ti < (kern == MK_KERNEL_DENSE ? 1 : 3); ti++) {
			mk_attn_layout *l = kern == MK_KERNEL_DENSE ? NULL : layout(m, tiles[ti]);
			mk_attn_stats st = {-1};
			run_ok(kern, &ncases[k].norm, &t, l, &st);
			snprintf(what, sizeof what, "%s, %s, '%s' n=%lld d=%lld, tile %lld",
				 mk_attn_kernel_name(kern), ncases[k].text, c->expr, (long long)c->n,
				 (long long)c->d, (long long)tiles[ti]);
			expect_close(&t, ref, what);
			ck_assert_int_eq(st.empty_rows, count_empty_rows(m));
			mk_attn_layout_free(l);
		}
		free(ref);
	}
	free(t.q);
	mk_mask_free(m);
}

/* _i runs over (masked, block, csr) x mcases, then the dense kernel, which
 * takes no mask, over dense_cases. */
START_TEST(kernels_match_reference)
{
	if (_i < 3 * NCASES)
		check_kernel_case((mk_attn_kernel)(MK_KERNEL_MASKED + _i / NCASES),
				  &mcases[_i % NCASES]);
	else
		check_kernel_case(MK_KERNEL_DENSE, &dense_cases[_i - 3 * NCASES]);
}
END_TEST

/* Every sparse kernel under every norm: st.empty_rows counts the rows with no
 * entry, and their outputs are exactly zero (not NaN, not left unwritten). */
static void check_empty_rows(const mk_mask *m, int64_t want_empty)
{
	int64_t n = mk_mask_n(m), d = 16;
	mk_attn_layout *l = layout(m, 32);
	tdata t = tdata_new(2, 3, n, d, 5);
	ck_assert_int_eq(count_empty_rows(m), want_empty);
	for (int kern = MK_KERNEL_MASKED; kern < MK_KERNEL_COUNT; kern++)
		for (int k = 0; k < NNORMS; k++) {
			mk_attn_stats st = {-1};
			run_ok((mk_attn_kernel)kern, &ncases[k].norm, &t, l, &st);
			ck_assert_int_eq(st.empty_rows, want_empty);
			for (size_t x = 0; x < t.len; x++) {
				int64_t i = (int64_t)(x / (size_t)d) % n;
				if (t.o[x] != 0.0f && !mk_bits_count(mk_mask_crow(m, i), mk_mask_stride(m)))
					ck_abort_msg("%s %s: empty row %lld: %g",
						     mk_attn_kernel_name((mk_attn_kernel)kern),
						     ncases[k].text, (long long)i, (double)t.o[x]);
			}
		}
	mk_attn_layout_free(l);
	free(t.q);
}

/* _i = 0: five empty rows and an empty column; 1: the empty mask. */
START_TEST(empty_rows_are_zero)
{
	mk_mask *m = build(_i ? "none" : EMPTY_ROWS, _i ? 40 : 100, 0);
	check_empty_rows(m, _i ? 40 : 5);
	mk_mask_free(m);
}
END_TEST

/* ---- Ding et al.'s properties ---------------------------------------------- */

/* Theorem 2: after the column pass each column of a sums to 1 and each row of
 * a sums to at most n, so every column of pi with an entry keeps >= 1/n.
 * Rows with an entry sum to 1; nothing lies off the mask. */
static void expect_dnas_properties(const double *pi, const mk_mask *m, int64_t n, double tol,
				   const char *what)
{
	for (int64_t a = 0; a < n; a++) {
		double r = 0.0, c = 0.0;
		bool rany = false, cany = false;
		for (int64_t b = 0; b < n; b++) {
			r += pi[a * n + b];
			c += pi[b * n + a];
			rany = rany || mk_mask_test(m, a, b);
			cany = cany || mk_mask_test(m, b, a);
			if (!mk_mask_test(m, a, b) && pi[a * n + b] != 0.0)
				ck_abort_msg("%s: pi[%lld][%lld] = %g off the mask", what, (long long)a,
					     (long long)b, pi[a * n + b]);
		}
		ck_assert_msg(fabs(r - (rany ? 1.0 : 0.0)) <= tol, "%s: row %lld sums to %.9g", what,
			      (long long)a, r);
		ck_assert_msg(!cany || c >= 1.0 / (double)n - tol, "%s: column %lld has %.9g < 1/%lld",
			      what, (long long)a, c, (long long)n);
	}
}

/* A sparse mask whose rows and columns have very different counts: about 8
 * keys per query, but query 3 sees every key and key 7 every query. */
#define DNAS_MASK "random4 + axis(rows=3, cols=7)"

START_TEST(dnas_reference_properties)
{
	const int64_t n = 60, d = 16;
	mk_mask *m = build(DNAS_MASK, n, 5);
	tdata t = tdata_new(1, 1, n, d, 21);
	double *pi = xcalloc((size_t)(n * n), sizeof *pi);
	for (size_t x = 0; x < t.len; x++)
		t.q[x] *= 3.0f; /* peaked scores make explaining away strong */
	ref_pi(m, n, d, t.q, t.k, &ncases[1].norm, pi);
	expect_dnas_properties(pi, m, n, 1e-12, "reference");
	free(pi);
	free(t.q);
	mk_mask_free(m);
}
END_TEST

/* With V = I the engine's output is pi itself. */
static double *engine_pi(mk_attn_kernel kern, const mk_norm *norm, const mk_mask *m,
			 int64_t n, uint64_t seed, float qscale)
{
	tdata t = tdata_new(1, 1, n, n, seed);
	mk_attn_layout *l = m ? layout(m, 16) : NULL;
	mk_attn_stats st;
	double *pi = xcalloc(t.len, sizeof *pi);
	for (size_t x = 0; x < t.len; x++) {
		t.q[x] *= qscale;
		t.v[x] = x / (size_t)n == x % (size_t)n ? 1.0f : 0.0f; /* V = I: O = pi */
	}
	run_ok(kern, norm, &t, l, &st);
	for (size_t x = 0; x < t.len; x++)
		pi[x] = t.o[x];
	mk_attn_layout_free(l);
	free(t.q);
	return pi;
}

START_TEST(dnas_engine_properties)
{
	int64_t mx = cpu()->max_head_dim, n = mx < 48 ? mx : 48;
	mk_mask *m = build(DNAS_MASK, n, 5);
	for (int kern = MK_KERNEL_MASKED; kern < MK_KERNEL_COUNT; kern++) {
		double *pi = engine_pi((mk_attn_kernel)kern, &ncases[1].norm, m, n, 21, 3.0f);
		expect_dnas_properties(pi, m, n, 1e-5, mk_attn_kernel_name((mk_attn_kernel)kern));
		free(pi);
	}
	mk_mask_free(m);
}
END_TEST

/* Sinkhorn on a full mask converges to a doubly-stochastic matrix. */
START_TEST(sinkhorn_is_doubly_stochastic)
{
	int64_t mx = cpu()->max_head_dim, n = mx < 32 ? mx : 32;
	mk_norm norm = {.kind = MK_NORM_SINKHORN, .iters = 200};
	mk_mask *m = build("full", n, 0);
	for (int kern = MK_KERNEL_DENSE; kern < MK_KERNEL_COUNT; kern++) {
		double *pi = engine_pi((mk_attn_kernel)kern, &norm, kern ? m : NULL, n, 8, 1.0f);
		for (int64_t a = 0; a < n; a++) {
			double r = 0.0, c = 0.0;
			for (int64_t b = 0; b < n; b++) {
				r += pi[a * n + b];
				c += pi[b * n + a];
			}
			ck_assert_msg(fabs(r - 1.0) <= 1e-4 && fabs(c - 1.0) <= 1e-4,
				      "%s: row %lld sums to %.7g, column to %.7g",
				      mk_attn_kernel_name((mk_attn_kernel)kern), (long long)a, r, c);
		}
		free(pi);
	}
	mk_mask_free(m);
}
END_TEST

static Suite *attn_suite(void)
{
	Suite *s = suite_create("attn");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, kernels_match_reference, 0, 3 * NCASES + 4);
	tcase_add_loop_test(tc, empty_rows_are_zero, 0, 2);
	tcase_add_test(tc, dnas_reference_properties);
	tcase_add_test(tc, dnas_engine_properties);
	tcase_add_test(tc, sinkhorn_is_doubly_stochastic);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return mk_test_main(attn_suite());
}
