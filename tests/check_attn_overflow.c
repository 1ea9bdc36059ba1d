/* Unit tests of the attention engine on scores beyond float32: every CPU
 * kernel under every normalisation refuses the same inputs with MK_ERANGE,
 * before writing anything (the engine's check) and on its own (the
 * backend's guard for direct callers of run); just below the limit every
 * kernel is exact; the reference and the score check itself. */
#include "config.h"
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "maskkit.h"
#include "testutil.h"
#include "attn_backend.h"
#include "attn_ref.h"

#define N 8
#define DMAX 1024
#define SENTINEL 12345.0f

static const mk_norm norms[] = {
	{.kind = MK_NORM_SOFTMAX},
	{.kind = MK_NORM_DNAS},
	{.kind = MK_NORM_SINKHORN, .iters = 3},
	{.kind = MK_NORM_HNAS, .u = 0.5},
};
#define NNORMS 4
#define NCASES (MK_KERNEL_COUNT * NNORMS)

/* Q = K = c in every entry (all scores c^2 sqrt(d), equal), V[j][.] = j,
 * O a sentinel; one (batch, head) of n = N. */
typedef struct ovf {
	mk_attn_shape s;
	float *q, *v, *o;
	mk_mask *full;
	mk_attn_layout *l;
} ovf;

static ovf ovf_new(int64_t d, float c)
{
	ovf t = {.s = {1, 1, N, d}};
	size_t len = (size_t)(N * d);

	t.q = malloc(3 * len * sizeof *t.q);
	ck_assert_ptr_nonnull(t.q);
	t.v = t.q + len;
	t.o = t.v + len;
	for (size_t x = 0; x < len; x++) {
		t.q[x] = c;
		t.v[x] = (float)(x / (size_t)d);
		t.o[x] = SENTINEL;
	}
	ck_assert_int_eq(mk_mask_new(N, 0, &t.full), MK_OK);
	for (int64_t i = 0; i < N; i++)
		for (int64_t j = 0; j < N; j++)
			mk_mask_set(t.full, i, j, true);
	ck_assert_int_eq(mk_attn_layout_new(t.full, 4, 0, &t.l), MK_OK);
	return t;
}

static void ovf_release(ovf *t)
{
	mk_attn_layout_free(t->l);
	mk_mask_free(t->full);
	free(t->q);
}

static const mk_attn_backend *cpu(void)
{
	const mk_attn_backend *b = mk_attn_backend_get("cpu");
	ck_assert_msg(b != NULL, "no cpu backend: %s", mk_error());
	return b;
}

static int ovf_run(const ovf *t, int c, bool direct)
{
	mk_attn_kernel kern = (mk_attn_kernel)(c / NNORMS);
	const mk_attn_layout *l = kern == MK_KERNEL_DENSE ? NULL : t->l;
	mk_attn_stats st;

	mk_error_set(MK_OK, "%s", "");
	if (direct)
		return cpu()->run(cpu(), kern, &norms[c % NNORMS], &t->s, t->q, t->q, t->v, l, t->o,
				  &st, NULL, NULL);
	return mk_attn_run(cpu(), kern, &norms[c % NNORMS], &t->s, t->q, t->q, t->v, l, t->o, &st);
}

static void expect_refused(const ovf *t, int c, bool direct, const char *msg)
{
	char name[32];
	int ret = ovf_run(t, c, direct);

	mk_norm_format(&norms[c % NNORMS], name, sizeof name);
	ck_assert_msg(ret == MK_ERANGE, "%s %s: got %d, o[0] = %g",
		      mk_attn_kernel_name((mk_attn_kernel)(c / NNORMS)), name, ret, (double)t->o[0]);
	ck_assert_msg(strstr(mk_error(), msg), "%s %s: message '%s'",
		      mk_attn_kernel_name((mk_attn_kernel)(c / NNORMS)), name, mk_error());
}

/* Q = K = 1e19, d = 16: scores 4e38.  _i = kernel * NNORMS + norm.  The
 * engine refuses before any kernel runs: O keeps its sentinel. */
START_TEST(run_refuses_overflow)
{
	ovf t = ovf_new(16, 1e19f);

	expect_refused(&t, _i, false, "could reach 4e+38, beyond float32");
	for (int64_t x = 0; x < N * 16; x++)
		ck_assert_float_eq(t.o[x], SENTINEL);
	ovf_release(&t);
}
END_TEST

/* The same through the backend's run slot, past the engine's check: the
 * CPU backend's own guard refuses too (a NaN or +inf scaling used to be
 * read as an empty row, giving zeros). */
START_TEST(backend_refuses_overflow)
{
	ovf t = ovf_new(16, 1e19f);

	expect_refused(&t, _i, true, "overflow float32");
	ovf_release(&t);
}
END_TEST

