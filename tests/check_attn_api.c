/* Unit tests of the attention engine's API: normalisations and kernel names
 * parsed and formatted, the backend table, calls refused with a message,
 * and hand-counted layouts.  The kernels against the reference:
 * check_attn.c. */
#include "config.h"
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include "maskkit.h"
#include "testutil.h"
#include "attntest.h"

static void clear_error(void)
{
	mk_error_set(MK_OK, "%s", "");
}

static void expect_norm(const mk_norm *got, const mk_norm *want, const char *what)
{
	ck_assert_msg(got->kind == want->kind, "%s: kind %d", what, (int)got->kind);
	if (want->kind == MK_NORM_HNAS)
		ck_assert_msg(got->u == want->u, "%s: u = %g", what, got->u);
	if (want->kind == MK_NORM_SINKHORN)
		ck_assert_msg(got->iters == want->iters, "%s: iters = %d", what, got->iters);
}

START_TEST(norm_parse_accepts)
{
	mk_norm n;
	ck_assert_msg(mk_norm_parse(ncases[_i].text, &n) == MK_OK, "%s", mk_error());
	expect_norm(&n, &ncases[_i].norm, ncases[_i].text);
}
END_TEST

START_TEST(norm_parse_rejects)
{
	static const char *const bad[] = {"hnas:2", "hnas:x", "sinkhorn:0", "sinkhorn", "foo"};
	mk_norm n;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		clear_error();
		ck_assert_msg(mk_norm_parse(bad[i], &n) == MK_EINVAL, "'%s' accepted", bad[i]);
		ck_assert_msg(mk_error()[0] != '\0', "'%s': no message", bad[i]);
	}
}
END_TEST

/* Formatting gives the canonical spelling, which parses back the same. */
START_TEST(norm_format_round_trips)
{
	mk_norm n;
	char buf[64];
	mk_norm_format(&ncases[_i].norm, buf, sizeof buf);
	ck_assert_str_eq(buf, ncases[_i].text);
	ck_assert_int_eq(mk_norm_parse(buf, &n), MK_OK);
	expect_norm(&n, &ncases[_i].norm, buf);
}
END_TEST

START_TEST(kernel_names_round_trip)
{
	mk_attn_kernel k;
	for (int i = 0; i < MK_KERNEL_COUNT; i++) {
		const char *name = mk_attn_kernel_name((mk_attn_kernel)i);
		ck_assert_ptr_nonnull(name);
		ck_assert_int_eq(mk_attn_kernel_parse(name, &k), MK_OK);
		ck_assert_int_eq(k, i);
	}
	clear_error();
	ck_assert_int_eq(mk_attn_kernel_parse("fast", &k), MK_EINVAL);
	ck_assert_str_ne(mk_error(), "");
}
END_TEST

START_TEST(backend_lookup)
{
	const mk_attn_backend *b = cpu();
	ck_assert_str_eq(b->name, "cpu");
	ck_assert_ptr_nonnull(b->run);
	for (int k = 0; k < MK_KERNEL_COUNT; k++)
		ck_assert_msg(b->kernels & (1u << k), "cpu lacks kernel %d", k);
	/* what users see of the table */
	ck_assert_str_eq(mk_attn_backend_name(b), "cpu");
	ck_assert_uint_eq(mk_attn_backend_kernels(b), b->kernels);
	ck_assert_int_eq(mk_attn_backend_max_head_dim(b), b->max_head_dim);
	ck_assert_uint_eq(mk_attn_backend_dtypes(b), (1u << MK_COMPUTE_FP32) | (1u << MK_COMPUTE_BF16));
	clear_error();
	ck_assert_ptr_null(mk_attn_backend_get("nope"));
	ck_assert_str_ne(mk_error(), "");
#ifndef HAVE_CUDA
	clear_error();
	ck_assert_ptr_null(mk_attn_backend_get("cuda"));
	ck_assert_msg(strstr(mk_error(), "built") != NULL, "message '%s'", mk_error());
#endif
}
END_TEST

/* Calls that must fail with a user error and a message (d = -1: one above
 * max_head_dim; layout: one of n = 10). */
