/* Unit tests of packed rows, masks, tiles and size checks. */
#include "config.h"
#include <check.h>
#include <string.h>
#include "maskkit.h"
#include "testutil.h"


START_TEST(set_range_matches_bit_loop)
{
	/* every [lo, hi) within 3 words, against setting bit by bit */
	for (int64_t lo = 0; lo <= 192; lo++)
		for (int64_t hi = lo; hi <= 192; hi += 7) {
			uint64_t a[3] = {0}, b[3] = {0};
			mk_bits_set_range(a, lo, hi);
			for (int64_t j = lo; j < hi; j++)
				mk_bit_set(b, j);
			ck_assert_mem_eq(a, b, sizeof a);
			ck_assert_uint_eq(mk_bits_count(a, 3), (uint64_t)(hi - lo));
			ck_assert(mk_bits_all_range(a, lo, hi));
			ck_assert(mk_bits_any_range(a, lo, hi) == (hi > lo));
			if (lo > 0)
				ck_assert(!mk_bits_any_range(a, 0, lo));
			if (hi < 192)
				ck_assert(!mk_bits_all_range(a, lo, hi + 1));
		}
}
END_TEST

START_TEST(not_keeps_tail_zero)
{
	uint64_t w[2] = {0, 0};
	mk_bits_not(w, 70);
	ck_assert_uint_eq(mk_bits_count(w, 2), 70);
	ck_assert_uint_eq(w[1], (1u << 6) - 1);
}
END_TEST

START_TEST(boolean_ops_match_cellwise)
{
	const int64_t n = 67;
	mk_mask *a = mk_test_random_mask(n, 1, 30), *b = mk_test_random_mask(n, 2, 50), *x;
	ck_assert_int_eq(mk_mask_clone(a, &x), MK_OK);
	ck_assert_int_eq(mk_mask_or(x, b), MK_OK);
	for (int64_t i = 0; i < n; i++)
		for (int64_t j = 0; j < n; j++)
			ck_assert(mk_mask_test(x, i, j) == (mk_mask_test(a, i, j) || mk_mask_test(b, i, j)));
	mk_mask_free(x);
	ck_assert_int_eq(mk_mask_clone(a, &x), MK_OK);
	ck_assert_int_eq(mk_mask_and(x, b), MK_OK);
	for (int64_t i = 0; i < n; i++)
		for (int64_t j = 0; j < n; j++)
			ck_assert(mk_mask_test(x, i, j) == (mk_mask_test(a, i, j) && mk_mask_test(b, i, j)));
	mk_mask_free(x);
	ck_assert_int_eq(mk_mask_clone(a, &x), MK_OK);
	ck_assert_int_eq(mk_mask_andnot(x, b), MK_OK);
	for (int64_t i = 0; i < n; i++)
		for (int64_t j = 0; j < n; j++)
			ck_assert(mk_mask_test(x, i, j) == (mk_mask_test(a, i, j) && !mk_mask_test(b, i, j)));
	mk_mask_free(x);
	mk_mask_free(a);
	mk_mask_free(b);
}
END_TEST

START_TEST(not_complements_count)
{
	const int64_t n = 67;
	mk_mask *a = mk_test_random_mask(n, 3, 40);
	uint64_t c = mk_mask_count(a);
	mk_mask_not(a);
	ck_assert_uint_eq(mk_mask_count(a), (uint64_t)(n * n) - c);
	mk_mask_free(a);
}
END_TEST

START_TEST(size_mismatch_is_an_error)
{
	mk_mask *a, *b;
	ck_assert_int_eq(mk_mask_new(8, 0, &a), MK_OK);
	ck_assert_int_eq(mk_mask_new(9, 0, &b), MK_OK);
	ck_assert_int_eq(mk_mask_or(a, b), MK_EINVAL);
	ck_assert(strstr(mk_error(), "n = 8") && strstr(mk_error(), "n = 9"));
	ck_assert(!mk_mask_equal(a, b));
	mk_mask_free(a);
	mk_mask_free(b);
}
END_TEST

START_TEST(transpose_matches_cells)
{
	const int64_t sizes[] = {1, 5, 64, 65, 130};
	for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
		int64_t n = sizes[s];
		mk_mask *a = mk_test_random_mask(n, 7 + (uint64_t)s, 35), *t, *tt;
		ck_assert_int_eq(mk_mask_transpose(a, &t), MK_OK);
		for (int64_t i = 0; i < n; i++)
			for (int64_t j = 0; j < n; j++)
				ck_assert(mk_mask_test(t, j, i) == mk_mask_test(a, i, j));
		ck_assert_int_eq(mk_mask_transpose(t, &tt), MK_OK);
		ck_assert(mk_mask_equal(a, tt));
		mk_mask_free(a);
		mk_mask_free(t);
		mk_mask_free(tt);
	}
}
END_TEST

START_TEST(row_counts_sum_to_count)
{
	const int64_t n = 100;
	mk_mask *a = mk_test_random_mask(n, 11, 20);
	int64_t counts[100], sum = 0;
	mk_mask_row_counts(a, counts);
	for (int64_t i = 0; i < n; i++) {
		int64_t c = 0;
		for (int64_t j = 0; j < n; j++)
			c += mk_mask_test(a, i, j);
		ck_assert_int_eq(counts[i], c);
		sum += c;
	}
	ck_assert_uint_eq(mk_mask_count(a), (uint64_t)sum);
	mk_mask_free(a);
}
END_TEST

