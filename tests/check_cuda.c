/* Cross-backend tests of the cuda backend (built only with CUDA): every
 * kernel under softmax, dnas, hnas:0.5 and sinkhorn:3, in fp32, fp16 and
 * bf16, at d = 64 and 128, against the double-precision reference and
 * against the cpu backend, each within the dtype's tolerance, on the masks
 * check_attn uses (empty rows, partial tiles, n not a multiple of the tile);
 * the block kernel's split rows; the device timer; device selection.
 * Without a usable device it prints one line and exits 77 (automake's SKIP):
 * CI machines have no GPU, so MASKKIT_REQUIRE_ALL does not apply here. */
#include "config.h"
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "maskkit.h"
#include "testutil.h"

#define SKIP 77

static const char *const dtypes[] = {"fp32", "fp16", "bf16"};
static const char *const norms[] = {"softmax", "dnas", "hnas:0.5", "sinkhorn:3"};
static const int64_t dims[] = {64, 128};

/* Rows 0, 17, 63, 64, 99 and column 50 empty (n = 100), as in check_attn. */
static const struct mcase {
	const char *expr;
	int64_t n, tile;
} mcases[] = {
	{"full", 100, 64}, {"diag", 100, 16}, {"local3", 100, 32}, {"global1", 100, 64},
	{"local2 - axis(rows=0,17,63,64,99, cols=50)", 100, 16}, {"@random", 150, 64},
	{"causal", 64, 64}, {"local4 + random3", 200, 128}, {"none", 1, 16}, {"local1", 37, 100},
	/* global tokens: the block kernel splits row of tiles 0 into pieces */
	{"global2 + local8", 1000, 16}, {"global3 + local40", 1000, 64},
};
#define NMASKS ((int)(sizeof mcases / sizeof mcases[0]))

static const mk_attn_backend *backend(const char *name)
{
	const mk_attn_backend *b = mk_attn_backend_get(name);
	ck_assert_msg(b != NULL, "backend %s: %s", name, mk_error());
	return b;
}

static mk_mask *mcase_mask(const struct mcase *c)
{
	mk_expr *e;
	mk_mask *m;
	mk_bind_opts o = {.n = c->n, .seed = 7};
	if (!strcmp(c->expr, "@random"))
		return mk_test_random_mask(c->n, 0x5eed, 6);
	ck_assert_msg(mk_expr_parse(c->expr, &e) == MK_OK, "%s: %s", c->expr, mk_error());
	ck_assert_int_eq(mk_expr_bind(e, &o), MK_OK);
	ck_assert_int_eq(mk_expr_to_mask(e, &m), MK_OK);
	mk_expr_free(e);
	return m;
}

/* Uniform in [-1, 1), as the sweep's tensors. */
static float *tensor(size_t count, uint64_t seed)
{
	float *x = malloc(count * sizeof *x);
	ck_assert_ptr_nonnull(x);
	for (size_t i = 0; i < count; i++) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		x[i] = (float)((double)(seed >> 11) * 0x1.0p-52 - 1.0);
	}
	return x;
}

typedef struct cuda_case {
	mk_attn_shape s;
	float *q, *k, *v, *o, *o_cpu;
	double *ref;
	int64_t rows[MK_REF_MAX_ROWS], nrows;
} cuda_case;

static void case_new(cuda_case *c, int64_t n, int64_t d)
{
	size_t count;
	c->s = (mk_attn_shape){.batch = 2, .heads = 2, .n = n, .d = d};
	count = (size_t)(4 * n * d);
	c->q = tensor(count, 1);
	c->k = tensor(count, 2);
	c->v = tensor(count, 3);
	c->o = malloc(count * sizeof *c->o);
	c->o_cpu = malloc(count * sizeof *c->o_cpu);
	c->nrows = mk_attn_ref_rows(n, c->rows);
	c->ref = malloc((size_t)(4 * c->nrows * d) * sizeof *c->ref);
	ck_assert(c->o && c->o_cpu && c->ref);
}

