/* The CPU micro-kernels on every vector level (AVX-512, AVX2, portable)
 * and the sgemm path: their products against plain double loops at awkward
 * shapes, and every tiled kernel x normalisation against the library's
 * double-precision reference.  A level this CPU cannot run is skipped with
 * a message (it is still built, and runs where the CPU has it). */
#include "config.h"
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "maskkit.h"
#include "testutil.h"
#include "attn_ref.h"
#include "cpu_ukernel.h"

static const char *const paths[] = {"avx512", "avx2", "portable", "blas"};
#define NPATHS 4

static uint64_t seed_next(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s >> 11;
}

static float *randoms(size_t count, uint64_t seed)
{
	float *x = malloc((count ? count : 1) * sizeof *x);
	ck_assert_ptr_nonnull(x);
	for (size_t k = 0; k < count; k++)
		x[k] = (float)((double)seed_next(&seed) / 4503599627370496.0 - 1.0);
	return x;
}

/* Forces path p; false (after a message) when this CPU cannot run it. */
static bool use_path(int p)
{
	if (!mk_uk_supported(paths[p])) {
		printf("check_ukernel: %s skipped: this CPU does not run it\n", paths[p]);
		return false;
	}
	ck_assert_msg(mk_uk_force(paths[p]) == MK_OK, "%s: %s", paths[p], mk_error());
	return true;
}

/* qk and pv of one level at rows x cols x d against double loops. */
static void check_products(const mk_uk *uk, int64_t rows, int64_t cols, int64_t d)
{
	int64_t lds = cols + 3, sz = mk_uk_packed_size(uk, cols, d);
	float *a = randoms((size_t)(rows * d), 1), *b = randoms((size_t)(cols * d), 2);
	float *pw = randoms((size_t)(rows * lds), 3), *o = randoms((size_t)(rows * d), 4);
	float *o0 = malloc((size_t)(rows * d) * sizeof *o0), *s = malloc((size_t)(rows * lds) * sizeof *s);
	float *kp = malloc((size_t)sz * sizeof *kp), *vp = malloc((size_t)sz * sizeof *vp);
	float *zero = calloc((size_t)(cols + d), sizeof *zero), *sink = malloc((size_t)d * sizeof *sink);
	const float scale = 0.37f;

	memcpy(o0, o, (size_t)(rows * d) * sizeof *o);
	for (int64_t k = 0; k < rows * lds; k++)
		s[k] = 12345.0f; /* the gaps past cols must stay untouched */
	mk_uk_pack(uk, b, cols, d, scale, kp);
	mk_uk_pack_v(uk, b, cols, d, vp);
	uk->qk(a, rows, kp, cols, d, zero, s, lds);
	uk->pv(pw, lds, rows, vp, cols, d, zero, sink, o);
	for (int64_t r = 0; r < rows; r++) {
		for (int64_t c = 0; c < cols; c++) {
			double want = 0.0;
			for (int64_t p = 0; p < d; p++)
				want += (double)a[r * d + p] * b[c * d + p];
			want *= scale;
			ck_assert_msg(fabs(s[r * lds + c] - want) <= 1e-6 * (double)d,
				      "%s qk %lldx%lldx%lld: s[%lld][%lld] = %g, want %g", uk->name,
				      (long long)rows, (long long)cols, (long long)d, (long long)r,
				      (long long)c, (double)s[r * lds + c], want);
		}
		for (int64_t c = cols; c < lds; c++)
			ck_assert(s[r * lds + c] == 12345.0f);
		for (int64_t c = 0; c < d; c++) {
			double want = o0[r * d + c];
			for (int64_t j = 0; j < cols; j++)
				want += (double)pw[r * lds + j] * b[j * d + c];
			ck_assert_msg(fabs(o[r * d + c] - want) <= 1e-6 * (double)cols,
				      "%s pv %lldx%lldx%lld: o[%lld][%lld] = %g, want %g", uk->name,
				      (long long)rows, (long long)cols, (long long)d, (long long)r,
				      (long long)c, (double)o[r * d + c], want);
		}
	}
	free(a), free(b), free(pw), free(o), free(o0), free(s), free(kp), free(vp);
	free(zero), free(sink);
}

