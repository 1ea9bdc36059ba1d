/* Cross-backend tests of the cuda backend (built only with CUDA): every
 * kernel under softmax, dnas, hnas:0.5 and sinkhorn:3, in fp32, fp16 and
 * bf16, at d = 64 and 128 (and 32 and 96, padded, on some masks), against the
 * double-precision reference and against the cpu backend, on the masks
 * check_attn uses (empty rows, partial tiles, n not a multiple of the tile);
 * the block kernel's split rows; the device timer; device selection;
 * scores beyond float32 refused as on the cpu.
 * q is scaled by 4 so that the softmax is far from uniform, and the
 * tolerances are tighter than mk_dtype_tolerance: a kernel that ignored the
 * scores or swapped two key columns would pass at bf16's 5e-2.
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
#include "attn_backend.h"
#include "attn_ref.h"

#define SKIP 77

static const mk_compute dtypes[] = {MK_COMPUTE_FP32, MK_COMPUTE_FP16, MK_COMPUTE_BF16};
static const char *const norms[] = {"softmax", "dnas", "hnas:0.5", "sinkhorn:3"};
static const int64_t dims[] = {64, 128, 32, 96};

/* This file's tolerances (fp32 keeps the library's). */
static double test_tolerance(mk_compute dtype)
{
	if (dtype == MK_COMPUTE_FP16)
		return 2e-3;
	if (dtype == MK_COMPUTE_BF16)
		return 1.5e-2;
	return mk_compute_tolerance(dtype);
}

/* Rows 0, 17, 63, 64, 99 and column 50 empty (n = 100), as in check_attn. */
static const struct mcase {
	const char *expr;
	int64_t n, tile;
	int ndims; /* the first ndims of dims: 4 tests the padded head dimensions */
} mcases[] = {
	{"full", 100, 64, 2}, {"diag", 100, 16, 2}, {"local3", 100, 32, 2}, {"global1", 100, 64, 2},
	{"local2 - axis(rows=0,17,63,64,99, cols=50)", 100, 16, 4}, {"@random", 150, 64, 2},
	{"causal", 64, 64, 2}, {"local4 + random3", 200, 128, 2}, {"none", 1, 16, 2},
	{"local1", 37, 100, 2},
	/* global tokens: the block kernel splits row of tiles 0 into pieces */
	{"global2 + local8", 1000, 16, 2}, {"global3 + local40", 1000, 64, 4},
};
#define NMASKS ((int)(sizeof mcases / sizeof mcases[0]))

/* The mask cases that run: all, or those CHECK_CUDA_MASKS lists ("4,10":
 * compute-sanitizer makes every kernel tens of times slower, so the device
 * check runs the cases with empty rows and split rows only). */
static int selected[NMASKS], nselected;
/* CHECK_CUDA_NORMS=K runs the first K norms only (racecheck: softmax's row
 * pass and dnas's column pass cover the kernels' two ways of indexing) */
static int nnorms = 4;

static void select_masks(void)
{
	const char *list = getenv("CHECK_CUDA_MASKS");
	char *end;

	nselected = 0;
	while (list && *list && nselected < NMASKS) {
		long k = strtol(list, &end, 10);
		if (end == list || k < 0 || k >= NMASKS || (*end && *end != ',')) {
			fprintf(stderr, "check_cuda: CHECK_CUDA_MASKS: bad case list '%s' (indices "
				"0 to %d, comma-separated)\n", getenv("CHECK_CUDA_MASKS"), NMASKS - 1);
			exit(EXIT_FAILURE);
		}
		selected[nselected++] = (int)k;
		list = *end ? end + 1 : end;
	}
	if (!list || nselected == 0)
		for (nselected = 0; nselected < NMASKS; nselected++)
			selected[nselected] = nselected;
	if ((list = getenv("CHECK_CUDA_NORMS")) && *list) {
		long k = strtol(list, &end, 10);
		if (*end || k < 1 || k > 4) {
			fprintf(stderr, "check_cuda: CHECK_CUDA_NORMS: '%s' is not 1 to 4\n", list);
			exit(EXIT_FAILURE);
		}
		nnorms = (int)k;
	}
}

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