static const struct rcase {
	const char *what;
	mk_attn_kernel kern;
	int64_t n, d;
	bool layout;
} rcases[] = {
	{"layout n 10, shape n 12", MK_KERNEL_MASKED, 12, 8, true},
	{"no mask for masked", MK_KERNEL_MASKED, 10, 8, false},
	{"no mask for block", MK_KERNEL_BLOCK, 10, 8, false},
	{"no mask for csr", MK_KERNEL_CSR, 10, 8, false},
	{"d above max_head_dim", MK_KERNEL_DENSE, 10, -1, false},
	{"d = 0", MK_KERNEL_DENSE, 10, 0, false},
	{"n = 0", MK_KERNEL_DENSE, 0, 8, false},
};

START_TEST(run_rejects_bad_call)
{
	const struct rcase *c = &rcases[_i];
	mk_attn_shape s = {1, 1, c->n, c->d < 0 ? cpu()->max_head_dim + 1 : c->d, 0};
	tdata t = tdata_new(1, 1, 12, cpu()->max_head_dim + 1, 1);
	mk_mask *m = build("local1", 10, 0);
	mk_attn_layout *l = c->layout ? layout(m, 16) : NULL;
	mk_attn_stats st;
	int ret;
	clear_error();
	ret = mk_attn_run(cpu(), c->kern, &ncases[0].norm, &s, t.q, t.k, t.v, l, t.o, &st);
	ck_assert_msg(ret == MK_EINVAL || ret == MK_ERANGE, "%s: got %d", c->what, ret);
	ck_assert_msg(mk_error()[0] != '\0', "%s: no message", c->what);
	mk_attn_layout_free(l);
	mk_mask_free(m);
	free(t.q);
}
END_TEST

START_TEST(layout_rejects_tile_zero)
{
	mk_mask *m = build("local1", 8, 0);
	mk_attn_layout *l = NULL;
	clear_error();
	ck_assert_int_eq(mk_attn_layout_new(m, 0, 0, &l), MK_EINVAL);
	ck_assert_str_ne(mk_error(), "");
	mk_mask_free(m);
}
END_TEST

/* Hand-counted layouts:
 * - local1, n = 12, tile 4: 12 + 2*11 = 34 entries; of the 3 x 3 tiles the 3
 *   diagonal ones and the 4 beside them are non-empty, (0,2), (2,0) not: 7/9;
 * - diag, n = 10, tile 4, rows 2 and 5 cleared: 8 entries; only the 3
 *   diagonal tiles (the last cut short) are non-empty: 3/9; 2 empty rows;
 * - diag, n = 8, tile 64: one tile, cut short and non-empty: 1/1. */
static const struct lcase {
	const char *expr;
	int64_t n, tile, clear[2], nnz, empty_rows;
	double density;
} lcases[] = {
	{"local1", 12, 4, {-1, -1}, 34, 0, 7.0 / 9.0},
	{"diag", 10, 4, {2, 5}, 8, 2, 3.0 / 9.0},
	{"diag", 8, 64, {-1, -1}, 8, 0, 1.0},
};

START_TEST(layout_counts)
{
	const struct lcase *c = &lcases[_i];
	mk_mask *m = build(c->expr, c->n, 0);
	mk_attn_layout *l;
	for (int r = 0; r < 2; r++)
		if (c->clear[r] >= 0)
			mk_mask_set(m, c->clear[r], c->clear[r], false);
	l = layout(m, c->tile);
	ck_assert_int_eq(mk_attn_layout_n(l), c->n);
	ck_assert_int_eq(mk_attn_layout_tile(l), c->tile);
	ck_assert_uint_eq(mk_attn_layout_nnz(l), (uint64_t)c->nnz);
	ck_assert_double_eq_tol(mk_attn_layout_density(l), c->density, 1e-12);
	ck_assert_int_eq(mk_attn_layout_empty_rows(l), c->empty_rows);
	mk_attn_layout_free(l);
	mk_mask_free(m);
}
END_TEST

static Suite *attn_api_suite(void)
{
	Suite *s = suite_create("attn_api");
	TCase *tc = tcase_create("api");
	tcase_add_loop_test(tc, norm_parse_accepts, 0, NCASES_NORM);
	tcase_add_test(tc, norm_parse_rejects);
	tcase_add_loop_test(tc, norm_format_round_trips, 0, NCASES_NORM);
	tcase_add_test(tc, kernel_names_round_trip);
	tcase_add_test(tc, backend_lookup);
	tcase_add_loop_test(tc, run_rejects_bad_call, 0, 7);
	tcase_add_test(tc, layout_rejects_tile_zero);
	tcase_add_loop_test(tc, layout_counts, 0, 3);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return mk_test_main(attn_api_suite());
}
