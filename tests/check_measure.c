/* Unit tests of the streaming measurement against brute force and closed forms. */
#include "config.h"
#include <check.h>
#include <math.h>
#include <string.h>
#include "maskkit.h"
#include "testutil.h"

static const int64_t default_tiles[2] = {64, 128};

static mk_expr *bound(const char *text, int64_t n)
{
	mk_expr *e;
	mk_bind_opts o = {.n = n, .seed = 3, .need_cols = true};
	ck_assert_msg(mk_expr_parse(text, &e) == MK_OK, "%s: %s", text, mk_error());
	ck_assert_msg(mk_expr_bind(e, &o) == MK_OK, "%s: %s", text, mk_error());
	return e;
}

static void measure(const char *text, int64_t n, const int64_t *tiles, size_t nt, mk_measure *r)
{
	mk_expr *e = bound(text, n);
	ck_assert_msg(mk_measure_expr(e, tiles, nt, NULL, NULL, r) == MK_OK, "%s", mk_error());
	mk_expr_free(e);
}

/* The streamed tile statistics s against mk_mask_tiles on the materialised mask. */
static void expect_tiles(const mk_mask *m, const mk_tile_stats *s, const char *what)
{
	mk_tiles *t;
	uint64_t nonempty = 0, full = 0, cells = 0;
	ck_assert_int_eq(mk_mask_tiles(m, s->block, &t), MK_OK);
	for (int64_t bi = 0; bi < t->nb; bi++)
		for (int64_t bj = 0; bj < t->nb; bj++) {
			uint8_t st = t->state[bi * t->nb + bj];
			nonempty += st != MK_TILE_EMPTY;
			full += st == MK_TILE_FULL;
			cells += st != MK_TILE_EMPTY ? mk_tiles_area(t, bi, bj) : 0;
		}
	ck_assert_msg(s->nonempty == nonempty && s->full == full && s->cells_in_nonempty == cells,
		      "%s at B = %lld: %llu/%llu/%llu non-empty/full/cells, expected %llu/%llu/%llu",
		      what, (long long)s->block, (unsigned long long)s->nonempty,
		      (unsigned long long)s->full, (unsigned long long)s->cells_in_nonempty,
		      (unsigned long long)nonempty, (unsigned long long)full,
		      (unsigned long long)cells);
	mk_tiles_free(t);
}

/* Everything measure reports, recomputed cell by cell from the materialised mask. */
static void check_against_brute_force(const char *text, int64_t n, int64_t tile)
{
	mk_expr *e = bound(text, n);
	mk_mask *m;
	mk_measure r;
	uint64_t count = 0, diag = 0;
	int64_t rmin = INT64_MAX, rmax = 0, empty = 0;
	bool sym = true, causal = true, toep = true;
	ck_assert_int_eq(mk_measure_expr(e, &tile, 1, NULL, NULL, &r), MK_OK);
	ck_assert_int_eq(mk_expr_to_mask(e, &m), MK_OK);
	for (int64_t i = 0; i < n; i++) {
		int64_t c = 0;
		for (int64_t j = 0; j < n; j++) {
			bool v = mk_mask_test(m, i, j);
			c += v;
			diag += v && i == j;
			sym &= v == mk_mask_test(m, j, i);
			causal &= !(v && j > i);
			if (i + 1 < n && j + 1 < n)
				toep &= v == mk_mask_test(m, i + 1, j + 1);
		}
		count += (uint64_t)c;
		rmin = c < rmin ? c : rmin;
		rmax = c > rmax ? c : rmax;
		empty += c == 0;
	}
	ck_assert_uint_eq(r.count, count);
	ck_assert_uint_eq(r.diag, diag);
	ck_assert_int_eq(r.row_min, rmin);
	ck_assert_int_eq(r.row_max, rmax);
	ck_assert_int_eq(r.empty_rows, empty);
	ck_assert_msg(r.symmetric == sym, "%s: symmetric", text);
	ck_assert_msg(r.causal == causal, "%s: causal", text);
	ck_assert_msg(r.toeplitz == toep, "%s: toeplitz", text);
	expect_tiles(m, &r.tiles[0], text);
	mk_mask_free(m);
	mk_expr_free(e);
}

