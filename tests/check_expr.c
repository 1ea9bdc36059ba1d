/* Unit tests of the expression language: parsing, errors, evaluation, blocks. */
#include "config.h"
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "maskkit.h"
#include "testutil.h"

static mk_mask *build(const char *text, int64_t n, uint64_t seed)
{
	mk_expr *e;
	mk_mask *m;
	mk_bind_opts o = {.n = n, .seed = seed, .need_cols = true};
	ck_assert_msg(mk_expr_parse(text, &e) == MK_OK, "%s: %s", text, mk_error());
	ck_assert_msg(mk_expr_bind(e, &o) == MK_OK, "%s: %s", text, mk_error());
	ck_assert_int_eq(mk_expr_to_mask(e, &m), MK_OK);
	mk_expr_free(e);
	return m;
}

/* Expects a parse (or bind) failure whose message contains `want`. */
static void expect_error(const char *text, int64_t n, const char *want)
{
	mk_expr *e = NULL;
	mk_bind_opts o = {.n = n};
	int ret = mk_expr_parse(text, &e);
	if (ret == MK_OK) {
		ret = mk_expr_bind(e, &o);
		mk_expr_free(e);
	}
	ck_assert_msg(ret != MK_OK, "'%s' was accepted", text);
	ck_assert_msg(strstr(mk_error(), want), "'%s': message '%s' lacks '%s'", text, mk_error(),
		      want);
}

static bool cell(int64_t i, int64_t j, int64_t w) /* d <= w, written out */
{
	return (i > j ? i - j : j - i) <= w;
}

START_TEST(shorthand_and_keyword_agree)
{
	mk_mask *a = build("local2", 40, 0), *b = build("local(w=2)", 40, 0),
		*c = build("local(2)", 40, 0);
	ck_assert(mk_mask_equal(a, b));
	ck_assert(mk_mask_equal(a, c));
	for (int64_t i = 0; i < 40; i++)
		for (int64_t j = 0; j < 40; j++)
			ck_assert(mk_mask_test(a, i, j) == cell(i, j, 2));
	mk_mask_free(a);
	mk_mask_free(b);
	mk_mask_free(c);
}
END_TEST

START_TEST(operators_are_set_operations)
{
	const int64_t n = 33;
	mk_mask *orr = build("local1+causal", n, 0), *andd = build("local3&causal", n, 0),
		*minus = build("local3-diag", n, 0), *nott = build("~local1", n, 0);
	for (int64_t i = 0; i < n; i++)
		for (int64_t j = 0; j < n; j++) {
			ck_assert(mk_mask_test(orr, i, j) == (cell(i, j, 1) || j <= i));
			ck_assert(mk_mask_test(andd, i, j) == (cell(i, j, 3) && j <= i));
			ck_assert(mk_mask_test(minus, i, j) == (cell(i, j, 3) && i != j));
			ck_assert(mk_mask_test(nott, i, j) == !cell(i, j, 1));
		}
	mk_mask_free(orr);
	mk_mask_free(andd);
	mk_mask_free(minus);
	mk_mask_free(nott);
}
END_TEST

START_TEST(and_binds_tighter_than_or_and_minus_is_left_assoc)
{
	const int64_t n = 20;
	mk_mask *a = build("local1+local3&causal", n, 0), *b = build("local1+(local3&causal)", n, 0),
		*c = build("(local1+local3)&causal", n, 0), *d = build("full-local1-diag", n, 0);
	ck_assert(mk_mask_equal(a, b));
	ck_assert(!mk_mask_equal(a, c));
	/* (full - local1) - diag == full - local1 since diag is inside local1 */
	ck_assert_uint_eq(mk_mask_count(d), (uint64_t)(n * n - (n * 3 - 2)));
	mk_mask_free(a);
	mk_mask_free(b);
	mk_mask_free(c);
	mk_mask_free(d);
}
END_TEST

