/*
 * Unit tests of the pattern families: hand-worked masks at n = 8 and 16,
 * closed forms and brute-force definitions over many n, columns against the
 * transposed rows, the random draws, clipping and bind errors.  Expected
 * values are written from the definitions, never taken from the code.
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pattern_testutil.h"

/* ---- registry and terms ---- */

START_TEST(test_registry)
{
	static const char *const names[] = {
		"full", "none", "diag", "causal", "local", "diagonal", "global", "axis",
		"random", "star", "logsparse", "strided", "fixed", "longformer", "bigbird", "prefix",
		"document",
	};
	size_t n = sizeof names / sizeof names[0];
	ck_assert_uint_eq(mk_pattern_count(), n);
	ck_assert_uint_eq(mk_pattern_def_count(), n);
	for (size_t k = 0; k < n; k++) {
		const mk_pattern_info *pi = mk_pattern_get(k);
		ck_assert_str_eq(pi->name, names[k]);
		ck_assert_ptr_eq(mk_pattern_find(names[k]), pi);
		ck_assert_ptr_eq(&mk_pattern_def_find(names[k])->info, pi);
		ck_assert(pi->summary && *pi->summary);
		ck_assert(mk_pattern_def_get(k)->symmetric || mk_pattern_def_get(k)->col);
		for (size_t q = 0; q < pi->nparams; q++)
			ck_assert(pi->params[q].doc && *pi->params[q].doc);
	}
	ck_assert_ptr_null(mk_pattern_get(n));
	ck_assert_ptr_null(mk_pattern_find("bigbrd"));
	ck_assert_str_eq(mk_pattern_find("local")->shorthand, "w");
	ck_assert_int_eq(mk_term_param_index(&mk_pat_fixed, "c"), 1);
	ck_assert_int_eq(mk_term_param_index(&mk_pat_fixed, "x"), -1);
}
END_TEST

START_TEST(test_term_defaults)
{
	mk_term t;
	ck_assert_int_eq(mk_term_init(&t, &mk_pat_diagonal), MK_OK);
	ck_assert_uint_eq(t.p[0].len, 1);
	ck_assert_int_eq(t.p[0].list[0], 0);
	ck_assert(!t.p[0].given);
	ck_assert_int_eq(t.block, 1);
	mk_term_release(&t);
	ck_assert_int_eq(mk_term_init(&t, &mk_pat_fixed), MK_OK);
	ck_assert_int_eq(t.p[0].i, 4);
	ck_assert_int_eq(t.p[1].i, 1);
	ck_assert_int_eq(t.p[2].i, 0);
	mk_term_release(&t);
	ck_assert_int_eq(mk_term_init(&t, &mk_pat_longformer), MK_OK);
	ck_assert_uint_eq(t.p[3].len, 0); /* tokens default "" */
	mk_term_release(&t);
	mk_term_release(&t); /* clearing twice is harmless */
}
END_TEST

/* Defaults of every kind, on a made-up pattern. */
static const mk_param_info fake_params[] = {
	{"xs", MK_PARAM_LIST, "1,22,-3", "a list"},
	{"e", MK_PARAM_LIST, NULL, "an empty list"},
	{"k", MK_PARAM_INT, "17", "an int"},
	{"b", MK_PARAM_BOOL, "1", "a bool"},
	{"r", MK_PARAM_INT, NULL, "no default"},
};
static const mk_pattern_def fake_def = {
	.info = {.name = "fake", .summary = "test", .params = fake_params, .nparams = 5},
};
static const mk_param_info bad_params[] = {{"b", MK_PARAM_BOOL, "2", "not a bool"}};
static const mk_pattern_def bad_def = {
	.info = {.name = "bad", .summary = "test", .params = bad_params, .nparams = 1},
};

START_TEST(test_term_parse)
{
	mk_term t;
	ck_assert_int_eq(mk_term_init(&t, &fake_def), MK_OK);
	ck_assert_uint_eq(t.p[0].len, 3);
	ck_assert_int_eq(t.p[0].list[0], 1);
	ck_assert_int_eq(t.p[0].list[1], 22);
	ck_assert_int_eq(t.p[0].list[2], -3);
	ck_assert_uint_eq(t.p[1].len, 0);
	ck_assert_int_eq(t.p[2].i, 17);
	ck_assert_int_eq(t.p[3].i, 1);
	ck_assert_int_eq(t.p[4].i, 0);
	mk_term_release(&t);
	ck_assert_int_eq(mk_term_init(&t, &bad_def), MK_EINTERNAL);
	ck_assert(strstr(mk_error(), "'b'") != NULL);
}
END_TEST

