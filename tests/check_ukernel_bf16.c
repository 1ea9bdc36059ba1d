/* The bf16 micro-kernels (AMX and AVX512_BF16, each forced in turn) and the
 * cpu backend configured for bf16: the products against double loops on inputs rounded to bf16 here
 * (by frexp and rint, not the library's bit trick), and every tiled kernel x
 * normalisation against the double reference, both on the float32 inputs
 * (within bf16's tolerance, and visibly rounded) and on the inputs rounded
 * to bf16 (closer: only the weights' rounding and float32 sums remain).
 * A level the CPU (or Linux) does not run is skipped with a message; with
 * neither, configuring bf16 must fail with one line saying why. */
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

/* x to 8 significant bits, ties to even (rint in the default mode) */
static float bf(float x)
{
	int e;
	double m = frexp((double)x, &e); /* x = m 2^e, 0.5 <= |m| < 1 */
	return (float)ldexp(rint(m * 256.0), e - 8);
}

static float *rounded(const float *x, size_t count)
{
	float *y = malloc((count ? count : 1) * sizeof *y);
	ck_assert_ptr_nonnull(y);
	for (size_t k = 0; k < count; k++)
		y[k] = bf(x[k]);
	return y;
}

static const char *const levels[] = {"amx", "avx512bf16"};
#define NLEVELS 2

/* Forces bf16 level l; false (after a message) where it does not run. */
static bool use_level(int l, const char *what)
{
	if (!mk_uk_bf16_supported(levels[l])) {
		printf("check_ukernel_bf16: %s on %s skipped: this CPU (or kernel) does not run "
		       "it\n", what, levels[l]);
		return false;
	}
	ck_assert_msg(mk_uk_bf16_force(levels[l]) == MK_OK, "%s", mk_error());
	return true;
}

START_TEST(products_match_loops)
{
	static const int64_t dims[] = {1, 2, 3, 16, 17, 64, 100, 128};
	const mk_uk *uk;

	if (!use_level(_i, "the products"))
		return;
	uk = mk_uk_bf16();
	ck_assert(uk->bf16);
	ck_assert_str_eq(uk->name, levels[_i]);
	for (int64_t rows = 1; rows <= uk->mr; rows += rows < 3 ? 1 : 5) {
		/* past 512 keys P is rounded in two chunks */
		const int64_t cols[] = {1, 2, 31, 32, 33, 69, 100, 1030};
		for (size_t c = 0; c < sizeof cols / sizeof *cols; c++)
			for (size_t k = 0; k < sizeof dims / sizeof *dims; k++)
				uk_check_products(uk, rows, cols[c], dims[k], bf);
	}
	mk_uk_bf16_force(NULL);
}
END_TEST

/* One level x shape (_i): every kernel x normalisation in bf16 against the
 * reference on the float32 inputs and on the inputs rounded to bf16. */