START_TEST(products_match_loops)
{
	static const int64_t dims[] = {1, 3, 16, 17, 40, 64, 128};
	const mk_uk *uk;

	if (!use_path(_i) || !(uk = mk_uk_get()))
		return; /* blas has no micro-kernels */
	for (int64_t rows = 1; rows <= uk->mr; rows++) {
		const int64_t cols[] = {1, 3, uk->nr - 1, uk->nr, uk->nr + 1, 2 * uk->nr + 5, 100};
		for (size_t c = 0; c < sizeof cols / sizeof *cols; c++)
			for (size_t k = 0; k < sizeof dims / sizeof *dims; k++)
				check_products(uk, rows, cols[c], dims[k]);
	}
	mk_uk_force(NULL);
}
END_TEST

/* Shapes past one key block (512 keys, or 327 at d = 100), d not a multiple
 * of any panel, masks with global rows (split into pieces) and empty rows. */
static const struct {
	const char *expr;
	int64_t n, d;
} shapes[] = {
	{"local40 + global1", 600, 40}, {"causal", 77, 5}, {"local3 + random2", 530, 64},
	{"strided64 + global2", 1100, 24}, {"causal", 700, 100},
};
#define NSHAPES ((int)(sizeof shapes / sizeof *shapes))

static const mk_norm norms[] = {
	{.kind = MK_NORM_SOFTMAX}, {.kind = MK_NORM_DNAS},
	{.kind = MK_NORM_HNAS, .u = 0.3}, {.kind = MK_NORM_SINKHORN, .iters = 3},
};

static void check_shape(int s)
{
	mk_attn_shape sh = {.batch = 1, .heads = 2, .n = shapes[s].n, .d = shapes[s].d};
	size_t len = (size_t)(sh.heads * sh.n * sh.d);
	float *q = randoms(len, 11), *k = randoms(len, 12), *v = randoms(len, 13);
	float *o = malloc(len * sizeof *o);
	int64_t rows[MK_REF_MAX_ROWS], nrows = mk_attn_ref_rows(sh.n, rows);
	double *ref = malloc((size_t)(sh.heads * nrows * sh.d) * sizeof *ref);
	mk_expr *e = NULL;
	mk_mask *m = NULL;
	mk_attn_layout *l = NULL;

	ck_assert_msg(mk_expr_parse(shapes[s].expr, &e) == MK_OK &&
			      mk_expr_bind(e, &(mk_bind_opts){.n = sh.n, .seed = 7}) == MK_OK &&
			      mk_expr_to_mask(e, &m) == MK_OK && mk_attn_layout_new(m, 64, 0, &l) == MK_OK,
		      "%s: %s", shapes[s].expr, mk_error());
	for (size_t nk = 0; nk < sizeof norms / sizeof *norms; nk++)
		for (int kern = 0; kern < MK_KERNEL_COUNT; kern++) {
			const mk_mask *rm = kern == MK_KERNEL_DENSE ? NULL : m;
			mk_attn_stats st;
			double err;
			ck_assert(mk_attn_reference(&norms[nk], &sh, q, k, v, rm, rows, nrows, ref) ==
				  MK_OK);
			ck_assert_msg(mk_attn_run(mk_attn_backend_get("cpu"), (mk_attn_kernel)kern,
						  &norms[nk], &sh, q, k, v, l, o, &st) == MK_OK,
				      "%s", mk_error());
			err = mk_attn_ref_error(&sh, rows, nrows, ref, o);
			ck_assert_msg(err <= 1e-5, "%s, %s, norm %zu, '%s' n=%lld d=%lld: error %.3g",
				      mk_uk_get() ? mk_uk_get()->name : "blas",
				      mk_attn_kernel_name((mk_attn_kernel)kern), nk, shapes[s].expr,
				      (long long)sh.n, (long long)sh.d, err);
		}
	mk_attn_layout_free(l);
	mk_mask_free(m);
	mk_expr_free(e);
	free(q), free(k), free(v), free(o), free(ref);
}

/* _i = path x shape */
START_TEST(kernels_match_reference_on_every_path)
{
	if (!use_path(_i / NSHAPES))
		return;
	check_shape(_i % NSHAPES);
	mk_uk_force(NULL);
}
END_TEST

START_TEST(force_rejects_unknown)
{
	ck_assert_int_ne(mk_uk_force("avx9000"), MK_OK);
	ck_assert_ptr_nonnull(strstr(mk_error(), "avx9000"));
	ck_assert(mk_uk_supported("portable"));
}
END_TEST

static Suite *ukernel_suite(void)
{
	Suite *s = suite_create("ukernel");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, products_match_loops, 0, NPATHS);
	tcase_add_loop_test(tc, kernels_match_reference_on_every_path, 0, NPATHS * NSHAPES);
	tcase_add_test(tc, force_rejects_unknown);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return mk_test_main(ukernel_suite());
}