/* ---- hand-worked cases ---- */

typedef struct hand_case {
	const char *name, *params;
	uint64_t count8, count16;
	const char *pic[8]; /* at n = 8; NULL for random patterns */
} hand_case;

static const hand_case hand_cases[] = {
	/* n^2 and 0 */
	{"full", "", 64, 256, {"########", "########", "########", "########",
			       "########", "########", "########", "########"}},
	{"none", "", 0, 0, {"........", "........", "........", "........",
			    "........", "........", "........", "........"}},
	/* n */
	{"diag", "", 8, 16, {"#.......", ".#......", "..#.....", "...#....",
			     "....#...", ".....#..", "......#.", ".......#"}},
	/* n(n+1)/2: 36, 136 */
	{"causal", "", 36, 136, {"#.......", "##......", "###.....", "####....",
				 "#####...", "######..", "#######.", "########"}},
	/* 3n - 2 (rows 0 and n-1 lose one): 22, 46 */
	{"local", "", 22, 46, {"##......", "###.....", ".###....", "..###...",
			       "...###..", "....###.", ".....###", "......##"}},
	/* 5n - 6: 34, 74 */
	{"local", "w=2", 34, 74, {"###.....", "####....", "#####...", ".#####..",
				  "..#####.", "...#####", "....####", ".....###"}},
	/* d = 0: n; d = 3: 2(n - 3); 8 + 10 = 18, 16 + 26 = 42 */
	{"diagonal", "offsets=0,3", 18, 42, {"#..#....", ".#..#...", "..#..#..", "#..#..#.",
					     ".#..#..#", "..#..#..", "...#..#.", "....#..#"}},
	/* d = 2: 2(n - 2); 9 >= n adds nothing at 8, 2 x 7 at 16: 12, 28 + 14 = 42 */
	{"diagonal", "offsets=2,9", 12, 42, {"..#.....", "...#....", "#...#...", ".#...#..",
					     "..#...#.", "...#...#", "....#...", ".....#.."}},
	/* row 0 and column 0: 2n - 1: 15, 31 */
	{"global", "", 15, 31, {"########", "#.......", "#.......", "#.......",
				"#.......", "#.......", "#.......", "#......."}},
	/* two full rows and columns: n^2 - (n - 2)^2: 28, 60 */
	{"global", "tokens=5,2,5", 28, 60, {"..#..#..", "..#..#..", "########", "..#..#..",
					    "..#..#..", "########", "..#..#..", "..#..#.."}},
	/* one row (n) and two columns (2n) meeting in 2 cells: 3n - 2: 22, 46 */
	{"axis", "rows=1 cols=2,6", 22, 46, {"..#...#.", "########", "..#...#.", "..#...#.",
					     "..#...#.", "..#...#.", "..#...#.", "..#...#."}},
	/* band 3n - 2, row and column 0 2n - 1, sharing (0,0), (0,1), (1,0):
	 * 5n - 6: 34, 74 */
	{"star", "", 34, 74, {"########", "###.....", "####....", "#.###...",
			      "#..###..", "#...###.", "#....###", "#.....##"}},
	/* 2K = 2 keys per row, no repeats: 2n: 16, 32 */
	{"random", "", 16, 32, {NULL}},
	/* 2K = 8 >= 8 gives full rows at 8; 8 keys per row at 16: 64, 128 */
	{"random", "size=4", 64, 128, {NULL}},
	/* d = 0: n; each d in {1, 2, 4, 8} < n: 2(n - d).
	 * n = 8: 8 + 2(7 + 6 + 4) = 42; n = 16: 16 + 2(15 + 14 + 12 + 8) = 114 */
	{"logsparse", "", 42, 114, {"###.#...", "####.#..", "#####.#.", ".#####.#",
				    "#.#####.", ".#.#####", "..#.####", "...#.###"}},
	/* half of the off-diagonal cells: 8 + 17 = 25, 16 + 49 = 65 */
	{"logsparse", "causal=1", 25, 65, {"#.......", "##......", "###.....", ".###....",
					   "#.###...", ".#.###..", "..#.###.", "...#.###"}},
	/* d <= 3: 7n - 12; d in {4, 8, 12} < n: 2(n - d).
	 * n = 8: 44 + 8 = 52; n = 16: 100 + 24 + 16 + 8 = 148 */
	{"strided", "", 52, 148, {"#####...", "######..", "#######.", "########",
				  "########", ".#######", "..######", "...#####"}},
	/* the lower half: n = 8: 26 + 4 = 30; n = 16: 58 + 12 + 8 + 4 = 82 */
	{"strided", "causal=1", 30, 82, {"#.......", "##......", "###.....", "####....",
					 "#####...", ".#####..", "..#####.", "...#####"}},
	/* blocks of 4: 16 per block; each summary column (3, 7, ...) adds the
	 * n - 4 cells outside its block: 32 + 2 x 4 = 40; 64 + 4 x 12 = 112 */
	{"fixed", "", 40, 112, {"####...#", "####...#", "####...#", "####...#",
				"...#####", "...#####", "...#####", "...#####"}},
	/* lower triangles of blocks (10 each) plus summary keys of earlier
	 * blocks: 20 + 4 = 24; 40 + 12 + 8 + 4 = 64 */
	{"fixed", "causal=1", 24, 64, {"#.......", "##......", "###.....", "####....",
				       "...##...", "...###..", "...####.", "...#####"}},
	/* summary columns 2, 3, 6, 7: 32 + 4 x 4 = 48; 64 + 8 x 12 = 160 */
	{"fixed", "c=2", 48, 160, {"####..##", "####..##", "####..##", "####..##",
				   "..######", "..######", "..######", "..######"}},
	/* rows and columns of 0 and 5: n^2 - (n - 2)^2 = 28 / 60, plus the band
	 * d <= 2 among the other tokens: 3+4+4+4+3+2 = 20 at 8, and at 16 the
	 * band's 5n - 6 = 74 less the 14 cells in rows or columns 0, 5: 60 */
	{"longformer", "tokens=0,5", 48, 120, {"########", "####.#..", "######..", "######..",
					       "#.#####.", "########", "#...####", "#....###"}},
	/* rows and columns 0, 1: 28 / 60, plus the band d <= 1 in [2, n):
	 * 3(n - 2) - 2 = 16 / 40 */
	{"bigbird", "r=0", 44, 100, {"########", "########", "####....", "#####...",
				     "##.###..", "##..###.", "##...###", "##....##"}},
	/* r = 16 >= n draws every key: n^2 */
	{"bigbird", "r=16", 64, 256, {"########", "########", "########", "########",
				      "########", "########", "########", "########"}},
	/* rows 0..2 see the prefix (3 each), row i >= 3 sees i + 1:
	 * 9 + (4 + ... + 8) = 39; 9 + (4 + ... + 16) = 139 */
	{"prefix", "p=3", 39, 139, {"###.....", "###.....", "###.....", "####....",
				    "#####...", "######..", "#######.", "########"}},
	/* documents of 3 and 2 tokens, then padding: 9 + 4 = 13 at any n >= 5 */
	{"document", "lengths=3,2", 13, 13, {"###.....", "###.....", "###.....", "...##...",
					     "...##...", "........", "........", "........"}},
	/* their lower triangles: 6 + 3 = 9 */
	{"document", "lengths=3,2 causal=1", 9, 9, {"#.......", "##......", "###.....",
						    "...#....", "...##...", "........",
						    "........", "........"}},
};

