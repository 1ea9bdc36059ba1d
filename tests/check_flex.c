/* Unit tests of FlexAttention block layouts in .npz files: the writer's
 * arrays for a hand-counted mask, reading them back, numpy's deflated
 * archives, and every malformed input the reader refuses. */
#include "config.h"
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "npz.h"
#include "testutil.h"
#include "scratchutil.h"

/* ---- helpers -------------------------------------------------------------- */

static void mask_row(void *ctx, int64_t i, uint64_t *dst)
{
	const mk_mask *m = ctx;
	memcpy(dst, mk_mask_crow(m, i), mk_mask_stride(m) * sizeof *dst);
}

static void write_flex(const mk_mask *m, const char *p, int64_t block)
{
	mk_rows r = {.n = mk_mask_n(m), .cols = mk_mask_cols(m), .row = mask_row,
		     .ctx = (void *)m};
	mk_write_opts o = {.format = MK_FMT_FLEX, .block = block};
	FILE *f = fopen(p, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_msg(mk_io_write_flex(&r, f, &o) == MK_OK, "%s", mk_error());
	ck_assert_int_eq(fclose(f), 0);
}

static void expect_ints(mk_npz *z, const char *name, int ndim, const int64_t *shape,
			const int64_t *want)
{
	mk_npz_ints a;
	bool found;
	ck_assert_msg(mk_npz_read_ints(z, name, 0, 0, &found, &a) == MK_OK, "%s", mk_error());
	ck_assert_msg(found, "no member %s", name);
	ck_assert_int_eq(a.ndim, ndim);
	for (int k = 0; k < ndim; k++)
		ck_assert_int_eq(a.shape[k], shape[k]);
	for (uint64_t e = 0; e < a.count; e++)
		ck_assert_msg(a.v[e] == want[e], "%s[%d] = %lld, expected %lld", name, (int)e,
			      (long long)a.v[e], (long long)want[e]);
	free(a.v);
}

/* m with each block x block tile that holds a set cell filled whole. */
static mk_mask *blocks_filled(const mk_mask *m, int64_t block)
{
	int64_t n = mk_mask_n(m);
	mk_mask *out;
	ck_assert_int_eq(mk_mask_new(n, 0, &out), MK_OK);
	for (int64_t i0 = 0; i0 < n; i0 += block)
		for (int64_t j0 = 0; j0 < n; j0 += block) {
			bool any = false;
			for (int64_t i = i0; i < i0 + block && i < n; i++)
				for (int64_t j = j0; j < j0 + block && j < n; j++)
					any = any || mk_mask_test(m, i, j);
			for (int64_t i = i0; any && i < i0 + block && i < n; i++)
				for (int64_t j = j0; j < j0 + block && j < n; j++)
					mk_mask_set(out, i, j, true);
		}
	return out;
}

static mk_mask *causal(int64_t n)
{
	mk_mask *m;
	ck_assert_int_eq(mk_mask_new(n, 0, &m), MK_OK);
	for (int64_t i = 0; i < n; i++)
		for (int64_t j = 0; j <= i; j++)
			mk_mask_set(m, i, j, true);
	return m;
}

/* ---- writing ---------------------------------------------------------------- */

/* causal at n = 10 in blocks of 4 (3 x 3 tiles, the last row and column of
 * them 2 cells wide):
 *   query block 0: key block 0 partial (the diagonal), 1 and 2 empty;
 *   query block 1: key block 0 full, 1 partial (the diagonal), 2 empty;
 *   query block 2: 0, 1 and 2 partial: every cell of 0 and 1 is set, but a
 *   tile cut by the end of the sequence is never full.
 * Rows are padded with the blocks not listed, ascending, as FlexAttention's
 * create_block_mask gives them (its arrays for this mask are these). */
START_TEST(causal_10_by_4)
{
	static const int64_t kv_num[] = {1, 1, 3}, kv_idx[] = {0, 1, 2, 1, 0, 2, 0, 1, 2};
	static const int64_t full_num[] = {0, 1, 0}, full_idx[] = {0, 1, 2, 0, 1, 2, 0, 1, 2};
	static const int64_t counts[] = {1, 1, 3}, lists[] = {1, 1, 3, 3}, pair[] = {2};
	static const int64_t ten[] = {10}, four[] = {4, 4};
	mk_mask *m = causal(10);
	mk_npz z;

	write_flex(m, path("c.npz"), 4);
	ck_assert_msg(mk_npz_open(path("c.npz"), &z) == MK_OK, "%s", mk_error());
	ck_assert_uint_eq(z.count, 7);
	expect_ints(&z, "kv_num_blocks", 3, counts, kv_num);
	expect_ints(&z, "kv_indices", 4, lists, kv_idx);
	expect_ints(&z, "full_kv_num_blocks", 3, counts, full_num);
	expect_ints(&z, "full_kv_indices", 4, lists, full_idx);
	expect_ints(&z, "q_len", 0, NULL, ten);
	expect_ints(&z, "kv_len", 0, NULL, ten);
	expect_ints(&z, "block_size", 1, pair, four);
	mk_npz_close(&z);
	mk_mask_free(m);
}
END_TEST

/* Read back: the cells of the non-empty blocks, 16 + 32 + 20 of them. */
START_TEST(causal_10_by_4_reads_back)
{
	mk_mask *m = causal(10), *got = NULL, *want = blocks_filled(m, 4);

	write_flex(m, path("c.npz"), 4);
	ck_assert_msg(mk_mask_load(path("c.npz"), 0, &got) == MK_OK, "%s", mk_error());
	ck_assert_uint_eq(mk_mask_count(got), 16 + 32 + 20);
	ck_assert(mk_mask_equal(got, want));
	mk_mask_free(m);
	mk_mask_free(got);
	mk_mask_free(want);
}
END_TEST

static const struct {
	int64_t n, block;
	unsigned pct;
} trips[] = {{1, 1, 50}, {37, 5, 3}, {64, 16, 1}, {65, 64, 0}, {130, 7, 2}, {200, 200, 1}};

START_TEST(round_trip_is_blocks_filled)
{
	mk_mask *m = mk_test_random_mask(trips[_i].n, 7 + (uint64_t)_i, trips[_i].pct);
	mk_mask *want = blocks_filled(m, trips[_i].block), *got = NULL;

	write_flex(m, path("r.npz"), trips[_i].block);
	ck_assert_msg(mk_mask_load(path("r.npz"), 0, &got) == MK_OK, "%s", mk_error());
	ck_assert(mk_mask_equal(got, want));
	mk_mask_free(m);
	mk_mask_free(want);
	mk_mask_free(got);
}
END_TEST

/* ---- numpy's files ------------------------------------------------------------- */

/* np.savez_compressed (deflated members, ZIP64 local headers) of int64
 * arrays for n = 8 in blocks of 4, without q_len and kv_len:
 * kv_num_blocks [[[1, 1]]], kv_indices [[[[0, 1], [1, 0]]]],
 * full_kv_num_blocks [[[1, 0]]], full_kv_indices [[[[1, 0], [0, 1]]]],
 * block_size 4: query block 0 sees key blocks 0 (partial) and 1 (full),
 * query block 1 key block 1. */
static const char numpy_compressed[] =
	"504b03041400000008000000210012fcf9b54d00000090000000110014006b765f6e756d5f626c6f636b732e"
	"6e70790100100090000000000000004d000000000000009bec17ea1b10c9c850c650ad9e925a9c5ca46ea5a0"
	"6e9369a1aea3a09e965f54529498179f5f94920a12774bcc294e058a17672416a402f91a863a0a4064a4a9a3"
	"50ab401ee062648000180d00504b030414000000080000002100b6b8997750000000a00000000e0014006b76"
	"5f696e64696365732e6e707901001000a00000000000000050000000000000009bec17ea1b10c9c850c650ad"
	"9e925a9c5ca46ea5a06e9369a1aea3a09e965f54529498179f5f94920a12774bcc294e058a17672416a402f9"
	"1a863a0a406404449a3a0ab50a64002e06286044a3610000504b0304140000000800000021008cfc53794b00"
	"0000900000001600140066756c6c5f6b765f6e756d5f626c6f636b732e6e7079010010009000000000000000"
	"4b000000000000009bec17ea1b10c9c850c650ad9e925a9c5ca46ea5a06e9369a1aea3a09e965f5452949817"
	"9f5f94920a12774bcc294e058a17672416a402f91a863a0a4064a4a9a350ab401ee06264400500504b030414"
	"0000000800000021003449a4654f000000a00000001300140066756c6c5f6b765f696e64696365732e6e7079"
	"01001000a0000000000000004f000000000000009bec17ea1b10c9c850c650ad9e925a9c5ca46ea5a06e9369"
	"a1aea3a09e965f54529498179f5f94920a12774bcc294e058a17672416a402f91a863a0a406404449a3a0ab5"
	"0a64002e4606ec00260e00504b030414000000080000002100c0bf7fe246000000880000000e001400626c6f"
	"636b5f73697a652e6e707901001000880000000000000046000000000000009bec17ea1b10c9c850c650ad9e"
	"925a9c5ca46ea5a06e9369a1aea3a09e965f54529498179f5f94920a12774bcc294e058a17672416a402f91a"
	"9a3a0ab50a14012e1606080000504b010214031400000008000000210012fcf9b54d00000090000000110000"
	"0000000000000000008001000000006b765f6e756d5f626c6f636b732e6e7079504b01021403140000000800"
	"00002100b6b8997750000000a00000000e00000000000000000000008001900000006b765f696e6469636573"
	"2e6e7079504b01021403140000000800000021008cfc53794b00000090000000160000000000000000000000"
	"80012001000066756c6c5f6b765f6e756d5f626c6f636b732e6e7079504b0102140314000000080000002100"
	"3449a4654f000000a00000001300000000000000000000008001b301000066756c6c5f6b765f696e64696365"
	"732e6e7079504b0102140314000000080000002100c0bf7fe246000000880000000e00000000000000000000"
	"00800147020000626c6f636b5f73697a652e6e7079504b050600000000050005003c010000cd0200000000";

static void put_hex(const char *p, const char *hex)
{
	size_t len = strlen(hex) / 2;
	unsigned char *buf = malloc(len);
	for (size_t k = 0; k < len; k++) {
		unsigned v;
		ck_assert_int_eq(sscanf(hex + 2 * k, "%2x", &v), 1);
		buf[k] = (unsigned char)v;
	}
	put_file(p, buf, len);
	free(buf);
}

START_TEST(reads_numpy_savez_compressed)
{
	mk_mask *got = NULL;
	put_hex(path("np.npz"), numpy_compressed);
	ck_assert_msg(mk_mask_load(path("np.npz"), 0, &got) == MK_OK, "%s", mk_error());
	ck_assert_int_eq(mk_mask_n(got), 8);
	for (int64_t i = 0; i < 8; i++)
		for (int64_t j = 0; j < 8; j++)
			ck_assert_int_eq(mk_mask_test(got, i, j), i < 4 || j >= 4);
	mk_mask_free(got);
}
END_TEST

/* ---- malformed layouts ---------------------------------------------------------- */

struct member {
	const char *name, *descr;
	int ndim;
	int64_t shape[MK_NPY_MAX_DIMS];
	int64_t v[8];
};

/* n = 8 in blocks of 4, as numpy_compressed, every member int32 */
#define BASE_MEMBERS 7
static const struct member base[BASE_MEMBERS] = {
	{"kv_num_blocks", "<i4", 3, {1, 1, 2}, {1, 1}},
	{"kv_indices", "<i4", 4, {1, 1, 2, 2}, {0, 1, 1, 0}},
	{"full_kv_num_blocks", "<i4", 3, {1, 1, 2}, {1, 0}},
	{"full_kv_indices", "<i4", 4, {1, 1, 2, 2}, {1, 0, 0, 1}},
	{"q_len", "<i4", 0, {0}, {8}},
	{"kv_len", "<i4", 0, {0}, {8}},
	{"block_size", "<i4", 1, {2}, {4, 4}},
};

static void member_emit(void *ctx, mk_npz_sink *s)
{
	const struct member *m = ctx;
	size_t size = (size_t)(m->descr[2] - '0');
	int64_t count = 1;
	for (int k = 0; k < m->ndim; k++)
		count *= m->shape[k];
	for (int64_t e = 0; e < count; e++)
		for (size_t b = 0; b < size; b++) {
			size_t at = m->descr[0] == '>' ? size - 1 - b : b;
			uint8_t byte = (uint8_t)((uint64_t)m->v[e] >> (8 * at));
			mk_npz_put(s, &byte, 1);
		}
}

/* base with member `which` replaced by *with (or dropped when with is NULL). */
static void put_layout(const char *p, int which, const struct member *with)
{
	FILE *f = fopen(p, "wb");
	mk_npz_writer z = {.f = f};
	int ret = MK_OK;
	ck_assert_ptr_nonnull(f);
	for (int k = 0; k < BASE_MEMBERS && ret == MK_OK; k++) {
		const struct member *m = k == which ? with : &base[k];
		if (m)
			ret = mk_npz_add(&z, m->name, m->descr, (size_t)(m->descr[2] - '0'), m->ndim,
					 m->shape, member_emit, (void *)m);
	}
	ck_assert_msg(mk_npz_finish(&z, ret) == MK_OK, "%s", mk_error());
	ck_assert_int_eq(fclose(f), 0);
}

static void expect_flex_error(const char *p, const char *want)
{
	mk_mask *m = NULL;
	int ret = mk_mask_load(p, 0, &m);
	ck_assert_msg(ret == MK_EFORMAT, "%s: status %d (%s)", p, ret, mk_error());
	ck_assert_ptr_null(m);
	ck_assert_msg(strstr(mk_error(), p), "message '%s' does not name the file", mk_error());
	ck_assert_msg(strstr(mk_error(), want), "message '%s' lacks '%s'", mk_error(), want);
	ck_assert_ptr_null(strchr(mk_error(), '\n'));
}

static const struct {
	int which;
	struct member with;
	bool drop;
	const char *want;
} bad_layouts[] = {
	{1, {0}, true, "no member 'kv_indices'"},
	{6, {0}, true, "no member 'block_size'"},
	{0, {"kv_num_blocks", "<f4", 3, {1, 1, 2}, {0}}, false, "dtype '<f4', expected int32"},
	{1, {"kv_indices", "<i2", 4, {1, 1, 2, 2}, {0}}, false, "dtype '<i2'"},
	{1, {"kv_indices", "<i4", 3, {1, 2, 2}, {0, 1, 1, 0}}, false, "expected 3 [B, H, nb_q]"},
	{0, {"kv_num_blocks", "<i4", 3, {2, 1, 2}, {1, 1, 1, 1}}, false, "batch size 2"},
	{1, {"kv_indices", "<i4", 4, {1, 2, 2, 1}, {0, 1, 1, 0}}, false, "disagree"},
	{3, {"full_kv_indices", "<i4", 4, {1, 1, 3, 2}, {1, 0, 0, 1, 0, 0}}, false, "disagree"},
	{0, {"kv_num_blocks", "<i4", 3, {1, 1, 2}, {3, 1}}, false,
	 "kv_num_blocks[0, 0, 0] = 3, not a count from 0 to 2"},
	{2, {"full_kv_num_blocks", "<i4", 3, {1, 1, 2}, {1, -1}}, false,
	 "full_kv_num_blocks[0, 0, 1] = -1"},
	{1, {"kv_indices", "<i4", 4, {1, 1, 2, 2}, {2, 1, 1, 0}}, false,
	 "kv_indices[0, 0, 0, 0] = 2 is not a key block (0 to 1)"},
	{3, {"full_kv_indices", "<i8", 4, {1, 1, 2, 2}, {-1, 0, 0, 1}}, false,
	 "full_kv_indices[0, 0, 0, 0] = -1"},
	{1, {"kv_indices", "<i4", 4, {1, 1, 2, 2}, {1, 0, 1, 0}}, false,
	 "key block 1 of query block 0 is both partial and full"},
	{2, {0}, true, "full_kv_indices without full_kv_num_blocks"},
	{4, {"q_len", "<i4", 0, {0}, {20}}, false, "q_len = 20 in blocks of 4 makes 5"},
	{4, {"q_len", "<i4", 0, {0}, {3}}, false, "q_len = 3 in blocks of 4 makes 1"},
	{4, {"q_len", "<i4", 1, {2}, {8, 8}}, false, "q_len must be a scalar"},
	{6, {"block_size", "<i4", 0, {0}, {0}}, false, "block_size = 0, not from 1"},
	{6, {"block_size", "<i4", 1, {3}, {4, 4, 4}}, false, "block_size must be a scalar or a pair"},
	{5, {"kv_len", "<i8", 0, {0}, {(int64_t)1 << 40}}, false, "kv_len = 1099511627776"},
};

START_TEST(refuses_bad_layouts)
{
	put_layout(path("bad.npz"), bad_layouts[_i].which,
		   bad_layouts[_i].drop ? NULL : &bad_layouts[_i].with);
	expect_flex_error(path("bad.npz"), bad_layouts[_i].want);
}
END_TEST

/* q_len != kv_len: a rectangular mask of the layout's blocks, clipped. */
START_TEST(reads_a_rectangular_layout)
{
	static const struct member q7 = {"q_len", "<i4", 0, {0}, {7}};
	mk_mask *m = NULL;
	put_layout(path("rect.npz"), 4, &q7);
	ck_assert_msg(mk_mask_load(path("rect.npz"), 0, &m) == MK_OK, "%s", mk_error());
	ck_assert_int_eq(mk_mask_n(m), 7);
	ck_assert_int_eq(mk_mask_cols(m), 8);
	mk_mask_free(m);
}
END_TEST

/* Duplicates need a count of 2 in a row that is free of full blocks. */
START_TEST(refuses_duplicate_blocks)
{
	static const struct member num = {"kv_num_blocks", "<i4", 3, {1, 1, 2}, {1, 2}};
	static const struct member idx = {"kv_indices", "<i4", 4, {1, 1, 2, 2}, {0, 1, 1, 1}};
	FILE *f = fopen(path("dup.npz"), "wb");
	mk_npz_writer z = {.f = f};
	int ret = mk_npz_add(&z, num.name, num.descr, 4, num.ndim, num.shape, member_emit,
			     (void *)&num);
	if (ret == MK_OK)
		ret = mk_npz_add(&z, idx.name, idx.descr, 4, idx.ndim, idx.shape, member_emit,
				 (void *)&idx);
	if (ret == MK_OK)
		ret = mk_npz_add(&z, base[6].name, "<i4", 4, 1, base[6].shape, member_emit,
				 (void *)&base[6]);
	ck_assert_int_eq(mk_npz_finish(&z, ret), MK_OK);
	ck_assert_int_eq(fclose(f), 0);
	expect_flex_error(path("dup.npz"), "key block 1 appears twice in kv_indices[0, 0, 1]");
}
END_TEST

/* int64 and big-endian members, and no q_len/kv_len (from the shapes). */
START_TEST(reads_other_integer_types)
{
	struct member big = base[1], wide = base[0];
	mk_mask *got = NULL;
	big.descr = ">i4";
	wide.descr = "<i8";
	put_layout(path("a.npz"), 1, &big);
	ck_assert_msg(mk_mask_load(path("a.npz"), 0, &got) == MK_OK, "%s", mk_error());
	ck_assert_uint_eq(mk_mask_count(got), 32 + 16);
	mk_mask_free(got);
	put_layout(path("b.npz"), 0, &wide);
	ck_assert_msg(mk_mask_load(path("b.npz"), 0, &got) == MK_OK, "%s", mk_error());
	ck_assert_uint_eq(mk_mask_count(got), 32 + 16);
	mk_mask_free(got);
	put_layout(path("c.npz"), 4, NULL); /* q_len = 2 blocks of 4 */
	ck_assert_msg(mk_mask_load(path("c.npz"), 0, &got) == MK_OK, "%s", mk_error());
	ck_assert_int_eq(mk_mask_n(got), 8);
	mk_mask_free(got);
}
END_TEST

/* ---- damaged archives --------------------------------------------------------------- */

static unsigned char *get_bytes(const char *p, size_t *len)
{
	FILE *f = fopen(p, "rb");
	unsigned char *buf = malloc(1 << 16);
	ck_assert_ptr_nonnull(f);
	*len = fread(buf, 1, 1 << 16, f);
	fclose(f);
	return buf;
}

static void put_u32(unsigned char *p, uint32_t v)
{
	for (int b = 0; b < 4; b++)
		p[b] = (unsigned char)(v >> (8 * b));
}

START_TEST(refuses_damaged_archives)
{
	mk_mask *m = causal(10);
	unsigned char *buf;
	size_t len;

	write_flex(m, path("good.npz"), 4);
	buf = get_bytes(path("good.npz"), &len);
	put_file(path("t.npz"), buf, len / 2);
	expect_flex_error(path("t.npz"), "no zip end record");
	put_file(path("s.npz"), buf, 10);
	expect_flex_error(path("s.npz"), "too short for a zip archive");
	/* the first member's data: a 30-byte local header, its 17-byte name and
	 * a 128-byte .npy header before it */
	buf[30 + 17 + 128] ^= 1;
	put_file(path("crc.npz"), buf, len);
	expect_flex_error(path("crc.npz"), "fails its CRC check");
	buf[30 + 17 + 128] ^= 1;
	put_u32(buf + len - 6, (uint32_t)len); /* the directory's offset */
	put_file(path("cd.npz"), buf, len);
	expect_flex_error(path("cd.npz"), "the central directory lies outside the file");
	put_u32(buf + len - 6, 0); /* the directory where the first member is */
	put_file(path("cd0.npz"), buf, len);
	expect_flex_error(path("cd0.npz"), "damaged zip archive");
	free(buf);
	mk_mask_free(m);
}
END_TEST

START_TEST(writer_format_by_name_and_extension)
{
	ck_assert_int_eq(mk_format_from_name("flex"), MK_FMT_FLEX);
	ck_assert_int_eq(mk_format_from_path("a/layout.npz"), MK_FMT_FLEX);
	ck_assert_int_eq(mk_format_from_path("layout.flex"), MK_FMT_NONE);
	ck_assert_str_eq(mk_format_name(MK_FMT_FLEX), "flex");
}
END_TEST

static Suite *flex_suite(void)
{
	Suite *s = suite_create("flex");
	TCase *tc = tcase_create("flex");
	tcase_add_checked_fixture(tc, scratch_setup, scratch_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, causal_10_by_4);
	tcase_add_test(tc, causal_10_by_4_reads_back);
	tcase_add_loop_test(tc, round_trip_is_blocks_filled, 0, sizeof trips / sizeof trips[0]);
	tcase_add_test(tc, reads_numpy_savez_compressed);
	tcase_add_loop_test(tc, refuses_bad_layouts, 0, sizeof bad_layouts / sizeof bad_layouts[0]);
	tcase_add_test(tc, refuses_duplicate_blocks);
	tcase_add_test(tc, reads_a_rectangular_layout);
	tcase_add_test(tc, reads_other_integer_types);
	tcase_add_test(tc, refuses_damaged_archives);
	tcase_add_test(tc, writer_format_by_name_and_extension);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return mk_test_main(flex_suite());
}
