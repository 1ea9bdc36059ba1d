/*
 * Unit tests of the random draws and the patterns built on them (random,
 * longformer, bigbird): reproducibility, exact counts, uniformity, columns.
 */
#include "config.h"
#include "internal.h"
#include "pattern_testutil.h"

/* ---- random ---- */

static void expect_same(const bool *a, const bool *b, int64_t n, bool same)
{
	ck_assert(same == (memcmp(a, b, (size_t)(n * n)) == 0));
}

START_TEST(test_random_rows)
{
	bool *a, *b;
	for (int64_t n = 1; n <= 200; n++)
		ck_assert_uint_eq(count_of("random", "size=3", n, 11), n >= 6 ? 6 * n : n * n);
	a = mask_of("random", "size=3", 100, 42);
	for (int64_t i = 0; i < 100; i++) {
		int c = 0;
		for (int64_t j = 0; j < 100; j++)
			c += a[i * 100 + j];
		CHECK(c == 6, "row %lld: %d keys", (long long)i, c); /* a repeat gives fewer */
	}
	/* the documented stream: row i is draw (seed, tag 1, i) */
	for (int64_t i = 0; i < 100; i++) {
		uint64_t row[2] = {0, 0};
		mk_draw_row(42, 1, i, 6, 100, row);
		for (int64_t j = 0; j < 100; j++)
			CHECK(a[i * 100 + j] == mk_bit_test(row, j), "(%lld, %lld)", (long long)i,
			      (long long)j);
	}
	b = mask_of("random", "size=3", 100, 42);
	expect_same(a, b, 100, true);
	free(b);
	b = mask_of("random", "size=3", 100, 43);
	expect_same(a, b, 100, false);
	free(b);
	/* the caller resolves the seed parameter into t->seed: only that counts */
	b = mask_of("random", "size=3 seed=5", 100, 42);
	expect_same(a, b, 100, true);
	free(b);
	free(a);
	ck_assert_uint_eq(count_of("random", "size=50", 100, 1), 10000);
	ck_assert_uint_eq(count_of("random", "size=51", 100, 1), 10000);
	ck_assert_uint_eq(count_of("random", "size=0", 100, 1), 0);
}
END_TEST

START_TEST(test_random_uniform)
{
	enum { ROWS = 100000, N = 16, K = 4 };
	int64_t hits[N] = {0};
	uint64_t row[1];
	bool *m;
	for (int64_t i = 0; i < ROWS; i++) {
		row[0] = 0;
		mk_draw_row(1234, 1, i, K, N, row);
		CHECK(__builtin_popcountll(row[0]) == K, "row %lld", (long long)i);
		for (int j = 0; j < N; j++)
			hits[j] += (int64_t)((row[0] >> j) & 1);
	}
	/* expected ROWS * K / N = 25000 per key, sd about 137 */
	for (int j = 0; j < N; j++)
		ck_assert_msg(absdiff(hits[j], ROWS * K / N) < 1000, "key %d drawn %lld times", j,
			      (long long)hits[j]);
	/* each column of a 1024 x 1024 random(size=32) mask: 64 expected, sd 7.7 */
	m = mask_of("random", "size=32", 1024, 99);
	for (int64_t j = 0; j < 1024; j++) {
		int64_t c = 0;
		for (int64_t i = 0; i < 1024; i++)
			c += m[i * 1024 + j];
		CHECK(absdiff(c, 64) < 40, "column %lld has %lld", (long long)j, (long long)c);
	}
	free(m);
}
END_TEST

START_TEST(test_draw_positions)
{
	enum { SEEDS = 4000, N = 40, K = 5 };
	int64_t out[N], hits[N] = {0};
	for (uint64_t s = 0; s < SEEDS; s++) {
		CHECK(mk_draw_positions(s, 3, K, N, out) == K, "seed %llu", (unsigned long long)s);
		for (int k = 0; k < K; k++) {
			CHECK(out[k] >= 0 && out[k] < N, "seed %llu", (unsigned long long)s);
			CHECK(k == 0 || out[k] > out[k - 1], /* sorted and distinct */
			      "seed %llu", (unsigned long long)s);
			hits[out[k]]++;
		}
	}
	/* expected SEEDS * K / N = 500 per position, sd about 21 */
	for (int j = 0; j < N; j++)
		ck_assert_msg(absdiff(hits[j], SEEDS * K / N) < 150, "position %d drawn %lld times",
			      j, (long long)hits[j]);
	ck_assert_int_eq(mk_draw_positions(9, 3, 50, 6, out), 6);
	for (int k = 0; k < 6; k++)
		ck_assert_int_eq(out[k], k);
	ck_assert_int_eq(mk_draw_positions(9, 3, 0, 6, out), 0);
}
END_TEST

