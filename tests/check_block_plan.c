/* Unit tests of what the cuda backend prepares on the host, which needs no
 * GPU: the block kernel's plan (block_plan.c: every sub-block visits each of
 * its row's tiles exactly once, in pieces of at most `piece` tiles; split
 * rows list their pieces' slots; rows of tiles with no tile still get an
 * empty item) and the transposed CSR of the csr kernel's column pass. */
#include "config.h"
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "maskkit.h"
#include "attn_internal.h"
#include "block_plan.h"
#include "testutil.h"

/* Tile counts per row of tiles as prefix offsets; counts from an LCG with
 * one long row (global tokens) when `long_row` is set. */
static int64_t *plan_ptr(int64_t nt, uint64_t seed, bool long_row)
{
	int64_t *ptr = calloc((size_t)nt + 1, sizeof *ptr);
	ck_assert_ptr_nonnull(ptr);
	for (int64_t r = 0; r < nt; r++) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		int64_t cnt = (int64_t)((seed >> 33) % 5); /* 0 .. 4, empty rows included */
		if (long_row && r == nt / 2)
			cnt = nt;
		ptr[r + 1] = ptr[r] + cnt;
	}
	return ptr;
}

/* The plan's invariants for tile lists ptr over n rows. */
static void expect_plan_covers(const int64_t *ptr, int64_t n, int64_t tile, int64_t bm,
			       int64_t piece)
{
	int64_t nt = (n + tile - 1) / tile, at = 0, slots = 0, nsplit = 0;
	mk_block_plan p;
	ck_assert_int_eq(mk_block_plan_new(ptr, n, tile, bm, piece, &p), MK_OK);
	for (int64_t r = 0; r < nt; r++) {
		int64_t cnt = ptr[r + 1] - ptr[r], lo, hi;
		for (int64_t sub = 0;; sub++) {
			mk_block_plan_rows(n, tile, bm, r, sub, &lo, &hi);
			if (lo >= (r + 1) * tile || lo >= n)
				break;
			ck_assert_int_gt(hi, lo);
			ck_assert_int_le(hi - lo, bm);
			int64_t next = 0, first_slot = -1;
			/* this sub-block's items: consecutive, covering 0 .. cnt once */
			do {
				ck_assert_int_lt(at, p.nitems);
				const mk_block_item *it = &p.items[at++];
				ck_assert_int_eq(it->r, r);
				ck_assert_int_eq(it->sub, sub);
				ck_assert_int_eq(it->t0, next);
				ck_assert_int_le(it->t1 - it->t0, piece);
				ck_assert(it->t1 > it->t0 || cnt == 0);
				ck_assert_int_eq(it->slot >= 0, cnt > piece);
				if (it->slot >= 0) {
					ck_assert_int_eq(it->slot, slots++);
					first_slot = first_slot < 0 ? it->slot : first_slot;
				}
				next = it->t1;
			} while (next < cnt);
			ck_assert_int_eq(next, cnt);
			if (cnt > piece) {
				const mk_block_split *sp = &p.splits[nsplit++];
				ck_assert_int_eq(sp->r, r);
				ck_assert_int_eq(sp->sub, sub);
				ck_assert_int_eq(sp->slot0, first_slot);
				ck_assert_int_eq(sp->slot1, slots);
			}
		}
	}
	ck_assert_int_eq(at, p.nitems);
	ck_assert_int_eq(slots, p.nslots);
	ck_assert_int_eq(nsplit, p.nsplits);
	mk_block_plan_release(&p);
	ck_assert_ptr_null(p.items);
}

/* (n, tile, bm): ragged n, tiles below, at and above the 64-row block. */
static const int64_t shapes[][3] = {
	{1, 1, 64}, {100, 16, 64}, {150, 64, 64}, {1000, 64, 64}, {1000, 128, 64},
	{1000, 100, 64}, {4097, 256, 64}, {37, 50, 64}, {640, 32, 64},
};
#define NSHAPES ((int)(sizeof shapes / sizeof shapes[0]))

START_TEST(plan_covers_every_tile_once)
{
	int64_t n = shapes[_i / 2][0], tile = shapes[_i / 2][1], bm = shapes[_i / 2][2];
	int64_t nt = (n + tile - 1) / tile;
	int64_t *ptr = plan_ptr(nt, 0xb10c + (uint64_t)_i, _i % 2);
	int64_t pieces[] = {1, 2, mk_block_plan_piece(ptr, nt), 1000000};
	for (int k = 0; k < 4; k++)
		expect_plan_covers(ptr, n, tile, bm, pieces[k]);
	free(ptr);
}
END_TEST

START_TEST(piece_is_twice_the_mean)
{
	int64_t flat[] = {0, 10, 20, 30, 40}, skewed[] = {0, 1, 1, 1, 97}, none[] = {0, 0, 0};
	ck_assert_int_eq(mk_block_plan_piece(flat, 4), 20);
	ck_assert_int_eq(mk_block_plan_piece(skewed, 4), 50);
	ck_assert_int_eq(mk_block_plan_piece(none, 2), MK_BLOCK_MIN_PIECE);
}
END_TEST