static void case_free(cuda_case *c)
{
	free(c->q);
	free(c->k);
	free(c->v);
	free(c->o);
	free(c->o_cpu);
	free(c->ref);
}

/* The largest |a - b| over all elements (NaN: infinite). */
static double max_diff(const float *a, const float *b, size_t count)
{
	double err = 0.0;
	for (size_t i = 0; i < count; i++) {
		double e = fabs((double)a[i] - (double)b[i]);
		err = isnan(e) || e > err ? (isnan(e) ? INFINITY : e) : err;
	}
	return err;
}

/* One kernel, norm and dtype on mask m: against the reference and the cpu. */
static void expect_kernel(cuda_case *c, mk_attn_kernel kern, const char *norm_text,
			  const char *dtype, const mk_mask *m, const mk_attn_layout *lg,
			  const mk_attn_layout *lc, const char *what)
{
	const mk_attn_backend *gpu = backend("cuda"), *cpu = backend("cpu");
	double tol = mk_dtype_tolerance(dtype), err;
	size_t count = (size_t)(4 * c->s.n * c->s.d);
	mk_attn_stats sg, sc;
	mk_norm norm;

	ck_assert_int_eq(mk_norm_parse(norm_text, &norm), MK_OK);
	ck_assert_msg(mk_attn_configure(gpu, 0, dtype) == MK_OK, "%s", mk_error());
	ck_assert_int_eq(mk_attn_reference(&norm, &c->s, c->q, c->k, c->v,
					   kern == MK_KERNEL_DENSE ? NULL : m, c->rows, c->nrows,
					   c->ref), MK_OK);
	ck_assert_msg(mk_attn_run(gpu, kern, &norm, &c->s, c->q, c->k, c->v, lg, c->o, &sg) ==
		      MK_OK, "%s: %s", what, mk_error());
	err = mk_attn_ref_error(&c->s, c->rows, c->nrows, c->ref, c->o);
	ck_assert_msg(err <= tol, "%s, %s, %s: error %.3g against the reference (tolerance %.3g)",
		      what, norm_text, dtype, err, tol);
	ck_assert_int_eq(mk_attn_run(cpu, kern, &norm, &c->s, c->q, c->k, c->v, lc, c->o_cpu, &sc),
			 MK_OK);
	err = max_diff(c->o, c->o_cpu, count);
	ck_assert_msg(err <= tol, "%s, %s, %s: error %.3g against the cpu backend", what,
		      norm_text, dtype, err);
	ck_assert_int_eq(sg.empty_rows, sc.empty_rows);
}

/* _i: mask case x dtype; every kernel, norm and d inside. */
START_TEST(kernels_match_reference_and_cpu)
{
	const struct mcase *mc = &mcases[_i / 3];
	const char *dtype = dtypes[_i % 3];
	mk_mask *m = mcase_mask(mc);
	char what[160];

	for (int di = 0; di < 2; di++) {
		cuda_case c;
		mk_attn_layout *lg = NULL, *lc = NULL;
		case_new(&c, mc->n, dims[di]);
		ck_assert_msg(mk_attn_prepare(backend("cuda"), m, mc->tile, 0, &lg) == MK_OK, "%s",
			      mk_error());
		ck_assert_int_eq(mk_attn_prepare(backend("cpu"), m, mc->tile, 0, &lc), MK_OK);
		for (int k = 0; k < MK_KERNEL_COUNT; k++)
			for (int ni = 0; ni < 4; ni++) {
				snprintf(what, sizeof what, "%s on '%s' (n %lld, tile %lld, d %lld)",
					 mk_attn_kernel_name((mk_attn_kernel)k), mc->expr,
					 (long long)mc->n, (long long)mc->tile, (long long)dims[di]);
				expect_kernel(&c, (mk_attn_kernel)k, norms[ni], dtype, m, lg, lc, what);
			}
		mk_attn_layout_free(lg);
		mk_attn_layout_free(lc);
		case_free(&c);
	}
	mk_mask_free(m);
}
END_TEST