START_TEST(kernels_match_reference)
{
	const mk_attn_backend *cpu = mk_attn_backend_get("cpu");
	int sh_i = _i % UK_NSHAPES;
	mk_attn_shape sh = {.batch = 1, .heads = 3, .n = uk_shapes[sh_i].n, .d = uk_shapes[sh_i].d};
	size_t len = (size_t)(sh.heads * sh.n * sh.d);
	float *q, *k, *v, *qb, *kb, *vb, *o;
	int64_t rows[MK_REF_MAX_ROWS], nrows = mk_attn_ref_rows(sh.n, rows);
	double *ref, *refb, worst = 0.0;
	mk_expr *e = NULL;
	mk_mask *m = NULL;
	mk_attn_layout *l = NULL;

	if (!use_level(_i / UK_NSHAPES, "the kernels"))
		return;
	q = uk_randoms(len, 11), k = uk_randoms(len, 12), v = uk_randoms(len, 13);
	qb = rounded(q, len), kb = rounded(k, len), vb = rounded(v, len);
	o = malloc(len * sizeof *o);
	ref = malloc((size_t)(sh.heads * nrows * sh.d) * sizeof *ref);
	refb = malloc((size_t)(sh.heads * nrows * sh.d) * sizeof *refb);
	ck_assert_msg(mk_expr_parse(uk_shapes[sh_i].expr, &e) == MK_OK &&
			      mk_expr_bind(e, &(mk_bind_opts){.n = sh.n, .seed = 7}) == MK_OK &&
			      mk_expr_to_mask(e, &m) == MK_OK && mk_attn_layout_new(m, 64, 0, &l) == MK_OK,
		      "%s: %s", uk_shapes[sh_i].expr, mk_error());
	ck_assert_msg(mk_attn_configure(cpu, 0, MK_COMPUTE_BF16) == MK_OK, "%s", mk_error());
	for (size_t nk = 0; nk < UK_NNORMS; nk++)
		for (int kern = 0; kern < MK_KERNEL_COUNT; kern++) {
			const mk_mask *rm = kern == MK_KERNEL_DENSE ? NULL : m;
			bool csr = kern == MK_KERNEL_CSR; /* stays float32 */
			mk_attn_stats st;
			double err, errb;
			ck_assert(mk_attn_reference(&uk_norms[nk], &sh, q, k, v, rm, rows, nrows, ref) ==
				  MK_OK);
			ck_assert(mk_attn_reference(&uk_norms[nk], &sh, qb, kb, vb, rm, rows, nrows,
						    refb) == MK_OK);
			for (size_t c = 0; c < len; c++) /* a row left unwritten is NaN */
				o[c] = NAN;
			ck_assert_msg(mk_attn_run(cpu, (mk_attn_kernel)kern, &uk_norms[nk], &sh, q, k, v,
						  l, o, &st) == MK_OK,
				      "%s", mk_error());
			err = mk_attn_ref_error(&sh, rows, nrows, ref, o);
			errb = mk_attn_ref_error(&sh, rows, nrows, refb, o);
			ck_assert_msg(csr ? err <= 1e-5 : err <= 5e-2 && errb <= 1e-2,
				      "bf16 %s on %s, norm %zu, '%s' n=%lld d=%lld: error %.3g (%.3g against "
				      "the rounded inputs)",
				      mk_attn_kernel_name((mk_attn_kernel)kern), levels[_i / UK_NSHAPES], nk,
				      uk_shapes[sh_i].expr,
				      (long long)sh.n, (long long)sh.d, err, errb);
			if (!csr && err > worst)
				worst = err;
		}
	/* it did round: float32 would be within 1e-5 */
	ck_assert_msg(worst > 1e-4, "'%s': bf16 error %.3g, as small as float32's",
		      uk_shapes[sh_i].expr, worst);
	ck_assert_int_eq(mk_attn_configure(cpu, 0, MK_COMPUTE_FP32), MK_OK);
	mk_uk_bf16_force(NULL);
	mk_attn_layout_free(l);
	mk_mask_free(m);
	mk_expr_free(e);
	free(q), free(k), free(v), free(qb), free(kb), free(vb), free(o), free(ref), free(refb);
}
END_TEST

/* Configuring bf16 works where the CPU has it, else fails with a line
 * saying why; fp16 is never the cpu backend's. */
START_TEST(configure_says_why)
{
	const mk_attn_backend *cpu = mk_attn_backend_get("cpu");
	int ret = mk_attn_configure(cpu, 0, MK_COMPUTE_BF16);

	if (mk_uk_bf16()) {
		ck_assert_int_eq(ret, MK_OK);
	} else {
		ck_assert_int_eq(ret, MK_EINVAL);
		ck_assert_msg(strstr(mk_error(), "AVX512_BF16"), "'%s'", mk_error());
	}
	ck_assert_int_eq(mk_attn_configure(cpu, 0, MK_COMPUTE_FP16), MK_EINVAL);
	ck_assert_int_eq(mk_attn_configure(cpu, 0, MK_COMPUTE_FP32), MK_OK);
}
END_TEST

static Suite *bf16_suite(void)
{
	Suite *s = suite_create("ukernel_bf16");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, products_match_loops, 0, NLEVELS);
	tcase_add_loop_test(tc, kernels_match_reference, 0, NLEVELS * UK_NSHAPES);
	tcase_add_test(tc, configure_says_why);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return mk_test_main(bf16_suite());
}