START_TEST(rows_stop_at_tile_and_n)
{
	int64_t lo, hi;
	mk_block_plan_rows(1000, 128, 64, 2, 1, &lo, &hi); /* tile 256 .. 383, second half */
	ck_assert_int_eq(lo, 320);
	ck_assert_int_eq(hi, 384);
	mk_block_plan_rows(1000, 100, 64, 3, 1, &lo, &hi); /* tile 300 .. 399: 364 .. 399 */
	ck_assert_int_eq(lo, 364);
	ck_assert_int_eq(hi, 400);
	mk_block_plan_rows(1000, 128, 64, 7, 1, &lo, &hi); /* the ragged last tile 896 .. 999 */
	ck_assert_int_eq(lo, 960);
	ck_assert_int_eq(hi, 1000);
	mk_block_plan_rows(100, 16, 64, 6, 0, &lo, &hi); /* a tile below the block: 96 .. 99 */
	ck_assert_int_eq(lo, 96);
	ck_assert_int_eq(hi, 100);
}
END_TEST

/* A real layout: global tokens make row of tiles 0 far longer than the
 * others, so it is split; both views are covered. */
START_TEST(layout_views_are_covered)
{
	mk_expr *e;
	mk_mask *m;
	mk_attn_layout *l;
	mk_bind_opts o = {.n = 1000, .seed = 1};
	ck_assert_int_eq(mk_expr_parse("global2 + local3 - axis(rows=500)", &e), MK_OK);
	ck_assert_int_eq(mk_expr_bind(e, &o), MK_OK);
	ck_assert_int_eq(mk_expr_to_mask(e, &m), MK_OK);
	ck_assert_int_eq(mk_attn_layout_new(m, 16, 0, &l), MK_OK);
	ck_assert_int_gt(l->rptr[1] - l->rptr[0], mk_block_plan_piece(l->rptr, l->nt));
	expect_plan_covers(l->rptr, l->n, l->tile, 64, mk_block_plan_piece(l->rptr, l->nt));
	expect_plan_covers(l->cptr, l->n, l->tile, 64, mk_block_plan_piece(l->cptr, l->nt));
	mk_attn_layout_free(l);
	mk_mask_free(m);
	mk_expr_free(e);
}
END_TEST

/* The transposed entries the csr kernel's column pass walks (uploaded by
 * the cuda backend): each column's rows in increasing order, every entry
 * once. */
START_TEST(csc_lists_every_entry)
{
	mk_mask *m = mk_test_random_mask(97, 0xc5c, 9);
	mk_attn_layout *l;
	int64_t *cptr;
	int32_t *row;
	ck_assert_int_eq(mk_attn_layout_new(m, 16, 0, &l), MK_OK);
	ck_assert_int_eq(mk_attn_csr_transpose(l, &cptr, &row), MK_OK);
	ck_assert_int_eq(cptr[0], 0);
	ck_assert_int_eq(cptr[l->n], (int64_t)l->nnz);
	for (int64_t j = 0; j < l->n; j++) {
		int64_t e = cptr[j];
		for (int64_t i = 0; i < l->n; i++)
			if (mk_mask_test(m, i, j)) {
				ck_assert_int_lt(e, cptr[j + 1]);
				ck_assert_int_eq(row[e++], i);
			}
		ck_assert_int_eq(e, cptr[j + 1]);
	}
	free(cptr);
	free(row);
	mk_attn_layout_free(l);
	mk_mask_free(m);
}
END_TEST

START_TEST(plan_rejects_bad_sizes)
{
	int64_t ptr[] = {0, 1};
	mk_block_plan p;
	ck_assert_int_eq(mk_block_plan_new(ptr, 0, 16, 64, 8, &p), MK_EINVAL);
	ck_assert_int_eq(mk_block_plan_new(ptr, 10, 0, 64, 8, &p), MK_EINVAL);
	ck_assert_int_eq(mk_block_plan_new(ptr, 10, 16, 64, 0, &p), MK_EINVAL);
	ck_assert_ptr_null(p.items);
	ck_assert_str_ne(mk_error(), "");
	mk_block_plan_release(NULL);
}
END_TEST

static Suite *plan_suite(void)
{
	Suite *s = suite_create("block_plan");
	TCase *tc = tcase_create("core");
	tcase_add_loop_test(tc, plan_covers_every_tile_once, 0, 2 * NSHAPES);
	tcase_add_test(tc, piece_is_twice_the_mean);
	tcase_add_test(tc, rows_stop_at_tile_and_n);
	tcase_add_test(tc, layout_views_are_covered);
	tcase_add_test(tc, csc_lists_every_entry);
	tcase_add_test(tc, plan_rejects_bad_sizes);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return mk_test_main(plan_suite());
}