START_TEST(papers_names_parse)
{
	const char *ok[] = {"local2+global1+random1", "strided-diag", "(local3+global1)&causal",
			    "bigbird(w=1,r=2)", "axis(rows=0,cols=0,7)", "diagonal(offsets=0,1,4)",
			    " local2 + global1 ", "fixed(l=4,c=1,causal=1)", "logsparse(causal=true)",
			    "local2(block=4)", "~(star)"};
	for (size_t k = 0; k < sizeof ok / sizeof *ok; k++) {
		mk_mask *m = build(ok[k], 16, 0);
		mk_mask_free(m);
	}
}
END_TEST

START_TEST(list_parameters_continue_after_commas)
{
	/* axis(rows=0,cols=0,7): row 0, columns 0 and 7 */
	mk_mask *m = build("axis(rows=0,cols=0,7)", 10, 0);
	for (int64_t i = 0; i < 10; i++)
		for (int64_t j = 0; j < 10; j++)
			ck_assert(mk_mask_test(m, i, j) == (i == 0 || j == 0 || j == 7));
	mk_mask_free(m);
}
END_TEST

START_TEST(errors_name_the_column)
{
	expect_error("bigbrd", 8, "unknown pattern 'bigbrd' (did you mean 'bigbird'?)");
	expect_error("local2+", 8, "column 8");
	expect_error("local2 + (global1", 8, "missing ')'");
	expect_error("local2)", 8, "column 7: unbalanced ')'");
	expect_error("local(w=1", 8, "missing ')'");
	expect_error("local(v=1)", 8, "'local' has no parameter 'v'");
	expect_error("local(w=1,w=2)", 8, "given twice");
	expect_error("local(w=x)", 8, "column 9");
	expect_error("local(w=1.5)", 8, "expected an integer");
	expect_error("full3", 8, "'full' takes no numeric suffix");
	expect_error("logsparse(causal=2)", 8, "0 or 1");
	expect_error("local(w=1,2)", 8, "takes one value");
	expect_error("local(block=0)", 8, "block must be at least 1");
	expect_error("local2 global1", 8, "column 8: expected an operator");
	expect_error("", 8, "empty expression");
	expect_error("local1 + ", 8, "column 10: expected a term after the operator");
	expect_error("local(w=99999999999999999999)", 8, "too large");
	expect_error("missing.npy", 0, "missing.npy");
	expect_error("local2", 0, "not known: give it (n)");
}
END_TEST

START_TEST(deep_nesting_is_refused_not_crashing)
{
	char buf[2100];
	memset(buf, '(', 1000);
	memcpy(buf + 1000, "diag", 4);
	memset(buf + 1004, ')', 1000);
	buf[2004] = '\0';
	expect_error(buf, 8, "nested too deeply");
}
END_TEST

START_TEST(block_layout_expands_the_grid)
{
	/* local1 on blocks of 4 at n = 10: grid of 3 blocks, block rows/cols
	 * bi, bj attend when |bi - bj| <= 1; the last block is partial (2 wide). */
	mk_mask *m = build("local(w=1,block=4)", 10, 0);
	for (int64_t i = 0; i < 10; i++)
		for (int64_t j = 0; j < 10; j++)
			ck_assert(mk_mask_test(m, i, j) == cell(i / 4, j / 4, 1));
	mk_mask_free(m);
}
END_TEST