/* Uniform in [-scale, scale). */
static float *tensor(size_t count, uint64_t seed, float scale)
{
	float *x = malloc(count * sizeof *x);
	ck_assert_ptr_nonnull(x);
	for (size_t i = 0; i < count; i++) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		x[i] = scale * (float)((double)(seed >> 11) * 0x1.0p-52 - 1.0);
	}
	return x;
}

typedef struct cuda_case {
	mk_attn_shape s;
	float *q, *k, *v, *o, *o_cpu;
	double *ref, *ref_dense;
	int64_t rows[MK_REF_MAX_ROWS], nrows;
} cuda_case;

static void case_new(cuda_case *c, int64_t n, int64_t d)
{
	size_t count;
	c->s = (mk_attn_shape){.batch = 2, .heads = 2, .n = n, .d = d};
	count = (size_t)(4 * n * d);
	c->q = tensor(count, 1, 4.0f);
	c->k = tensor(count, 2, 1.0f);
	c->v = tensor(count, 3, 1.0f);
	c->o = malloc(count * sizeof *c->o);
	c->o_cpu = malloc(count * sizeof *c->o_cpu);
	c->nrows = mk_attn_ref_rows(n, c->rows);
	c->ref = malloc((size_t)(4 * c->nrows * d) * sizeof *c->ref);
	c->ref_dense = malloc((size_t)(4 * c->nrows * d) * sizeof *c->ref_dense);
	ck_assert(c->o && c->o_cpu && c->ref && c->ref_dense);
}