START_TEST(tiles_hand_counted)
{
	/* n = 10, B = 4: tiles are 4,4,2 wide.  Set the lower triangle j <= i:
	 * tile (0,0) partial, (1,0) full, (1,1) partial; the last tile row is cut
	 * to 2 rows, so (2,0) and (2,1) are partial though every cell is set, and
	 * (2,2) is partial; upper tiles empty. */
	mk_mask *m;
	mk_tiles *t;
	ck_assert_int_eq(mk_mask_new(10, 0, &m), MK_OK);
	for (int64_t i = 0; i < 10; i++)
		for (int64_t j = 0; j <= i; j++)
			mk_mask_set(m, i, j, true);
	ck_assert_int_eq(mk_mask_tiles(m, 4, &t), MK_OK);
	ck_assert_int_eq(t->nb, 3);
	static const uint8_t want[9] = {MK_TILE_PARTIAL, MK_TILE_EMPTY, MK_TILE_EMPTY,
					MK_TILE_FULL, MK_TILE_PARTIAL, MK_TILE_EMPTY,
					MK_TILE_PARTIAL, MK_TILE_PARTIAL, MK_TILE_PARTIAL};
	ck_assert_mem_eq(t->state, want, 9);
	ck_assert_uint_eq(mk_tiles_area(t, 2, 2), 4);
	ck_assert_uint_eq(mk_tiles_area(t, 0, 2), 8);
	ck_assert_uint_eq(mk_tiles_area(t, 1, 1), 16);
	mk_tiles_free(t);
	mk_mask_free(m);
}
END_TEST

START_TEST(memory_limit_refuses_huge_masks)
{
	mk_mask *m = NULL;
	/* n = 2^20 needs 128 GiB as a bit matrix: over the default 4 GiB */
	ck_assert_int_eq(mk_mask_new(MK_N_MAX, 0, &m), MK_ERANGE);
	ck_assert_ptr_null(m);
	ck_assert(strstr(mk_error(), "(max_memory)"));
	ck_assert_str_eq(mk_error_get()->param, "max_memory");
	/* 1024^2 bits = 128 KiB: over a 64 KiB limit, under 256 KiB */
	ck_assert_int_eq(mk_mask_new(1024, 64 << 10, &m), MK_ERANGE);
	ck_assert_int_eq(mk_mask_new(1024, 256 << 10, &m), MK_OK);
	mk_mask_free(m);
	ck_assert_int_eq(mk_mask_new(0, 0, &m), MK_EINVAL);
	ck_assert_int_eq(mk_mask_new(-5, 0, &m), MK_EINVAL);
	ck_assert_int_eq(mk_mask_new(MK_N_MAX + 1, 0, &m), MK_ERANGE);
}
END_TEST

START_TEST(sizes_parse_and_overflow)
{
	uint64_t v;
	ck_assert_int_eq(mk_parse_size("4G", &v), MK_OK);
	ck_assert_uint_eq(v, (uint64_t)4 << 30);
	ck_assert_int_eq(mk_parse_size("512MiB", &v), MK_OK);
	ck_assert_uint_eq(v, (uint64_t)512 << 20);
	ck_assert_int_eq(mk_parse_size("1000", &v), MK_OK);
	ck_assert_uint_eq(v, 1000);
	ck_assert_int_eq(mk_parse_size("-1", &v), MK_EINVAL);
	ck_assert_int_eq(mk_parse_size("12Q", &v), MK_EINVAL);
	ck_assert_int_eq(mk_parse_size("99999999999T", &v), MK_ERANGE);
	ck_assert_int_eq(mk_mul_u64(UINT64_MAX / 2, 3, &v), MK_ERANGE);
	ck_assert_int_eq(mk_mul_u64(1 << 20, 1 << 20, &v), MK_OK);
	ck_assert_uint_eq(v, (uint64_t)1 << 40);
}
END_TEST

static int collect(int64_t j, void *arg)
{
	int64_t *acc = arg;
	acc[++acc[0]] = j;
	return j == 100 ? 7 : 0;
}

START_TEST(foreach_visits_in_order_and_stops)
{
	uint64_t w[3] = {0};
	int64_t acc[8] = {0};
	mk_bit_set(w, 0);
	mk_bit_set(w, 63);
	mk_bit_set(w, 64);
	mk_bit_set(w, 100);
	mk_bit_set(w, 150);
	ck_assert_int_eq(mk_bits_foreach(w, 3, collect, acc), 7);
	ck_assert_int_eq(acc[0], 4);
	ck_assert_int_eq(acc[1], 0);
	ck_assert_int_eq(acc[2], 63);
	ck_assert_int_eq(acc[3], 64);
	ck_assert_int_eq(acc[4], 100);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("mask");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, set_range_matches_bit_loop);
	tcase_add_test(tc, not_keeps_tail_zero);
	tcase_add_test(tc, boolean_ops_match_cellwise);
	tcase_add_test(tc, not_complements_count);
	tcase_add_test(tc, size_mismatch_is_an_error);
	tcase_add_test(tc, transpose_matches_cells);
	tcase_add_test(tc, row_counts_sum_to_count);
	tcase_add_test(tc, tiles_hand_counted);
	tcase_add_test(tc, memory_limit_refuses_huge_masks);
	tcase_add_test(tc, sizes_parse_and_overflow);
	tcase_add_test(tc, foreach_visits_in_order_and_stops);
	suite_add_tcase(s, tc);
	return mk_test_main(s);
}