#define NHAND ((int)(sizeof hand_cases / sizeof hand_cases[0]))

static void hand_expect(const hand_case *hc, const bool *m)
{
	for (int i = 0; i < 8; i++)
		for (int j = 0; j < 8; j++)
			CHECK(m[i * 8 + j] == (hc->pic[i][j] == '#'),
			      "%s(%s) at n = 8: cell (%d, %d) should be '%c'", hc->name,
			      hc->params, i, j, hc->pic[i][j]);
}

START_TEST(test_hand)
{
	const hand_case *hc = &hand_cases[_i];
	for (uint64_t seed = 0; seed < 3; seed++) {
		bool *m = mask_of(hc->name, hc->params, 8, seed);
		ck_assert_msg(mask_count(m, 8) == hc->count8, "%s(%s) at n = 8: %llu cells",
			      hc->name, hc->params, (unsigned long long)mask_count(m, 8));
		if (hc->pic[0])
			hand_expect(hc, m);
		free(m);
		ck_assert_uint_eq(count_of(hc->name, hc->params, 16, seed), hc->count16);
	}
}
END_TEST

/* Every pattern has at least one hand-worked case. */
START_TEST(test_hand_coverage)
{
	for (size_t k = 0; k < mk_pattern_count(); k++) {
		bool found = false;
		for (int h = 0; h < NHAND; h++)
			found |= strcmp(hand_cases[h].name, mk_pattern_get(k)->name) == 0;
		ck_assert_msg(found, "no hand case for '%s'", mk_pattern_get(k)->name);
	}
}
END_TEST