static void case_release(cuda_case *c)
{
	free(c->q);
	free(c->k);
	free(c->v);
	free(c->o);
	free(c->o_cpu);
	free(c->ref);
	free(c->ref_dense);
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

/* The reference for norm, masked by m and dense (once for every kernel). */
static void case_refs(cuda_case *c, const mk_norm *norm, const mk_mask *m)
{
	ck_assert_int_eq(mk_attn_reference(norm, &c->s, c->q, c->k, c->v, m, c->rows, c->nrows,
					   c->ref), MK_OK);
	ck_assert_int_eq(mk_attn_reference(norm, &c->s, c->q, c->k, c->v, NULL, c->rows,
					   c->nrows, c->ref_dense), MK_OK);
}

/* The cpu backend's output of kern into c->o_cpu. */
static void case_cpu(cuda_case *c, mk_attn_kernel kern, const mk_norm *norm,
		     const mk_attn_layout *lc, mk_attn_stats *st)
{
	ck_assert_int_eq(mk_attn_run(backend("cpu"), kern, norm, &c->s, c->q, c->k, c->v, lc,
				     c->o_cpu, st), MK_OK);
}

/* One kernel and dtype on the cuda backend: against the reference (made by
 * case_refs) and the cpu's output (case_cpu, with its stats sc). */
static void expect_kernel(cuda_case *c, mk_attn_kernel kern, const mk_norm *norm,
			  const char *norm_text, mk_compute dtype, const mk_attn_layout *lg,
			  const mk_attn_stats *sc, const char *what)
{
	const mk_attn_backend *gpu = backend("cuda");
	double tol = test_tolerance(dtype), err;
	size_t count = (size_t)(4 * c->s.n * c->s.d);
	mk_attn_stats sg;

	ck_assert_msg(mk_attn_configure(gpu, 0, dtype) == MK_OK, "%s", mk_error());
	ck_assert_msg(mk_attn_run(gpu, kern, norm, &c->s, c->q, c->k, c->v, lg, c->o, &sg) ==
		      MK_OK, "%s: %s", what, mk_error());
	err = mk_attn_ref_error(&c->s, c->rows, c->nrows,
				kern == MK_KERNEL_DENSE ? c->ref_dense : c->ref, c->o);
	ck_assert_msg(err <= tol, "%s, %s, %s: error %.3g against the reference (tolerance %.3g)",
		      what, norm_text, mk_compute_name(dtype), err, tol);
	err = max_diff(c->o, c->o_cpu, count);
	ck_assert_msg(err <= tol, "%s, %s, %s: error %.3g against the cpu backend", what,
		      norm_text, mk_compute_name(dtype), err);
	ck_assert_int_eq(sg.empty_rows, sc->empty_rows);
}

/* Every kernel and dtype under one norm at one d. */
static void expect_norm(cuda_case *c, const char *norm_text, const mk_mask *m,
			const mk_attn_layout *lg, const mk_attn_layout *lc, const char *where)
{
	mk_attn_stats sc;
	mk_norm norm;
	char what[200];

	ck_assert_int_eq(mk_norm_parse(norm_text, &norm), MK_OK);
	case_refs(c, &norm, m);
	for (int k = 0; k < MK_KERNEL_COUNT; k++) {
		snprintf(what, sizeof what, "%s on %s", mk_attn_kernel_name((mk_attn_kernel)k), where);
		case_cpu(c, (mk_attn_kernel)k, &norm, lc, &sc);
		for (int t = 0; t < 3; t++)
			expect_kernel(c, (mk_attn_kernel)k, &norm, norm_text, dtypes[t], lg, &sc,
				      what);
	}
}

/* _i: mask case; every kernel, norm, dtype and d inside. */
START_TEST(kernels_match_reference_and_cpu)
{
	const struct mcase *mc = &mcases[selected[_i]];
	mk_mask *m = mcase_mask(mc);
	char where[160];

	for (int di = 0; di < mc->ndims; di++) {
		cuda_case c;
		mk_attn_layout *lg = NULL, *lc = NULL;
		case_new(&c, mc->n, dims[di]);
		ck_assert_msg(mk_attn_prepare(backend("cuda"), m, mc->tile, 0, &lg) == MK_OK, "%s",
			      mk_error());
		ck_assert_int_eq(mk_attn_prepare(backend("cpu"), m, mc->tile, 0, &lc), MK_OK);
		snprintf(where, sizeof where, "'%s' (n %lld, tile %lld, d %lld)", mc->expr,
			 (long long)mc->n, (long long)mc->tile, (long long)dims[di]);
		for (int ni = 0; ni < nnorms; ni++)
			expect_norm(&c, norms[ni], m, lg, lc, where);
		mk_attn_layout_free(lg);
		mk_attn_layout_free(lc);
		case_release(&c);
	}
	mk_mask_free(m);
}
END_TEST

/* A layout made without the backend's prepare is uploaded for the run: the
 * block kernel on the warp-per-row path (fp32) and on tensor cores (fp16). */
START_TEST(plain_layout_runs)
{
	const struct mcase *mc = &mcases[4];
	mk_mask *m = mcase_mask(mc);
	mk_attn_layout *l;
	mk_attn_stats sc;
	mk_norm norm;
	cuda_case c;
	case_new(&c, mc->n, 64);
	ck_assert_int_eq(mk_norm_parse("dnas", &norm), MK_OK);
	ck_assert_int_eq(mk_attn_layout_new(m, 32, 0, &l), MK_OK);
	case_refs(&c, &norm, m);
	case_cpu(&c, MK_KERNEL_BLOCK, &norm, l, &sc);
	expect_kernel(&c, MK_KERNEL_BLOCK, &norm, "dnas", MK_COMPUTE_FP32, l, &sc,
		      "block, plain layout");
	expect_kernel(&c, MK_KERNEL_BLOCK, &norm, "dnas", MK_COMPUTE_FP16, l, &sc,
		      "block, plain layout");
	mk_attn_layout_free(l);
	case_release(&c);
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
	ck_assert_int_eq(mk_attn_configure(gpu, 0, MK_COMPUTE_BF16), MK_OK);
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
	case_release(&c);
	mk_mask_free(m);
}
END_TEST

/* Scores beyond float32 (Q = K = 1e19, d = 64: 8e38): the cuda backend
 * refuses them as the cpu does, in every dtype, kernel and norm, through
 * run and time (never zeros with MK_OK); just below the limit (Q = K = 2^59,
 * scores 2^121 = 2.7e36, all equal) fp32 and bf16 give the mean of V's
 * rows, as the cpu does (fp16 refuses such inputs for its own range). */
START_TEST(overflow_refused_like_cpu)
{
	const mk_attn_backend *gpu = backend("cuda");
	mk_mask *m = mcase_mask(&mcases[0]);
	mk_attn_layout *l;
	mk_attn_stats st;
	double secs[1];
	cuda_case c;
	size_t count;

	case_new(&c, 100, 64);
	count = (size_t)(4 * c.s.n * c.s.d);
	ck_assert_int_eq(mk_attn_prepare(gpu, m, 64, 0, &l), MK_OK);
	for (size_t x = 0; x < count; x++)
		c.v[x] = (float)((x / 64) % 100); /* row j of each slice: j */
	for (int big = 1; big >= 0; big--) {
		for (size_t x = 0; x < count; x++)
			c.q[x] = c.k[x] = big ? 1e19f : 0x1p59f;
		for (int t = 0; t < 3; t++)
			for (int k = 0; k < MK_KERNEL_COUNT; k++)
				for (int ni = 0; ni < 4; ni++) {
					mk_norm norm;
					int ret;
					ck_assert_int_eq(mk_norm_parse(norms[ni], &norm), MK_OK);
					ck_assert_int_eq(mk_attn_configure(gpu, 0, dtypes[t]), MK_OK);
					ret = mk_attn_run(gpu, (mk_attn_kernel)k, &norm, &c.s, c.q, c.k,
							  c.v, l, c.o, &st);
					if (big || t == 1) {
						ck_assert_msg(ret == MK_ERANGE, "%s %s %s: %d",
							      mk_compute_name(dtypes[t]),
							      mk_attn_kernel_name((mk_attn_kernel)k),
							      norms[ni], ret);
						ck_assert_int_eq(mk_attn_time(gpu, (mk_attn_kernel)k, &norm,
									  &c.s, c.q, c.k, c.v, l, 0,
									  1, secs, c.o, &st),
								 MK_ERANGE);
						continue;
					}
					ck_assert_msg(ret == MK_OK, "%s: %s",
						      mk_compute_name(dtypes[t]), mk_error());
					for (size_t x = 0; x < count; x++)
						ck_assert_msg(fabsf(c.o[x] - 49.5f) <= 0.05f,
							      "%s %s %s: o[%zu] = %g",
							      mk_compute_name(dtypes[t]),
							      mk_attn_kernel_name((mk_attn_kernel)k),
							      norms[ni], x, (double)c.o[x]);
				}
	}
	mk_attn_layout_free(l);
	case_release(&c);
	mk_mask_free(m);
}
END_TEST

START_TEST(device_selection_and_description)
{
	const mk_attn_backend *gpu = backend("cuda");
	mk_machine mach;
	ck_assert_int_eq(mk_attn_configure(gpu, 1023, MK_COMPUTE_FP32), MK_EINVAL);
	ck_assert_msg(strstr(mk_error(), "device 1023") != NULL, "%s", mk_error());
	ck_assert_int_eq(mk_attn_configure(gpu, 0, MK_COMPUTE_COUNT), MK_EINVAL);
	ck_assert_int_eq(mk_attn_configure(gpu, 0, MK_COMPUTE_FP16), MK_OK);
	ck_assert_int_eq(mk_attn_check_dtype(gpu, MK_COMPUTE_BF16), MK_OK);
	ck_assert_uint_eq(mk_attn_backend_dtypes(gpu), (1u << MK_COMPUTE_COUNT) - 1);
	mk_machine_describe_backend(gpu, &mach);
	ck_assert_str_ne(mach.gpu, "");
	ck_assert_int_gt(mach.gpu_sms, 0);
	ck_assert_str_ne(mach.gpu_driver, "");
}
END_TEST

static Suite *cuda_suite(void)
{
	Suite *s = suite_create("cuda");
	/* two cases, so that CK_RUN_CASE=kernels runs the mask cases alone
	 * (under racecheck, which makes every launch slow) */
	TCase *tk = tcase_create("kernels"), *tc = tcase_create("core");
	tcase_set_timeout(tk, 300);
	tcase_set_timeout(tc, 300);
	select_masks();
	tcase_add_loop_test(tk, kernels_match_reference_and_cpu, 0, nselected);
	suite_add_tcase(s, tk);
	tcase_add_test(tc, plain_layout_runs);
	tcase_add_test(tc, timer_matches_run);
	tcase_add_test(tc, overflow_refused_like_cpu);
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
	/* the backend's buffers, stream and events (for memcheck's leak check) */
	mk_attn_release(mk_attn_backend_get("cuda"));
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