START_TEST(matches_brute_force)
{
	static const char *exprs[] = {
		"local2", "causal", "global2", "random1", "star", "logsparse", "strided",
		"fixed", "longformer", "bigbird", "local2+global1+random1", "strided-diag",
		"(local3+global1)&causal", "axis(rows=3)", "causal+~causal", "bigbird(block=8)",
		"diagonal(offsets=0,5)", "none", "local1+axis(rows=6)", "axis(rows=2,5,cols=5,2)",
		"logsparse(causal=1)", "strided(l=3,causal=1)+~strided(l=5)"};
	static const int64_t sizes[] = {7, 64, 100, 1000};
	static const int64_t tiles[] = {1, 16, 64, 96};
	for (size_t k = 0; k < sizeof exprs / sizeof *exprs; k++)
		for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
			check_against_brute_force(exprs[k], sizes[s], tiles[(k + s) % 4]);
	/* n = 1: patterns without explicit positions */
	for (size_t k = 0; k < 13; k++)
		check_against_brute_force(exprs[k], 1, 1);
}
END_TEST

START_TEST(several_tile_sizes_at_once)
{
	/* unordered, nested (32 | 64 | 128, 16 | 96) and not (96 vs 64): larger
	 * sizes fed from smaller ones must count as if fed by rows */
	static const int64_t tiles[] = {96, 16, 128, 64, 32, 7};
	static const char *exprs[] = {"bigbird", "causal", "fixed(l=24)", "local5+axis(rows=600)",
				      "strided(l=40)-diag"};
	for (size_t k = 0; k < sizeof exprs / sizeof *exprs; k++) {
		mk_expr *e = bound(exprs[k], 1000);
		mk_measure r;
		mk_mask *m;
		ck_assert_int_eq(mk_measure_expr(e, tiles, 6, NULL, NULL, &r), MK_OK);
		ck_assert_int_eq(mk_expr_to_mask(e, &m), MK_OK);
		for (size_t t = 0; t < 6; t++) {
			ck_assert_int_eq(r.tiles[t].block, tiles[t]);
			expect_tiles(m, &r.tiles[t], exprs[k]);
		}
		mk_mask_free(m);
		mk_expr_free(e);
	}
}
END_TEST

START_TEST(local2_closed_form)
{
	/* d <= 2 has 5n - 6 cells, so rho = 1 - 5/n + 6/n^2 for every n >= 3 */
	for (int64_t n = 3; n < 400; n += 37) {
		mk_measure r;
		double nn = (double)n;
		measure("local2", n, default_tiles, 2, &r);
		ck_assert_uint_eq(r.count, (uint64_t)(5 * n - 6));
		ck_assert_double_eq_tol(r.sparsity, 1 - 5 / nn + 6 / (nn * nn), 1e-12);
		/* without its diagonal local2 keeps 4n - 6 cells */
		ck_assert_double_eq_tol(r.sparsity_nodiag, 1 - (4 * nn - 6) / (nn * nn), 1e-12);
		ck_assert_int_eq(r.row_min, 3);
		ck_assert_int_eq(r.row_max, n >= 5 ? 5 : n);
		ck_assert(r.symmetric && r.toeplitz && !r.causal);
	}
}
END_TEST

START_TEST(causal_closed_form_and_flags)
{
	mk_measure r;
	measure("causal", 1000, default_tiles, 2, &r);
	ck_assert_uint_eq(r.count, 1000 * 1001 / 2);
	ck_assert(r.causal && r.toeplitz && !r.symmetric);
	ck_assert_int_eq(r.row_min, 1);
	ck_assert_int_eq(r.row_max, 1000);
	/* 16 x 16 tiles of 64 (the last 40 wide): 16*17/2 non-empty; full are the
	 * 15*16/2 below the diagonal minus the 15 in the cut-short last tile row */
	ck_assert_uint_eq(r.tiles[0].nonempty, 136);
	ck_assert_uint_eq(r.tiles[0].full, 105);
}
END_TEST

