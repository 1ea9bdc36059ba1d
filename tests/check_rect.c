/*
 * Rectangular masks (q_len x kv_len): the queries are the last q_len of the
 * kv_len positions (bottom-right alignment, as a KV cache, the default), so
 * query i sits at key position i + kv_len - q_len; top-left, at key i.
 * Expected cells and counts are written from that definition and closed
 * forms, never from the code under test.
 */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"
#include "attn_ref.h"

static int64_t clamp(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static mk_expr *bind_aligned(const char *text, int64_t q, int64_t kv, bool cols,
			     mk_align align)
{
	mk_expr *e;
	mk_bind_opts b = {.n = q, .kv_len = kv, .need_cols = cols, .align = align};
	ck_assert_int_eq(mk_expr_parse(text, &e), MK_OK);
	ck_assert_msg(mk_expr_bind(e, &b) == MK_OK, "%s at %lld x %lld: %s", text, (long long)q,
		      (long long)kv, mk_error());
	return e;
}

static mk_expr *bind_rect(const char *text, int64_t q, int64_t kv, bool cols)
{
	return bind_aligned(text, q, kv, cols, MK_ALIGN_BOTTOM_RIGHT);
}

/* The predicate each pattern is defined by, on positions of the grid of
 * max(q, kv): query i at i + grid - q, key j at j + grid - kv (bottom-right),
 * or at i and j (top-left). */
typedef bool (*cell_fn)(int64_t a, int64_t b, int64_t arg);
static bool causal_cell(int64_t a, int64_t b, int64_t arg) { (void)arg; return b <= a; }
static bool local_cell(int64_t a, int64_t b, int64_t w) { return a - b <= w && b - a <= w; }
static bool prefix_cell(int64_t a, int64_t b, int64_t p) { return b < p || b <= a; }

/* Every cell of the materialised mask, and every column through a cursor,
 * against the predicate at the cell's grid positions. */
static void check_cells(const char *text, cell_fn fn, int64_t arg, int64_t q, int64_t kv,
			mk_align align)
{
	mk_expr *e = bind_aligned(text, q, kv, true, align);
	mk_mask *m;
	mk_cursor *c;
	uint64_t col[4];
	int64_t grid = align == MK_ALIGN_TOP_LEFT ? 0 : q > kv ? q : kv;

	ck_assert_int_eq(mk_expr_to_mask(e, &m), MK_OK);
	ck_assert_int_eq(mk_mask_n(m), q);
	ck_assert_int_eq(mk_mask_cols(m), kv);
	ck_assert_int_eq(mk_cursor_new(e, &c), MK_OK);
	for (int64_t i = 0; i < q; i++)
		for (int64_t j = 0; j < kv; j++)
			ck_assert_msg(mk_mask_test(m, i, j) ==
					      fn(grid ? i + grid - q : i, grid ? j + grid - kv : j, arg),
				      "%s %lldx%lld %s cell (%lld, %lld)", text, (long long)q,
				      (long long)kv, mk_align_name(align), (long long)i, (long long)j);
	for (int64_t j = 0; j < kv; j++) {
		ck_assert_int_eq(mk_cursor_col(c, j, col), MK_OK);
		for (int64_t i = 0; i < q; i++)
			ck_assert(mk_bit_test(col, i) == mk_mask_test(m, i, j));
	}
	mk_cursor_free(c);
	mk_mask_free(m);
	mk_expr_free(e);
}

START_TEST(cells_match_the_definitions)
{
	static const int64_t sizes[] = {1, 2, 5, 63, 64, 65, 130};
	char text[64];
	for (size_t a = 0; a < 7; a++)
		for (size_t b = 0; b < 7; b++)
			for (int al = MK_ALIGN_BOTTOM_RIGHT; al <= MK_ALIGN_TOP_LEFT; al++) {
				int64_t q = sizes[a], kv = sizes[b];
				check_cells("causal", causal_cell, 0, q, kv, (mk_align)al);
				for (int64_t w = 0; w < 4; w += 3) {
					snprintf(text, sizeof text, "local(w=%lld)", (long long)w);
					check_cells(text, local_cell, w, q, kv, (mk_align)al);
				}
				snprintf(text, sizeof text, "prefix(p=%lld)", (long long)(kv / 3));
				check_cells(text, prefix_cell, kv / 3, q, kv, (mk_align)al);
			}
}
END_TEST

static uint64_t measured(const char *text, int64_t q, int64_t kv)
{
	mk_expr *e = bind_rect(text, q, kv, false);
	mk_measure r;
	int64_t block = 16;
	ck_assert_int_eq(mk_measure_expr(e, &block, 1, NULL, NULL, &r), MK_OK);
	ck_assert_int_eq(r.n, q);
	ck_assert_int_eq(r.kv_len, kv);
	ck_assert(!r.symmetric || q == kv);
	ck_assert_uint_eq(r.tiles[0].tiles, (uint64_t)((q + 15) / 16) * (uint64_t)((kv + 15) / 16));
	mk_expr_free(e);
	return r.count;
}

/* Closed forms of |M|: causal q kv - q(q-1)/2 when q <= kv, else
 * kv(kv+1)/2 (the first q - kv queries come before every key); local and
 * prefix as sums of per-row interval lengths (the prefix's p grid positions
 * are its first p - (grid - kv) keys). */
START_TEST(counts_have_closed_forms)
{
	for (int64_t q = 1; q <= 140; q += 3)
		for (int64_t kv = 1; kv <= 140; kv += 7) {
			uint64_t causal = q <= kv ? (uint64_t)(q * kv - q * (q - 1) / 2)
						  : (uint64_t)(kv * (kv + 1) / 2);
			int64_t w = 5, p = 11, local = 0, prefix = 0, d = kv - q;
			int64_t pk = p - ((q > kv ? q : kv) - kv);
			for (int64_t i = 0; i < q; i++) {
				int64_t c = i + d;
				local += clamp(c + w, -1, kv - 1) - clamp(c - w, 0, kv) + 1 > 0
						 ? clamp(c + w, -1, kv - 1) - clamp(c - w, 0, kv) + 1
						 : 0;
				prefix += clamp(c + 1 > pk ? c + 1 : pk, 0, kv);
			}
			ck_assert_uint_eq(measured("causal", q, kv), causal);
			ck_assert_uint_eq(measured("local5", q, kv), (uint64_t)local);
			ck_assert_uint_eq(measured("prefix11", q, kv), (uint64_t)prefix);
		}
}
END_TEST

/* Decoding one token with a KV cache of 9: the one row sees every key, or
 * the last w + 1 of them under a window. */
START_TEST(one_query_is_the_last_row)
{
	ck_assert_uint_eq(measured("causal", 1, 9), 9);
	ck_assert_uint_eq(measured("local2", 1, 9), 3);
	ck_assert_uint_eq(measured("causal&local2", 1, 9), 3);
	ck_assert_uint_eq(measured("full", 1, 9), 9);
}
END_TEST

/* Top-left, query i is key i: causal keeps q(q+1)/2 cells when q <= kv,
 * kv(kv+1)/2 + (q - kv) kv when q > kv (the later queries see every key);
 * every query's own key is set and none past it; measure says so, and the
 * alignment, which a square mask does not keep. */
START_TEST(top_left_counts_have_closed_forms)
{
	for (int64_t q = 1; q <= 140; q += 3)
		for (int64_t kv = 1; kv <= 140; kv += 7) {
			uint64_t want = q <= kv ? (uint64_t)(q * (q + 1) / 2)
						: (uint64_t)(kv * (kv + 1) / 2 + (q - kv) * kv);
			mk_expr *e = bind_aligned("causal", q, kv, false, MK_ALIGN_TOP_LEFT);
			mk_measure r;
			ck_assert_int_eq(mk_measure_expr(e, NULL, 0, NULL, NULL, &r), MK_OK);
			ck_assert_uint_eq(r.count, want);
			ck_assert_uint_eq(r.diag, (uint64_t)(q < kv ? q : kv));
			ck_assert(r.causal);
			ck_assert_int_eq(r.align, q == kv ? MK_ALIGN_BOTTOM_RIGHT : MK_ALIGN_TOP_LEFT);
			mk_expr_free(e);
		}
	ck_assert_str_eq(mk_align_name(MK_ALIGN_TOP_LEFT), "top-left");
	ck_assert_str_eq(mk_align_name(MK_ALIGN_BOTTOM_RIGHT), "bottom-right");
}
END_TEST

/* An alignment that is neither corner is refused, naming the parameter. */
START_TEST(bad_align_is_an_error)
{
	mk_expr *e;
	ck_assert_int_eq(mk_expr_parse("causal", &e), MK_OK);
	ck_assert_int_eq(mk_expr_bind(e, &(mk_bind_opts){.n = 2, .kv_len = 5, .align = 7}),
			 MK_EINVAL);
	ck_assert_str_eq(mk_error_get()->param, "align");
	mk_expr_free(e);
}
END_TEST

/* Packed documents of lengths 3, 2 (and one padding token) at n = 6, by hand. */
START_TEST(document_by_hand)
{
	static const char *const want[] = {"###...", "###...", "###...", "...##.", "...##.",
					   "......"};
	static const char *const want_causal[] = {"#.....", "##....", "###...", "...#..",
						  "...##.", "......"};
	for (int causal = 0; causal < 2; causal++) {
		mk_expr *e = bind_rect(causal ? "document(lengths=3,2,causal=1)"
					      : "document(lengths=3,2)", 6, 6, true);
		const char *const *w = causal ? want_causal : want;
		mk_mask *m;
		ck_assert_int_eq(mk_expr_to_mask(e, &m), MK_OK);
		for (int64_t i = 0; i < 6; i++)
			for (int64_t j = 0; j < 6; j++)
				ck_assert(mk_mask_test(m, i, j) == (w[i][j] == '#'));
		mk_mask_free(m);
		mk_expr_free(e);
	}
}
END_TEST

START_TEST(bad_sizes_are_errors)
{
	mk_expr *e;
	mk_bind_opts kv_only = {.kv_len = 8};
	ck_assert_int_eq(mk_expr_parse("document(lengths=4,5)", &e), MK_OK);
	ck_assert_int_eq(mk_expr_bind(e, &(mk_bind_opts){.n = 8}), MK_EINVAL);
	ck_assert_ptr_nonnull(strstr(mk_error(), "add up to more than"));
	mk_expr_free(e);
	ck_assert_int_eq(mk_expr_parse("causal", &e), MK_OK);
	ck_assert_int_eq(mk_expr_bind(e, &kv_only), MK_EINVAL);
	mk_expr_free(e);
}
END_TEST

/* A rectangular mask written as .npy reads back with its shape; its
 * transpose is kv x q. */
START_TEST(npy_round_trip)
{
	char path[64];
	mk_expr *e = bind_rect("local1+prefix2", 5, 70, false), *f;
	mk_mask *a, *b, *t;
	snprintf(path, sizeof path, "/tmp/check_rect_%ld.npy", (long)getpid());
	ck_assert_int_eq(mk_write_expr(e, path, NULL), MK_OK);
	ck_assert_int_eq(mk_expr_to_mask(e, &a), MK_OK);
	ck_assert_int_eq(mk_expr_file(path, &f), MK_OK);
	ck_assert_int_eq(mk_expr_bind(f, &(mk_bind_opts){0}), MK_OK);
	ck_assert_int_eq(mk_expr_n(f), 5);
	ck_assert_int_eq(mk_expr_kv_len(f), 70);
	ck_assert_int_eq(mk_expr_to_mask(f, &b), MK_OK);
	ck_assert(mk_mask_equal(a, b));
	ck_assert_int_eq(mk_mask_transpose(a, &t), MK_OK);
	ck_assert_int_eq(mk_mask_n(t), 70);
	ck_assert_int_eq(mk_mask_cols(t), 5);
	for (int64_t i = 0; i < 5; i++)
		for (int64_t j = 0; j < 70; j++)
			ck_assert(mk_mask_test(t, j, i) == mk_mask_test(a, i, j));
	ck_assert_int_eq(mk_write_expr(e, "/tmp/check_rect_no.json", NULL), MK_EINVAL);
	unlink(path);
	mk_mask_free(a);
	mk_mask_free(b);
	mk_mask_free(t);
	mk_expr_free(e);
	mk_expr_free(f);
}
END_TEST

/* Every CPU kernel and normalisation on q_len != kv_len, against the
 * double-precision reference, with empty rows (q > kv: the first queries
 * come before every key). */
START_TEST(attention_matches_the_reference)
{
	static const int64_t sizes[][2] = {{1, 40}, {9, 70}, {70, 9}};
	static const char *const norms[] = {"softmax", "dnas", "sinkhorn:3", "hnas:0.3"};
	const mk_attn_backend *cpu = mk_attn_backend_get("cpu");
	for (size_t z = 0; z < 3; z++) {
		int64_t q = sizes[z][0], kv = sizes[z][1], d = 8, rows[MK_REF_MAX_ROWS], nrows;
		mk_attn_shape s = {.batch = 1, .heads = 2, .n = q, .d = d, .kv_len = kv};
		float *qq = malloc(sizeof(float) * (size_t)(2 * q * d));
		float *kk = malloc(sizeof(float) * (size_t)(2 * kv * d));
		float *vv = malloc(sizeof(float) * (size_t)(2 * kv * d));
		float *o = malloc(sizeof(float) * (size_t)(2 * q * d));
		double *ref = malloc(sizeof(double) * (size_t)(2 * q * d));
		mk_expr *e = bind_rect("causal&local20+prefix2", q, kv, false);
		mk_attn_layout *l;
		mk_mask *m;
		uint64_t seed = 42;
		for (int64_t c = 0; c < 2 * (q > kv ? q : kv) * d; c++) {
			float a, b;
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			a = (float)((double)(seed >> 40) / (double)(1 << 24) - 0.5);
			b = (float)((double)((seed >> 20) & 0xfffff) / (double)(1 << 20) - 0.5);
			if (c < 2 * kv * d)
				kk[c] = a, vv[c] = b;
			if (c < 2 * q * d)
				qq[c] = a * 3.0f - b;
		}
		ck_assert_int_eq(mk_expr_to_mask(e, &m), MK_OK);
		ck_assert_int_eq(mk_attn_layout_new(m, 16, 0, &l), MK_OK);
		nrows = mk_attn_ref_rows(q, rows);
		for (size_t k = 0; k < 4; k++) {
			mk_norm norm;
			ck_assert_int_eq(mk_norm_parse(norms[k], &norm), MK_OK);
			ck_assert_int_eq(mk_attn_reference(&norm, &s, qq, kk, vv, m, rows, nrows, ref),
					 MK_OK);
			for (int kern = MK_KERNEL_MASKED; kern <= MK_KERNEL_CSR; kern++) {
				mk_attn_stats st;
				for (int64_t c = 0; c < 2 * q * d; c++) /* unwritten: NaN, not the last kernel's */
					o[c] = NAN;
				ck_assert_int_eq(mk_attn_run(cpu, (mk_attn_kernel)kern, &norm, &s, qq,
							     kk, vv, l, o, &st), MK_OK);
				ck_assert_msg(mk_attn_ref_error(&s, rows, nrows, ref, o) < 1e-4,
					      "%s kernel %d at %lld x %lld", norms[k], kern,
					      (long long)q, (long long)kv);
				for (int64_t c = 0; c < 2 * q * d; c++) /* every row, not only ref's */
					ck_assert_msg(isfinite(o[c]), "%s kernel %d: O[%lld] unwritten",
						      norms[k], kern, (long long)c);
				ck_assert_int_eq(st.empty_rows, q > kv ? q - kv : 0);
			}
		}
		mk_attn_layout_free(l);
		mk_mask_free(m);
		mk_expr_free(e);
		free(qq);
		free(kk);
		free(vv);
		free(o);
		free(ref);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rect");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, cells_match_the_definitions);
	tcase_add_test(tc, counts_have_closed_forms);
	tcase_add_test(tc, one_query_is_the_last_row);
	tcase_add_test(tc, top_left_counts_have_closed_forms);
	tcase_add_test(tc, bad_align_is_an_error);
	tcase_add_test(tc, document_by_hand);
	tcase_add_test(tc, bad_sizes_are_errors);
	tcase_add_test(tc, npy_round_trip);
	tcase_add_test(tc, attention_matches_the_reference);
	suite_add_tcase(s, tc);
	return mk_test_main(s);
}