static void record_done(int64_t done, int64_t slices, void *arg)
{
	(void)slices;
	*(int64_t *)arg = done;
}

/* softmax over three heads as one list (cpu_heads.c), the second head's
 * scores beyond float32, past the engine's check: the run is refused, and
 * the progress it reports never takes in the bad head (a caller would have
 * written it out as final).  _i: the dense, masked and block kernels. */
START_TEST(progress_stops_before_a_bad_slice)
{
	mk_attn_shape s = {.batch = 1, .heads = 3, .n = 300, .d = 16};
	size_t len = (size_t)(3 * 300 * 16);
	float *q = malloc(3 * len * sizeof *q), *v = q + len, *o = v + len;
	mk_mask *m = NULL;
	mk_attn_layout *l = NULL;
	mk_attn_stats st;
	int64_t done = 0;

	ck_assert_ptr_nonnull(q);
	for (size_t x = 0; x < len; x++) {
		q[x] = x / (300 * 16) == 1 ? 1e19f : 0.01f * (float)(x % 7);
		v[x] = 1.0f;
	}
	ck_assert_int_eq(mk_mask_new(300, 0, &m), MK_OK);
	for (int64_t i = 0; i < 300; i++)
		for (int64_t j = 0; j < 300; j++)
			mk_mask_set(m, i, j, true);
	ck_assert_int_eq(mk_attn_layout_new(m, 64, 0, &l), MK_OK);
	ck_assert_int_eq(cpu()->run(cpu(), (mk_attn_kernel)_i, &norms[0], &s, q, q, v,
				    _i == MK_KERNEL_DENSE ? NULL : l, o, &st, record_done, &done),
			 MK_ERANGE);
	ck_assert_int_le(done, 1);
	mk_attn_layout_free(l);
	mk_mask_free(m);
	free(q);
}
END_TEST

/* Just below the limit, at the largest head dimension (where sgemm's
 * partial sums come closest to float32's end): Q = K = 2^58, d = 1024,
 * scores 2^121 = 2.7e36, all equal and exact; every kernel and norm gives
 * the mean of V's rows. */
START_TEST(below_limit_exact)
{
	ovf t = ovf_new(DMAX, 0x1p58f);
	char name[32];

	mk_norm_format(&norms[_i % NNORMS], name, sizeof name);
	ck_assert_msg(ovf_run(&t, _i, false) == MK_OK, "%s %s: %s",
		      mk_attn_kernel_name((mk_attn_kernel)(_i / NNORMS)), name, mk_error());
	for (int64_t x = 0; x < N * DMAX; x++)
		ck_assert_msg(fabsf(t.o[x] - 3.5f) <= 1e-5f, "%s %s: o[%lld] = %g",
			      mk_attn_kernel_name((mk_attn_kernel)(_i / NNORMS)), name,
			      (long long)x, (double)t.o[x]);
	ovf_release(&t);
}
END_TEST

/* Q = K = 2^59, d = 1024: a bound of 2^123 = 1.06e37, just above. */
START_TEST(above_limit_refused)
{
	ovf t = ovf_new(DMAX, 0x1p59f);

	expect_refused(&t, _i, false, "could reach 1.06e+37, beyond float32");
	ovf_release(&t);
}
END_TEST

/* The double-precision reference could compute these, but refuses what the
 * engine refuses: there is nothing to compare a kernel with. */
START_TEST(reference_refuses_overflow)
{
	ovf t = ovf_new(16, 1e19f);
	int64_t rows[N];
	double ref[N * 16];

	for (int64_t i = 0; i < N; i++)
		rows[i] = i;
	for (int k = 0; k < NNORMS; k++) {
		ck_assert_int_eq(mk_attn_reference(&norms[k], &t.s, t.q, t.q, t.v, t.full, rows, N,
						   ref), MK_ERANGE);
		ck_assert_ptr_nonnull(strstr(mk_error(), "beyond float32"));
	}
	ovf_release(&t);
}
END_TEST

/* The bound is per (batch, head): large q in one slice and large k in the
 * other never meet.  NaN is refused. */
START_TEST(check_scores_per_slice)
{
	mk_attn_shape s = {1, 2, 4, 4, 0};
	float q[32], k[32];

	for (int x = 0; x < 32; x++) {
		q[x] = x < 16 ? 1e20f : 1e-20f;
		k[x] = x < 16 ? 1e-20f : 1e20f;
	}
	ck_assert_int_eq(mk_attn_check_scores(&s, q, k), MK_OK);
	ck_assert_double_le(mk_attn_score_bound(4, 4, q, k), 2.0 + 1e-6);
	q[20] = NAN;
	ck_assert_int_eq(mk_attn_check_scores(&s, q, k), MK_ERANGE);
	q[20] = 1e-20f;
	k[3] = 1e20f; /* slice 0: |q| |k| / sqrt(d) = 2e20 * 1e20 / 2 */
	ck_assert_int_eq(mk_attn_check_scores(&s, q, k), MK_ERANGE);
	ck_assert_ptr_nonnull(strstr(mk_error(), "could reach 1e+40, beyond float32"));
}
END_TEST