START_TEST(empty_rows_are_flagged)
{
	mk_measure r;
	measure("axis(rows=5)", 50, default_tiles, 2, &r);
	ck_assert_int_eq(r.empty_rows, 49);
	ck_assert_int_eq(r.first_empty_row, 0);
	measure("local1-diag-axis(cols=0)", 50, default_tiles, 2, &r);
	/* row 0 keeps only column 1; row 1 only column 2 (column 0 removed) */
	ck_assert_int_eq(r.empty_rows, 0);
	measure("diag&causal-diag", 50, default_tiles, 2, &r);
	ck_assert_int_eq(r.empty_rows, 50);
}
END_TEST

START_TEST(late_violations_are_found_across_chunks)
{
	/* the only asymmetric / non-Toeplitz rows sit far from row 0 */
	mk_measure r;
	measure("local1+axis(rows=7000)", 8000, default_tiles, 2, &r);
	ck_assert(!r.toeplitz && !r.symmetric);
	measure("local1+axis(rows=7000,cols=7000)", 8000, default_tiles, 2, &r);
	ck_assert(!r.toeplitz && r.symmetric);
}
END_TEST

START_TEST(streams_sizes_no_matrix_could_hold)
{
	/* n = 2^18: the bit matrix would be 8 GiB; streaming needs rows only
	 * (2^20, 128 GiB, under a 1 GiB limit: tests/cli's
	 * measure_every_pattern_large, in the plain build: 13 s here, 150 s
	 * under the sanitizers) */
	mk_measure r;
	int64_t n = (int64_t)1 << 18;
	measure("local2", n, default_tiles, 2, &r);
	ck_assert_uint_eq(r.count, (uint64_t)(5 * n - 6));
	ck_assert_uint_eq(r.tiles[1].nonempty, (uint64_t)(3 * (n / 128) - 2));
}
END_TEST

START_TEST(rejects_bad_tile_sizes)
{
	mk_expr *e = bound("local1", 16);
	mk_measure r;
	int64_t bad = 0;
	ck_assert_int_eq(mk_measure_expr(e, &bad, 1, NULL, NULL, &r), MK_EINVAL);
	mk_expr_free(e);
}
END_TEST

/* The reported result: the expression's text kept after it is freed, the
 * record's JSON keys in measure --json's order, tiles as a list. */
START_TEST(mask_measure_record)
{
	mk_expr *e = bound("local2", 16);
	mk_mask_measure r;
	char *json;
	const char *keys[] = {"\"expr\"", "\"params\"", "\"n\"", "\"kv_len\"", "\"count\"",
			      "\"sparsity\"", "\"sparsity_nodiag\"", "\"diagonal\"", "\"rows\"",
			      "\"first_empty\"", "\"symmetric\"", "\"causal\"", "\"toeplitz\"",
			      "\"tiles\"", "\"effective_sparsity\""};
	const char *at;

	ck_assert_int_eq(mk_measure_mask(e, default_tiles, 2, NULL, NULL, &r), MK_OK);
	mk_expr_free(e);
	ck_assert_str_eq(r.expr, "local2");
	ck_assert_int_eq(r.ntiles, 2);
	ck_assert_int_eq(r.m.count, 5 * 16 - 6);
	json = mk_emit_json_text(&mk_mask_measure_record, &r, 1, 0);
	ck_assert_ptr_nonnull(json);
	at = json;
	for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
		at = strstr(at, keys[k]);
		ck_assert_msg(at != NULL, "%s missing or out of order in %s", keys[k], json);
	}
	ck_assert_ptr_null(strstr(json, "keys per row"));
	free(json);
	mk_mask_measure_release(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("measure");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, matches_brute_force);
	tcase_add_test(tc, several_tile_sizes_at_once);
	tcase_add_test(tc, local2_closed_form);
	tcase_add_test(tc, causal_closed_form_and_flags);
	tcase_add_test(tc, empty_rows_are_flagged);
	tcase_add_test(tc, late_violations_are_found_across_chunks);
	tcase_add_test(tc, streams_sizes_no_matrix_could_hold);
	tcase_add_test(tc, rejects_bad_tile_sizes);
	tcase_add_test(tc, mask_measure_record);
	suite_add_tcase(s, tc);
	return mk_test_main(s);
}