/* ---- closed forms over n = 1..200 ---- */

static uint64_t local_count(int64_t n, int64_t w)
{
	return (uint64_t)(n > w ? n * (2 * w + 1) - w * (w + 1) : n * n);
}

START_TEST(test_closed_forms)
{
	static const int64_t ws[] = {0, 1, 2, 5, 300}, gs[] = {1, 3, 250};
	char p[32];
	for (int64_t n = 1; n <= 200; n++) {
		uint64_t nn = (uint64_t)(n * n), c;
		ck_assert_uint_eq(count_of("full", "", n, 0), nn);
		ck_assert_uint_eq(count_of("none", "", n, 0), 0);
		ck_assert_uint_eq(count_of("diag", "", n, 0), n);
		ck_assert_uint_eq(count_of("causal", "", n, 0), nn / 2 + (uint64_t)n / 2 +
				  (uint64_t)(n & 1));
		ck_assert_uint_eq(count_of("star", "", n, 0), n == 1 ? 1 : 5 * n - 6);
		ck_assert_uint_eq(count_of("diagonal", "offsets=0,3", n, 0),
				  n + (n > 3 ? 2 * (n - 3) : 0));
		for (size_t k = 0; k < sizeof ws / sizeof ws[0]; k++) {
			snprintf(p, sizeof p, "w=%lld", (long long)ws[k]);
			ck_assert_uint_eq(count_of("local", p, n, 0), local_count(n, ws[k]));
		}
		for (size_t k = 0; k < sizeof gs / sizeof gs[0]; k++) {
			int64_t g = gs[k] < n ? gs[k] : n;
			snprintf(p, sizeof p, "g=%lld", (long long)gs[k]);
			ck_assert_uint_eq(count_of("global", p, n, 0),
					  nn - (uint64_t)((n - g) * (n - g)));
		}
		if (n < 3)
			continue;
		/* local2 has sparsity 1 - 5/n + 6/n^2 */
		c = count_of("local", "w=2", n, 0);
		double dn = (double)n;
		ck_assert_double_eq_tol(1.0 - (double)c / (double)nn,
					1.0 - 5.0 / dn + 6.0 / (dn * dn), 1e-12);
	}
}
END_TEST

/* ---- brute-force textbook definitions ---- */

/* a = {l, c, causal} */
static bool bf_strided(int64_t i, int64_t j, const int64_t *a)
{
	int64_t d = absdiff(i, j);
	return !(a[2] && j > i) && (d < a[0] || d % a[0] == 0);
}

static bool bf_fixed(int64_t i, int64_t j, const int64_t *a)
{
	return !(a[2] && j > i) && (i / a[0] == j / a[0] || j % a[0] >= a[0] - a[1]);
}

static bool bf_logsparse(int64_t i, int64_t j, const int64_t *a)
{
	int64_t d = absdiff(i, j);
	return !(a[2] && j > i) && (d == 0 || (d & (d - 1)) == 0);
}