START_TEST(columns_are_the_transpose)
{
	const char *exprs[] = {"causal+local1", "(random1+global1)&~causal", "fixed-diag",
			       "bigbird(block=3)-local1", "strided(causal=1)+axis(rows=2)",
			       "longformer(w=1,g=3,seed=9)&logsparse"};
	const int64_t n = 29;
	for (size_t k = 0; k < sizeof exprs / sizeof *exprs; k++) {
		mk_expr *e;
		mk_mask *m;
		mk_cursor *c;
		uint64_t col[1];
		mk_bind_opts o = {.n = n, .seed = 5, .need_cols = true};
		ck_assert_int_eq(mk_expr_parse(exprs[k], &e), MK_OK);
		ck_assert_int_eq(mk_expr_bind(e, &o), MK_OK);
		ck_assert_int_eq(mk_expr_to_mask(e, &m), MK_OK);
		ck_assert_int_eq(mk_cursor_new(e, &c), MK_OK);
		for (int64_t j = 0; j < n; j++) {
			ck_assert_int_eq(mk_cursor_col(c, j, col), MK_OK);
			for (int64_t i = 0; i < n; i++)
				ck_assert_msg(mk_bit_test(col, i) == mk_mask_test(m, i, j),
					      "%s: column %lld row %lld", exprs[k], (long long)j,
					      (long long)i);
		}
		mk_cursor_free(c);
		mk_mask_free(m);
		mk_expr_free(e);
	}
}
END_TEST

START_TEST(seed_option_and_seed_parameter)
{
	mk_mask *a = build("random1", 64, 1), *b = build("random1", 64, 1),
		*c = build("random1", 64, 2), *d = build("random(size=1,seed=1)", 64, 2);
	ck_assert(mk_mask_equal(a, b));
	ck_assert(!mk_mask_equal(a, c));
	ck_assert(mk_mask_equal(a, d)); /* an explicit seed wins over the global one */
	mk_mask_free(a);
	mk_mask_free(b);
	mk_mask_free(c);
	mk_mask_free(d);
}
END_TEST

START_TEST(files_are_terms_and_sizes_must_agree)
{
	char dir[] = "/tmp/mkexprXXXXXX", path[64], text[96];
	FILE *f;
	mk_mask *m;
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/a-b.txt", dir);
	f = fopen(path, "w");
	fputs("#...\n.#..\n..#.\n...#\n", f);
	fclose(f);
	snprintf(text, sizeof text, "%s+local1", path);
	m = build(text, 0, 0); /* n comes from the file */
	ck_assert_int_eq(mk_mask_n(m), 4);
	ck_assert_uint_eq(mk_mask_count(m), 10);
	mk_mask_free(m);
	expect_error(text, 5, "mask sizes differ");
	unlink(path);
	rmdir(dir);
}
END_TEST

START_TEST(canonical_parameters_show_defaults_and_seed)
{
	mk_expr *e;
	mk_bind_opts o = {.n = 128, .seed = 42};
	ck_assert_int_eq(mk_expr_parse("bigbird+local2(block=2)", &e), MK_OK);
	ck_assert_str_eq(mk_expr_text(e), "bigbird+local2(block=2)");
	ck_assert_int_eq(mk_expr_bind(e, &o), MK_OK);
	ck_assert_str_eq(mk_expr_params(e), "bigbird(w=1,r=2,g=2,seed=42) + local(w=2,block=2)");
	ck_assert_int_eq(mk_expr_n(e), 128);
	mk_expr_free(e);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("expr");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, shorthand_and_keyword_agree);
	tcase_add_test(tc, operators_are_set_operations);
	tcase_add_test(tc, and_binds_tighter_than_or_and_minus_is_left_assoc);
	tcase_add_test(tc, papers_names_parse);
	tcase_add_test(tc, list_parameters_continue_after_commas);
	tcase_add_test(tc, errors_name_the_column);
	tcase_add_test(tc, deep_nesting_is_refused_not_crashing);
	tcase_add_test(tc, block_layout_expands_the_grid);
	tcase_add_test(tc, columns_are_the_transpose);
	tcase_add_test(tc, seed_option_and_seed_parameter);
	tcase_add_test(tc, files_are_terms_and_sizes_must_agree);
	tcase_add_test(tc, canonical_parameters_show_defaults_and_seed);
	suite_add_tcase(s, tc);
	return mk_test_main(s);
}