/* A layout made without the backend's prepare is uploaded for the run. */
START_TEST(plain_layout_runs)
{
	const struct mcase *mc = &mcases[4];
	mk_mask *m = mcase_mask(mc);
	mk_attn_layout *l;
	cuda_case c;
	case_new(&c, mc->n, 64);
	ck_assert_int_eq(mk_attn_layout_new(m, 32, 0, &l), MK_OK);
	expect_kernel(&c, MK_KERNEL_BLOCK, "dnas", "fp32", m, l, l, "block, plain layout");
	mk_attn_layout_free(l);
	case_free(&c);
	mk_mask_free(m);
}
END_TEST

/* The device timer: reps positive times and the same output as a run. */
START_TEST(timer_matches_run)
{
	const mk_attn_backend *gpu = backend("cuda");
	mk_mask *m = mcase_mask(&mcases[7]);
	mk_attn_layout *l;
	mk_attn_stats st;
	mk_norm norm = {.kind = MK_NORM_SOFTMAX};
	double secs[5];
	float *o2;
	cuda_case c;

	case_new(&c, mcases[7].n, 128);
	o2 = malloc((size_t)(4 * c.s.n * c.s.d) * sizeof *o2);
	ck_assert_ptr_nonnull(o2);
	ck_assert_int_eq(mk_attn_configure(gpu, 0, "bf16"), MK_OK);
	ck_assert_int_eq(mk_attn_prepare(gpu, m, 64, 0, &l), MK_OK);
	for (int k = 0; k < MK_KERNEL_COUNT; k++) {
		ck_assert_msg(mk_attn_time(gpu, (mk_attn_kernel)k, &norm, &c.s, c.q, c.k, c.v, l, 2, 5,
					   secs, c.o, &st) == MK_OK, "%s", mk_error());
		for (int r = 0; r < 5; r++)
			ck_assert(secs[r] > 0.0 && secs[r] < 10.0);
		ck_assert_int_eq(mk_attn_run(gpu, (mk_attn_kernel)k, &norm, &c.s, c.q, c.k, c.v, l, o2,
					     &st), MK_OK);
		ck_assert(max_diff(c.o, o2, (size_t)(4 * c.s.n * c.s.d)) == 0.0);
	}
	mk_attn_layout_free(l);
	free(o2);
	case_free(&c);
	mk_mask_free(m);
}
END_TEST

START_TEST(device_selection_and_description)
{
	const mk_attn_backend *gpu = backend("cuda");
	mk_machine mach;
	ck_assert_int_eq(mk_attn_configure(gpu, 1023, "fp32"), MK_EINVAL);
	ck_assert_msg(strstr(mk_error(), "device 1023") != NULL, "%s", mk_error());
	ck_assert_int_eq(mk_attn_configure(gpu, 0, "fp64"), MK_EINVAL);
	ck_assert_int_eq(mk_attn_configure(gpu, 0, "fp16"), MK_OK);
	ck_assert_int_eq(mk_attn_check_dtype(gpu, "bf16"), MK_OK);
	mk_machine_describe_backend(gpu, &mach);
	ck_assert_str_ne(mach.gpu, "");
	ck_assert_int_gt(mach.gpu_sms, 0);
	ck_assert_str_ne(mach.gpu_driver, "");
}
END_TEST

static Suite *cuda_suite(void)
{
	Suite *s = suite_create("cuda");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, kernels_match_reference_and_cpu, 0, 3 * NMASKS);
	tcase_add_test(tc, plain_layout_runs);
	tcase_add_test(tc, timer_matches_run);
	tcase_add_test(tc, device_selection_and_description);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	if (!mk_attn_backend_get("cuda")) {
		printf("check_cuda: SKIP: %s\n", mk_error());
		return SKIP;
	}
	/* the probe above initialised CUDA, which a forked child cannot use:
	 * the tests run in this process */
	sr = srunner_create(cuda_suite());
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