static const struct brute_case {
	const char *name, *params;
	bool (*def)(int64_t i, int64_t j, const int64_t *a);
	int64_t a[3];
} brute_cases[] = {
	{"strided", "l=1", bf_strided, {1, 0, 0}},
	{"strided", "l=3", bf_strided, {3, 0, 0}},
	{"strided", "", bf_strided, {4, 0, 0}},
	{"strided", "l=4 causal=1", bf_strided, {4, 0, 1}},
	{"strided", "l=7 causal=1", bf_strided, {7, 0, 1}},
	{"strided", "l=63", bf_strided, {63, 0, 0}},
	{"strided", "l=64 causal=1", bf_strided, {64, 0, 1}},
	{"strided", "l=65", bf_strided, {65, 0, 0}},
	{"logsparse", "", bf_logsparse, {0, 0, 0}},
	{"logsparse", "causal=1", bf_logsparse, {0, 0, 1}},
	{"fixed", "", bf_fixed, {4, 1, 0}},
	{"fixed", "l=1 c=1", bf_fixed, {1, 1, 0}},
	{"fixed", "l=5 c=2 causal=1", bf_fixed, {5, 2, 1}},
	{"fixed", "l=8 c=8", bf_fixed, {8, 8, 0}},
	{"fixed", "l=64 c=3", bf_fixed, {64, 3, 0}},
	{"fixed", "l=70 c=1 causal=1", bf_fixed, {70, 1, 1}},
};

#define NBRUTE ((int)(sizeof brute_cases / sizeof brute_cases[0]))

START_TEST(test_brute)
{
	const struct brute_case *bc = &brute_cases[_i];
	for (int64_t n = 1; n <= 200; n++) {
		bool *m = mask_of(bc->name, bc->params, n, 0);
		for (int64_t i = 0; i < n; i++)
			for (int64_t j = 0; j < n; j++)
				CHECK(m[i * n + j] == bc->def(i, j, bc->a),
				      "%s(%s) at n = %lld: cell (%lld, %lld)", bc->name,
				      bc->params, (long long)n, (long long)i, (long long)j);
		free(m);
	}
}
END_TEST

/* ---- columns are the transposed rows ---- */

static const struct col_case {
	const char *name, *params;
} col_cases[] = {
	{"full", ""}, {"none", ""}, {"diag", ""}, {"causal", ""},
	{"local", "w=3"}, {"diagonal", "offsets=0,2,5"},
	{"global", "g=3"}, {"global", "tokens=1,9,30"},
	{"axis", "rows=0,7 cols=3,36"}, {"random", "size=2"}, {"random", "size=40"},
	{"star", ""}, {"logsparse", ""}, {"logsparse", "causal=1"},
	{"strided", "l=3"}, {"strided", "l=5 causal=1"}, {"strided", "l=70 causal=1"},
	{"fixed", "l=4 c=2"}, {"fixed", "l=5 causal=1"}, {"fixed", "l=6 c=6 causal=1"},
	{"longformer", ""}, {"longformer", "tokens=2,20"},
	{"bigbird", ""}, {"bigbird", "w=2 r=5 g=3"}, {"bigbird", "r=64 g=0"},
	{"prefix", "p=5"}, {"prefix", "p=0"}, {"document", "lengths=3,10,20"},
	{"document", "lengths=7,1,25 causal=1"},
};

#define NCOL ((int)(sizeof col_cases / sizeof col_cases[0]))

static void expect_transpose(const mk_term *t)
{
	int64_t n = t->n;
	bool *rows = mask_lines(t, false), *cols = mask_lines(t, true);
	for (int64_t i = 0; i < n; i++)
		for (int64_t j = 0; j < n; j++)
			CHECK(rows[i * n + j] == cols[j * n + i],
			      "%s at n = %lld: col %lld disagrees at row %lld",
			      t->def->info.name, (long long)n, (long long)j, (long long)i);
	free(rows);
	free(cols);
}

START_TEST(test_cols)
{
	const struct col_case *cc = &col_cases[_i];
	static const int64_t ns[] = {37, 64};
	for (size_t k = 0; k < 2; k++) {
		for (uint64_t seed = 0; seed < 10; seed += 5) {
			mk_term t;
			ck_assert_int_eq(term_make(&t, cc->name, cc->params, ns[k], seed), MK_OK);
			if (t.def->prepare_cols)
				ck_assert_int_eq(t.def->prepare_cols(&t, 0), MK_OK);
			/* symmetric defs without col() are checked to be symmetric */
			expect_transpose(&t);
			mk_term_release(&t);
		}
	}
}
END_TEST

START_TEST(test_cols_coverage)
{
	for (size_t k = 0; k < mk_pattern_count(); k++) {
		bool found = false;
		for (int c = 0; c < NCOL; c++)
			found |= strcmp(col_cases[c].name, mk_pattern_get(k)->name) == 0;
		ck_assert_msg(found, "no column case for '%s'", mk_pattern_get(k)->name);
	}
}
END_TEST