/* At large d the unscaled sums overflow first: Q = K = 2.9e17 at d = 4096
 * bounds the scores by 5.5e36 (accepted) but q.k by 3.4e38; explain's column
 * sums (no head-dimension limit) gave NaN there with MK_OK. */
START_TEST(dot_products_refused_at_large_d)
{
	const int64_t n = 8, d = 4096;
	float *q = malloc((size_t)(n * d) * sizeof *q);
	double logcol[8];
	mk_norm softmax = {.kind = MK_NORM_SOFTMAX};

	ck_assert_ptr_nonnull(q);
	for (int64_t x = 0; x < n * d; x++)
		q[x] = 2.9e17f;
	ck_assert_double_le(mk_attn_score_bound(n, d, q, q), MK_ATTN_SCORE_MAX);
	ck_assert_int_eq(mk_attn_colsums(&softmax, n, d, q, q, NULL, logcol, NULL), MK_ERANGE);
	ck_assert_ptr_nonnull(strstr(mk_error(), "before the 1/sqrt(d) scaling, beyond float32"));
	/* q.k 4.1e37: accepted, and finite (at scores of 6e35 float32 keeps
	 * the log column sums only to a few ulps of the scores, see
	 * mk_attn_score_bound, so their values are not checked) */
	for (int64_t x = 0; x < n * d; x++)
		q[x] = 1e17f;
	ck_assert_int_eq(mk_attn_colsums(&softmax, n, d, q, q, NULL, logcol, NULL), MK_OK);
	for (int j = 0; j < n; j++)
		ck_assert(isfinite(logcol[j]));
	free(q);
}
END_TEST

/* Scores far below their Cauchy-Schwarz bound (queries orthogonal to every
 * key: scores 0, bound 7071): exponentials taken from the bound underflow,
 * and the kernels redo such rows from their maximum.  Softmax is uniform. */
START_TEST(scores_far_below_their_bound)
{
	float q[4 * 2], k[4 * 2], v[4 * 2], o[4 * 2];
	const float keys[4] = {100.0f, -100.0f, 50.0f, -50.0f};
	mk_attn_shape s = {.batch = 1, .heads = 1, .n = 4, .d = 2};
	mk_norm softmax = {.kind = MK_NORM_SOFTMAX};
	mk_attn_stats st;
	mk_attn_layout *l;
	mk_mask *m;

	for (int i = 0; i < 4; i++) {
		q[2 * i] = 100.0f, q[2 * i + 1] = 0.0f;
		k[2 * i] = 0.0f, k[2 * i + 1] = keys[i];
		v[2 * i] = (float)i, v[2 * i + 1] = (float)(i * i);
	}
	ck_assert_int_eq(mk_mask_new(4, 0, &m), MK_OK);
	for (int i = 0; i < 4; i++)
		mk_bits_set_range(mk_mask_row(m, i), 0, 4);
	ck_assert_int_eq(mk_attn_layout_new(m, 2, 0, &l), MK_OK);
	for (int kern = MK_KERNEL_DENSE; kern <= MK_KERNEL_BLOCK; kern++) {
		ck_assert_int_eq(mk_attn_run(mk_attn_backend_get("cpu"), (mk_attn_kernel)kern,
					     &softmax, &s, q, k, v, l, o, &st), MK_OK);
		for (int i = 0; i < 4; i++) {
			ck_assert_double_eq_tol(o[2 * i], 1.5, 1e-5);     /* (0+1+2+3)/4 */
			ck_assert_double_eq_tol(o[2 * i + 1], 3.5, 1e-5); /* (0+1+4+9)/4 */
		}
	}
	mk_attn_layout_free(l);
	mk_mask_free(m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("attn_overflow");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, run_refuses_overflow, 0, NCASES);
	tcase_add_loop_test(tc, backend_refuses_overflow, 0, NCASES);
	tcase_add_loop_test(tc, progress_stops_before_a_bad_slice, 0, MK_KERNEL_CSR);
	tcase_add_loop_test(tc, below_limit_exact, 0, NCASES);
	tcase_add_loop_test(tc, above_limit_refused, 0, NCASES);
	tcase_add_test(tc, reference_refuses_overflow);
	tcase_add_test(tc, check_scores_per_slice);
	tcase_add_test(tc, dot_products_refused_at_large_d);
	tcase_add_test(tc, scores_far_below_their_bound);
	suite_add_tcase(s, tc);
	return mk_test_main(s);
}