START_TEST(test_randcols)
{
	mk_randcols *rc;
	uint64_t row[1], col[1];
	int64_t n = 50;
	ck_assert_int_eq(mk_randcols_build(&rc, 7, 1, 3, n, 0), MK_OK);
	for (int64_t j = 0; j < n; j++) {
		col[0] = 0;
		mk_randcols_col(rc, j, col);
		for (int64_t i = 0; i < n; i++) {
			row[0] = 0;
			mk_draw_row(7, 1, i, 3, n, row);
			CHECK(mk_bit_test(row, j) == mk_bit_test(col, i), "(%lld, %lld)",
			      (long long)i, (long long)j);
		}
	}
	mk_randcols_free(rc);
	mk_error_set(MK_OK, "%s", "");
	ck_assert_int_eq(mk_randcols_build(&rc, 7, 1, 3, 1000, 100), MK_ERANGE);
	ck_assert_ptr_null(rc);
	ck_assert(*mk_error());
}
END_TEST

/* ---- longformer and bigbird ---- */

START_TEST(test_longformer_positions)
{
	enum { N = 128 };
	bool full0[N], differ = false;
	for (uint64_t seed = 0; seed < 5; seed++) {
		bool *m = mask_of("longformer", "", N, seed);
		bool full[N];
		int64_t nfull = 0;
		for (int64_t i = 0; i < N; i++) {
			full[i] = true;
			for (int64_t j = 0; j < N; j++)
				full[i] &= m[i * N + j];
			nfull += full[i];
		}
		ck_assert_int_eq(nfull, 2); /* g = 2 */
		/* the rest is the band d <= 2 and the global columns */
		for (int64_t i = 0; i < N; i++)
			for (int64_t j = 0; j < N; j++)
				CHECK(m[i * N + j] == (full[i] || full[j] || absdiff(i, j) <= 2),
				      "seed %llu: cell (%lld, %lld)", (unsigned long long)seed,
				      (long long)i, (long long)j);
		/* the documented stream: positions (seed, tag 3) */
		int64_t pos[2], q = 0;
		ck_assert_int_eq(mk_draw_positions(seed, 3, 2, N, pos), 2);
		for (int64_t i = 0; i < N; i++)
			if (full[i])
				ck_assert_int_eq(pos[q++], i);
		if (seed == 0)
			memcpy(full0, full, sizeof full);
		else
			differ |= memcmp(full0, full, sizeof full) != 0;
		free(m);
	}
	ck_assert(differ); /* the positions follow the seed */
}
END_TEST

/* bigbird(w=1, r=2, g=2) = local1 + random(size=1) + global2 at one seed. */
static void expect_bigbird_union(const char *params, int64_t n, uint64_t seed)
{
	bool *bb = mask_of("bigbird", params, n, seed);
	bool *l = mask_of("local", "w=1", n, seed);
	bool *r = mask_of("random", "size=1", n, seed);
	bool *g = mask_of("global", "g=2", n, seed);
	for (int64_t k = 0; k < n * n; k++)
		CHECK(bb[k] == (l[k] || r[k] || g[k]), "bigbird(%s) at n = %lld, seed %llu",
		      params, (long long)n, (unsigned long long)seed);
	free(bb);
	free(l);
	free(r);
	free(g);
}

START_TEST(test_bigbird)
{
	static const int64_t ns[] = {3, 8, 37, 128, 300};
	bool *m;
	for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
		for (uint64_t seed = 0; seed < 3; seed++)
			expect_bigbird_union("w=1 r=2 g=2", ns[k], seed * 77);
	/* the defaults are w = 1, r = 2, g = 2 */
	expect_bigbird_union("", 128, 5);
	m = mask_of("bigbird", "", 128, 5);
	for (int64_t i = 0; i < 128; i++) {
		int64_t c = 0;
		for (int64_t j = 0; j < 128; j++)
			c += m[i * 128 + j];
		/* rows 0, 1 full; others {0, 1} + {i-1, i, i+1} (4 cells in rows
		 * 2 and 127, where they overlap or clip, else 5) + up to 2 keys */
		int64_t base = i == 2 || i == 127 ? 4 : 5;
		if (i < 2)
			ck_assert_int_eq(c, 128);
		else
			ck_assert(c >= base && c <= base + 2);
		ck_assert(m[i * 128] && m[i * 128 + 1]);
	}
	free(m);
}
END_TEST


int main(void)
{
	Suite *s = suite_create("random");
	TCase *tc = tcase_create("random");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_random_rows);
	tcase_add_test(tc, test_random_uniform);
	tcase_add_test(tc, test_draw_positions);
	tcase_add_test(tc, test_randcols);
	tcase_add_test(tc, test_longformer_positions);
	tcase_add_test(tc, test_bigbird);
	suite_add_tcase(s, tc);
	return mk_test_main(s);
}