/* A second bind at another n drops what the first one made. */
START_TEST(test_rebind)
{
	static const char *const names[] = {"random", "bigbird", "fixed", "strided", "axis",
					    "global", "longformer"};
	for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
		mk_term t;
		const char *params = strcmp(names[k], "axis") == 0 ? "rows=3 cols=30" :
				     strcmp(names[k], "global") == 0 ? "tokens=4,31" : "";
		ck_assert_int_eq(term_make(&t, names[k], params, 37, 1), MK_OK);
		if (t.def->prepare_cols)
			ck_assert_int_eq(t.def->prepare_cols(&t, 0), MK_OK);
		t.n = 64;
		if (t.def->bind)
			ck_assert_int_eq(t.def->bind(&t), MK_OK);
		if (t.def->prepare_cols)
			ck_assert_int_eq(t.def->prepare_cols(&t, 0), MK_OK);
		expect_transpose(&t);
		mk_term_release(&t);
	}
}
END_TEST

/* ---- clipping and errors ---- */

START_TEST(test_clipping)
{
	/* counts beyond n are clipped (without overflow), never errors */
	static const struct { const char *name, *params; uint64_t count; } cases[] = {
		{"global", "g=20", 64},
		{"local", "w=9223372036854775807", 64},
		{"strided", "l=9223372036854775807", 64},
		{"strided", "l=9223372036854775807 causal=1", 36},
		{"fixed", "l=9223372036854775807", 64},
		{"fixed", "l=9223372036854775807 c=9223372036854775807 causal=1", 36},
		{"random", "size=9223372036854775807", 64},
		{"longformer", "g=100 w=0", 64},
		{"longformer", "g=0 w=9223372036854775807", 64},
		{"longformer", "g=0 w=0", 8},
		{"bigbird", "w=0 r=9223372036854775807 g=0", 64},
		{"bigbird", "w=0 r=0 g=9223372036854775807", 64},
		{"diagonal", "offsets=8,100", 0},
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
		ck_assert_msg(count_of(cases[k].name, cases[k].params, 8, 0) == cases[k].count,
			      "%s(%s)", cases[k].name, cases[k].params);
}
END_TEST

static void expect_einval(const char *name, const char *params, int64_t n, const char *msg)
{
	mk_term t;
	mk_error_set(MK_OK, "%s", "");
	ck_assert_int_eq(term_make(&t, name, params, n, 0), MK_EINVAL);
	ck_assert_msg(strstr(mk_error(), msg) != NULL, "%s(%s): '%s' lacks '%s'", name, params,
		      mk_error(), msg);
	ck_assert_ptr_null(t.priv);
	mk_term_release(&t);
}

START_TEST(test_bind_errors)
{
	expect_einval("fixed", "c=7", 16,
		      "parameter 'c' of 'fixed' must be between 1 and l = 4, got 7");
	expect_einval("fixed", "c=0", 16, "'c'");
	expect_einval("fixed", "l=0", 16, "'l'");
	expect_einval("strided", "l=0", 16, "parameter 'l' of 'strided'");
	expect_einval("global", "tokens=3,200", 128,
		      "global token 200 of 'global' is out of range for n = 128");
	expect_einval("axis", "rows=8", 8, "row 8 of 'axis'");
	expect_einval("axis", "rows=1 cols=1,9", 8, "column 9 of 'axis'");
	expect_einval("longformer", "tokens=130", 128, "130");
	expect_einval("diagonal", "offsets=1,-2", 8, "-2");
}
END_TEST

static Suite *patterns_suite(void)
{
	Suite *s = suite_create("patterns");
	TCase *tc = tcase_create("patterns");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_registry);
	tcase_add_test(tc, test_term_defaults);
	tcase_add_test(tc, test_term_parse);
	tcase_add_loop_test(tc, test_hand, 0, NHAND);
	tcase_add_test(tc, test_hand_coverage);
	tcase_add_test(tc, test_closed_forms);
	tcase_add_loop_test(tc, test_brute, 0, NBRUTE);
	tcase_add_loop_test(tc, test_cols, 0, NCOL);
	tcase_add_test(tc, test_cols_coverage);
	tcase_add_test(tc, test_rebind);
	tcase_add_test(tc, test_clipping);
	tcase_add_test(tc, test_bind_errors);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return mk_test_main(patterns_suite());
}
