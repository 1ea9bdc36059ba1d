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
#include "ukernel_testutil.h"

static const char *const paths[] = {"avx512", "avx2", "portable", "blas"};
#define NPATHS 4

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

static float same(float x)
{
	return x;
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
				uk_check_products(uk, rows, cols[c], dims[k], same);
	}
	mk_uk_force(NULL);
}
END_TEST

static void check_shape(int s)
{
	mk_attn_shape sh = {.batch = 1, .heads = 2, .n = uk_shapes[s].n, .d = uk_shapes[s].d};
	size_t len = (size_t)(sh.heads * sh.n * sh.d);
	float *q = uk_randoms(len, 11), *k = uk_randoms(len, 12), *v = uk_randoms(len, 13);
	float *o = malloc(len * sizeof *o);
	int64_t rows[MK_REF_MAX_ROWS], nrows = mk_attn_ref_rows(sh.n, rows);
	double *ref = malloc((size_t)(sh.heads * nrows * sh.d) * sizeof *ref);
	mk_expr *e = NULL;
	mk_mask *m = NULL;
	mk_attn_layout *l = NULL;

	ck_assert_msg(mk_expr_parse(uk_shapes[s].expr, &e) == MK_OK &&
			      mk_expr_bind(e, &(mk_bind_opts){.n = sh.n, .seed = 7}) == MK_OK &&
			      mk_expr_to_mask(e, &m) == MK_OK && mk_attn_layout_new(m, 64, 0, &l) == MK_OK,
		      "%s: %s", uk_shapes[s].expr, mk_error());
	for (size_t nk = 0; nk < UK_NNORMS; nk++)
		for (int kern = 0; kern < MK_KERNEL_COUNT; kern++) {
			const mk_mask *rm = kern == MK_KERNEL_DENSE ? NULL : m;
			mk_attn_stats st;
			double err;
			ck_assert(mk_attn_reference(&uk_norms[nk], &sh, q, k, v, rm, rows, nrows, ref) ==
				  MK_OK);
			ck_assert_msg(mk_attn_run(mk_attn_backend_get("cpu"), (mk_attn_kernel)kern,
						  &uk_norms[nk], &sh, q, k, v, l, o, &st) == MK_OK,
				      "%s", mk_error());
			err = mk_attn_ref_error(&sh, rows, nrows, ref, o);
			ck_assert_msg(err <= 1e-5, "%s, %s, norm %zu, '%s' n=%lld d=%lld: error %.3g",
				      mk_uk_get() ? mk_uk_get()->name : "blas",
				      mk_attn_kernel_name((mk_attn_kernel)kern), nk, uk_shapes[s].expr,
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
	if (!use_path(_i / UK_NSHAPES))
		return;
	check_shape(_i % UK_NSHAPES);
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
	tcase_add_loop_test(tc, kernels_match_reference_on_every_path, 0, NPATHS * UK_NSHAPES);
	tcase_add_test(tc, force_rejects_unknown);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return mk_test_main(ukernel_suite());
}
