/* Unit tests of mask files: round trips, layouts, malformed inputs, atomic writes. */
#include "config.h"
#include <check.h>
#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cJSON.h>
#include <hdf5.h>
#include "internal.h"
#include "testutil.h"
#include "scratchutil.h"

static char *get_file(const char *p, size_t *len)
{
	FILE *f = fopen(p, "rb");
	struct stat st;
	char *buf;
	ck_assert(f && fstat(fileno(f), &st) == 0);
	buf = calloc((size_t)st.st_size + 1, 1);
	ck_assert_uint_eq(fread(buf, 1, (size_t)st.st_size, f), (size_t)st.st_size);
	fclose(f);
	if (len)
		*len = (size_t)st.st_size;
	return buf;
}

static void expect_file(const char *p, const char *want)
{
	char *text = get_file(p, NULL);
	ck_assert_str_eq(text, want);
	free(text);
}

static cJSON *get_json(const char *p)
{
	char *text = get_file(p, NULL);
	cJSON *root = cJSON_Parse(text);
	ck_assert_msg(root != NULL, "not JSON: %s", text);
	free(text);
	return root;
}

static void expect_json(const cJSON *root, const char *key, const char *want)
{
	char *text = cJSON_PrintUnformatted(cJSON_GetObjectItem(root, key));
	ck_assert_msg(text && strcmp(text, want) == 0, "%s: %s, expected %s", key, text, want);
	cJSON_free(text);
}


/* A mask from its rows of '#' (set) and '.' (clear), separated by '/'. */
static mk_mask *mask_of(const char *rows)
{
	int64_t n = (int64_t)strcspn(rows, "/"), i = 0, j = 0;
	mk_mask *m;
	ck_assert_int_eq(mk_mask_new(n, 0, &m), MK_OK);
	for (const char *c = rows; *c; c++, j++) {
		if (*c == '/') {
			i++;
			j = -1;
		} else if (*c == '#') {
			mk_mask_set(m, i, j, true);
		}
	}
	ck_assert_int_eq(i, n - 1);
	return m;
}

/* Loads p and compares it with mask_of(rows). */
static void expect_loads(const char *p, const char *rows)
{
	mk_mask *want = mask_of(rows), *got = NULL;
	ck_assert_msg(mk_mask_load(p, 0, &got) == MK_OK, "%s: %s", p, mk_error());
	ck_assert_msg(mk_mask_equal(want, got), "%s differs from %s", p, rows);
	mk_mask_free(want);
	mk_mask_free(got);
}

static void mask_row(void *ctx, int64_t i, uint64_t *dst)
{
	const mk_mask *m = ctx;
	memcpy(dst, mk_mask_crow(m, i), mk_mask_stride(m) * sizeof *dst);
}

/* Row i of a band |i - j| <= 2, without materialising anything. */
static void band_row(void *ctx, int64_t i, uint64_t *dst)
{
	int64_t n = *(const int64_t *)ctx;
	mk_bits_zero(dst, mk_words(n));
	mk_bits_set_range(dst, i >= 2 ? i - 2 : 0, i + 3 < n ? i + 3 : n);
}

struct job {
	const mk_rows *rows;
	mk_write_opts opts;
};

static int write_tmp(const char *tmp, void *arg)
{
	static int (*const writers[])(const mk_rows *, FILE *, const mk_write_opts *) = {
		[MK_FMT_TXT] = mk_io_write_txt, [MK_FMT_JSON] = mk_io_write_json,
		[MK_FMT_PNG] = mk_io_write_png, [MK_FMT_NPY] = mk_io_write_npy,
		[MK_FMT_BLOCKS] = mk_io_write_blocks,
	};
	const struct job *j = arg;
	FILE *f;
	int ret;
	if (j->opts.format == MK_FMT_H5)
		return mk_io_write_h5(j->rows, tmp, &j->opts);
	f = fopen(tmp, "wb");
	ck_assert_ptr_nonnull(f);
	ret = writers[j->opts.format](j->rows, f, &j->opts);
	ck_assert_int_eq(fclose(f), 0);
	return ret;
}

static void write_rows(const mk_rows *r, const char *p, mk_write_opts o)
{
	struct job j = {.rows = r, .opts = o};
	ck_assert_msg(mk_io_atomic(p, write_tmp, &j) == MK_OK, "%s: %s", p, mk_error());
}

static void write_mask(mk_mask *m, const char *p, mk_format f, int64_t block)
{
	mk_rows r = {.n = mk_mask_n(m), .cols = mk_mask_cols(m), .row = mask_row, .ctx = m,
		     .expr = "test \"mask\""};
	write_rows(&r, p, (mk_write_opts){.format = f, .block = block, .seed = 42});
}

static void expect_load_error(const char *p, int status, const char *want)
{
	mk_mask *m = NULL;
	int ret = mk_mask_load(p, 0, &m);
	ck_assert_msg(ret == status, "%s: status %d, expected %d (%s)", p, ret, status, mk_error());
	ck_assert_ptr_null(m);
	ck_assert_msg(strlen(mk_error()) > 0, "%s: empty message", p);
	ck_assert_msg(strstr(mk_error(), want), "%s: message '%s' lacks '%s'", p, mk_error(), want);
}

/* ---- round trips ---------------------------------------------------------- */
static const int64_t sizes[] = {1, 7, 64, 65, 130};
static const mk_format roundtrip_formats[] = {MK_FMT_TXT, MK_FMT_JSON, MK_FMT_NPY, MK_FMT_H5};
static const char *roundtrip_names[] = {"m.txt", "m.json", "m.npy", "m.h5"};

START_TEST(roundtrip)
{
	int fi = _i / 5;
	int64_t n = sizes[_i % 5];
	mk_mask *m = mk_test_random_mask(n, (uint64_t)_i + 1, 30), *back = NULL;
	write_mask(m, path(roundtrip_names[fi]), roundtrip_formats[fi], 0);
	ck_assert_msg(mk_mask_load(path(roundtrip_names[fi]), 0, &back) == MK_OK, "%s n=%lld: %s",
		      roundtrip_names[fi], (long long)n, mk_error());
	ck_assert(mk_mask_equal(m, back));
	ck_assert_int_eq(scratch_walk(false), 1); /* no temporary file left */
	mk_mask_free(m);
	mk_mask_free(back);
}
END_TEST

START_TEST(txt_layout_is_exact)
{
	mk_mask *m = mask_of("#../#../..#");
	write_mask(m, path("m.txt"), MK_FMT_TXT, 0);
	expect_file(path("m.txt"), "#..\n#..\n..#\n");
	mk_mask_free(m);
}
END_TEST

START_TEST(json_header_and_count)
{
	mk_mask *m = mk_test_random_mask(9, 5, 40);
	char count[32];
	cJSON *root;
	write_mask(m, path("m.json"), MK_FMT_JSON, 0);
	root = get_json(path("m.json"));
	snprintf(count, sizeof count, "%llu", (unsigned long long)mk_mask_count(m));
	expect_json(root, "format", "\"maskkit-mask\"");
	expect_json(root, "expr", "\"test \\\"mask\\\"\"");
	expect_json(root, "n", "9");
	expect_json(root, "seed", "42");
	expect_json(root, "count", count);
	cJSON_Delete(root);
	mk_mask_free(m);
}
END_TEST

/* Hand-written files in the other accepted spellings. */
static const struct {
	const char *name, *text, *rows;
} good_files[] = {
	{"d.txt", "10\r\n0#\r\n\n", "#./.#"},
	{"d.json", "[[1, 0, true], [0, false, 0], [0, 0, 1]]", "#.#/.../..#"},
	{"o.json", "{\"n\": 2, \"rows\": [[1], []], \"extra\": null}", ".#/.."},
};

START_TEST(reads_other_spellings)
{
	put_file(path(good_files[_i].name), good_files[_i].text, strlen(good_files[_i].text));
	expect_loads(path(good_files[_i].name), good_files[_i].rows);
}
END_TEST

START_TEST(npy_header_layout)
{
	mk_mask *m = mk_test_random_mask(7, 3, 50);
	size_t len, hlen;
	char *b;
	write_mask(m, path("m.npy"), MK_FMT_NPY, 0);
	b = get_file(path("m.npy"), &len);
	ck_assert_mem_eq(b, "\x93NUMPY\x01\x00", 8);
	hlen = (size_t)(unsigned char)b[8] | (size_t)(unsigned char)b[9] << 8;
	ck_assert_uint_eq((10 + hlen) % 64, 0);
	ck_assert_uint_eq(len, 10 + hlen + 49);
	ck_assert_int_eq(strncmp(b + 10, "{'descr': '|b1', 'fortran_order': False, "
				 "'shape': (7, 7), }", 58), 0);
	ck_assert_int_eq(b[10 + hlen - 1], '\n');
	free(b);
	mk_mask_free(m);
}
END_TEST

/* Writes a .npy of the given version with the header dict and data. */
static void put_npy(const char *p, int version, const char *dict, const void *data, size_t len)
{
	char buf[512] = "\x93NUMPY";
	size_t pre = version == 1 ? 10 : 12, hlen = strlen(dict);
	buf[6] = (char)version;
	buf[8] = (char)hlen;
	memcpy(buf + pre, dict, hlen);
	memcpy(buf + pre + hlen, data, len);
	put_file(p, buf, pre + hlen + len);
}

START_TEST(npy_reads_fortran_order_and_wide_types)
{
	/* [[1, 0], [1, 1]] stored column by column */
	int32_t col_major[4] = {1, 1, 0, 1};
	/* [[0.5, -0.0], [0, 2]] big-endian doubles: -0.0 is clear */
	unsigned char be[32] = {0x3f, 0xe0, 0, 0, 0, 0, 0, 0, 0x80, 0, 0, 0, 0, 0, 0, 0,
				0, 0, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0};
	put_npy(path("f.npy"), 1, "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 2), }\n",
		col_major, sizeof col_major);
	expect_loads(path("f.npy"), "#./##");
	put_npy(path("b.npy"), 2, "{\"shape\": (2L, 2L), \"fortran_order\": False, "
		"\"descr\": \">f8\"}", be, sizeof be);
	expect_loads(path("b.npy"), "#./.#");
}
END_TEST

/* ---- pictures and block layouts ------------------------------------------ */
static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

START_TEST(png_sizes)
{
	static const int64_t ns[] = {8, 128, 3000};
	static const uint32_t sides[] = {128, 512, 1000};
	int64_t n = ns[_i];
	mk_rows r = {.n = n, .cols = n, .row = band_row, .ctx = &n};
	unsigned char *b;
	size_t len;
	write_rows(&r, path("m.png"), (mk_write_opts){.format = MK_FMT_PNG});
	b = (unsigned char *)get_file(path("m.png"), &len);
	ck_assert_uint_gt(len, 33);
	ck_assert_mem_eq(b, "\x89PNG\r\n\x1a\n", 8);
	ck_assert_mem_eq(b + 12, "IHDR", 4);
	ck_assert_uint_eq(be32(b + 16), sides[_i]);
	ck_assert_uint_eq(be32(b + 20), sides[_i]);
	ck_assert_uint_eq(b[24], 8); /* bit depth */
	ck_assert_uint_eq(b[25], 2); /* RGB */
	free(b);
}
END_TEST

/* Key blocks at B = 4: (0,0) full, (0,1) one cell, (1,1) all but (4,7). */
static const char *blocks_mask = "####..../####..../####.#../####..../"
				 "....###./....####/....####/....####";

/* The layouts of blocks_mask, worked out by hand: kv = partial blocks only
 * (disjoint from full, as in FlexAttention's BlockMask), nonempty = both. */
static const struct {
	int64_t block;
	const char *nb, *kv, *kv_num, *full, *full_num, *ne, *ne_num;
} layouts[] = {
	{4, "2", "[[1],[1]]", "[1,1]", "[[0],[]]", "[1,0]", "[[0,1],[1]]", "[2,1]"},
	/* 8 = 3 + 3 + 2: the 2 x 2 corner tile has every cell set, but a block cut
	 * by the end of the sequence is never full (FlexAttention pads it) */
	{3, "3", "[[1],[0,1,2],[1,2]]", "[1,3,2]", "[[0],[],[]]", "[1,0,0]",
	 "[[0,1],[0,1,2],[1,2]]", "[2,3,2]"},
};

START_TEST(blocks_layout)
{
	mk_mask *m = mask_of(blocks_mask);
	char block[16];
	cJSON *root;
	write_mask(m, path("b.json"), MK_FMT_BLOCKS, layouts[_i].block);
	root = get_json(path("b.json"));
	snprintf(block, sizeof block, "%d", (int)layouts[_i].block);
	expect_json(root, "format", "\"maskkit-blocks\"");
	expect_json(root, "n", "8");
	expect_json(root, "block", block);
	expect_json(root, "num_blocks", layouts[_i].nb);
	expect_json(root, "kv_indices", layouts[_i].kv);
	expect_json(root, "kv_num_blocks", layouts[_i].kv_num);
	expect_json(root, "full_kv_indices", layouts[_i].full);
	expect_json(root, "full_kv_num_blocks", layouts[_i].full_num);
	expect_json(root, "nonempty_indices", layouts[_i].ne);
	expect_json(root, "nonempty_num_blocks", layouts[_i].ne_num);
	cJSON_Delete(root);
	mk_mask_free(m);
}
END_TEST

START_TEST(viridis_ends_and_nan)
{
	uint8_t a[3], b[3];
	mk_colormap_viridis(0.0, a);
	mk_colormap_viridis(NAN, b);
	ck_assert(a[0] == 68 && a[1] == 1 && a[2] == 84 && memcmp(a, b, 3) == 0);
	mk_colormap_viridis(1.0, a);
	mk_colormap_viridis(7.0, b);
	ck_assert(a[0] == 253 && a[1] == 231 && a[2] == 37 && memcmp(a, b, 3) == 0);
}
END_TEST

/* ---- malformed inputs ------------------------------------------------------ */
START_TEST(npy_truncated)
{
	mk_mask *m = mk_test_random_mask(7, 9, 50);
	size_t len;
	char *b;
	write_mask(m, path("t.npy"), MK_FMT_NPY, 0);
	b = get_file(path("t.npy"), &len);
	put_file(path("t.npy"), b, len - 5);
	expect_load_error(path("t.npy"), MK_EFORMAT, "truncated");
	put_file(path("t.npy"), b, 20);
	expect_load_error(path("t.npy"), MK_EFORMAT, "truncated");
	free(b);
	mk_mask_free(m);
}
END_TEST

/* (2, 3) is a rectangular mask, in C and in Fortran order; 3-D is an error. */
START_TEST(npy_rectangular)
{
	uint8_t data[6] = {1, 0, 0, 0, 0, 1};
	mk_mask *m = NULL;
	put_npy(path("r.npy"), 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (2, 3), }\n",
		data, sizeof data);
	ck_assert_int_eq(mk_mask_load(path("r.npy"), 0, &m), MK_OK);
	ck_assert_int_eq(mk_mask_n(m), 2);
	ck_assert_int_eq(mk_mask_cols(m), 3);
	ck_assert(mk_mask_test(m, 0, 0) && mk_mask_test(m, 1, 2) && mk_mask_count(m) == 2);
	mk_mask_free(m);
	put_npy(path("f.npy"), 1, "{'descr': '|b1', 'fortran_order': True, 'shape': (2, 3), }\n",
		data, sizeof data);
	ck_assert_int_eq(mk_mask_load(path("f.npy"), 0, &m), MK_OK);
	/* column-major: cells (0, 0) and (1, 2) are the first and the last */
	ck_assert(mk_mask_test(m, 0, 0) && mk_mask_test(m, 1, 2) && mk_mask_count(m) == 2);
	mk_mask_free(m);
	put_npy(path("c.npy"), 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (1, 2, 3), }\n",
		data, sizeof data);
	expect_load_error(path("c.npy"), MK_EFORMAT, "shape (1, 2, ...) is not 2-D");
}
END_TEST

static const struct {
	const char *name, *text, *want;
} bad_files[] = {
	{"s.json", "[[1, 0], [1]]", "row 1 has 1 entries, expected 2 (a mask must be square)"},
	{"c.json", "{\"n\": 8, \"rows\": [[], [], [], [1, 9], [], [], [], []]}",
	 "row 3 has column 9 out of range for n = 8"},
	{"x.json", "{\"n\": 8,\n \"rows\": [[0],", "not valid JSON (line 2, column 15)"},
	{"r.json", "{\"n\": 3, \"rows\": [[0], [1]]}", "\"rows\" has 2 entries, expected n = 3"},
	{"b.json", "{\"format\": \"maskkit-blocks\"}", "a block layout cannot be read as a mask"},
	{"r.txt", "#..\n##\n###\n", "line 2 has 2 cells, expected 3"},
	{"q.txt", "#..\n##.\n", "2 rows of 3 cells; a mask must be square"},
	{"x.txt", "#x\n..\n", "line 1, column 2: unexpected 'x'"},
	{"e.txt", "", "empty file"},
	{"t.h5", "just text\n", "not an HDF5 file"},
	{"m.npy", "\x93NUMPZ\x01\x00", "not a .npy file"},
};

/* Every malformed file gives MK_EFORMAT and a message naming the file. */
START_TEST(malformed_files)
{
	put_file(path(bad_files[_i].name), bad_files[_i].text, strlen(bad_files[_i].text));
	expect_load_error(path(bad_files[_i].name), MK_EFORMAT, bad_files[_i].want);
	ck_assert_ptr_eq(strstr(mk_error(), path(bad_files[_i].name)), mk_error() + 1);
}
END_TEST

static void h5_dataset(hid_t file, const char *name, hsize_t rows, hsize_t cols)
{
	hsize_t dims[2] = {rows, cols};
	hid_t space = H5Screate_simple(2, dims, NULL);
	hid_t dset = H5Dcreate2(file, name, H5T_IEEE_F32LE, space, H5P_DEFAULT, H5P_DEFAULT,
				H5P_DEFAULT);
	float v[16] = {0.25f}; /* (0, 0) set, the rest clear */
	ck_assert(rows * cols <= 16);
	ck_assert_int_ge(H5Dwrite(dset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v), 0);
	H5Dclose(dset);
	H5Sclose(space);
}

START_TEST(h5_two_datasets_without_mask)
{
	hid_t file = H5Fcreate(path("two.h5"), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	hid_t group = H5Gcreate2(file, "g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	h5_dataset(file, "a", 4, 4);
	H5Gclose(group);
	H5Fclose(file);
	/* one 2-D dataset: taken whatever its name */
	expect_loads(path("two.h5"), "#.../..../..../....");
	file = H5Fopen(path("two.h5"), H5F_ACC_RDWR, H5P_DEFAULT);
	h5_dataset(file, "g/b", 3, 3);
	H5Fclose(file);
	expect_load_error(path("two.h5"), MK_EFORMAT, "2 2-D datasets to choose from: /a, /g/b");
}
END_TEST

START_TEST(h5_real_model_file)
{
	const char *dir = getenv("SHARED_DATA");
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/keras-bert/test_bert_fit.h5", dir ? dir : "../shared/data");
	if (access(p, R_OK) != 0)
		return; /* the shared data is optional outside CI */
	expect_load_error(p, MK_EFORMAT, "2-D datasets to choose from: /");
}
END_TEST

START_TEST(load_by_extension)
{
	expect_load_error("x.csv", MK_EINVAL,
			  "'x.csv': unknown mask file type (use .txt, .json, .h5, .npy or .npz)");
	expect_load_error("x.png", MK_EINVAL, "cannot be read back");
	expect_load_error(path("missing.npy"), MK_EIO, "No such file");
	ck_assert_int_eq(mk_format_from_path("a/b.HDF5"), MK_FMT_H5);
	ck_assert_int_eq(mk_format_from_path("a.d/b"), MK_FMT_NONE);
	ck_assert_int_eq(mk_format_from_path("x.blocks"), MK_FMT_NONE);
	ck_assert_int_eq(mk_format_from_name("blocks"), MK_FMT_BLOCKS);
	ck_assert_int_eq(mk_format_from_name("csv"), MK_FMT_NONE);
	ck_assert_str_eq(mk_format_name(MK_FMT_NPY), "npy");
}
END_TEST

/* ---- atomic writes ------------------------------------------------------------ */
static int failing_writer(const char *tmp, void *arg)
{
	(void)arg;
	put_file(tmp, "partial", 7);
	return mk_error_set(MK_EIO, "disk full");
}

static int good_writer(const char *tmp, void *arg)
{
	put_file(tmp, arg, strlen(arg));
	return MK_OK;
}

START_TEST(atomic_failure_keeps_old_file)
{
	put_file(path("keep.txt"), "old content\n", 12);
	ck_assert_int_eq(mk_io_atomic(path("keep.txt"), failing_writer, NULL), MK_EIO);
	expect_file(path("keep.txt"), "old content\n");
	ck_assert_int_eq(scratch_walk(false), 1);
	/* nor does it create a missing target */
	ck_assert_int_eq(mk_io_atomic(path("new.txt"), failing_writer, NULL), MK_EIO);
	ck_assert_int_eq(access(path("new.txt"), F_OK), -1);
	ck_assert_int_eq(scratch_walk(false), 1);
}
END_TEST

START_TEST(atomic_success_replaces)
{
	struct stat st;
	mode_t mask = umask(022);
	put_file(path("r.txt"), "old\n", 4);
	chmod(path("r.txt"), 0640);
	ck_assert_int_eq(mk_io_atomic(path("r.txt"), good_writer, "new\n"), MK_OK);
	expect_file(path("r.txt"), "new\n");
	ck_assert_int_eq(stat(path("r.txt"), &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0640); /* kept */
	ck_assert_int_eq(mk_io_atomic(path("fresh.txt"), good_writer, "x"), MK_OK);
	ck_assert_int_eq(stat(path("fresh.txt"), &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0644); /* as any new file */
	ck_assert_int_eq(scratch_walk(false), 2);
	umask(mask);
}
END_TEST

/* ---- through the public API ------------------------------------------------ */
START_TEST(write_expr_round_trip)
{
	mk_bind_opts bo = {.n = 33, .seed = 7};
	mk_write_opts wo = {.seed = 7};
	mk_mask *want, *got;
	mk_expr *e;
	ck_assert_int_eq(mk_expr_parse("causal & local(w=3) + diag", &e), MK_OK);
	ck_assert_msg(mk_expr_bind(e, &bo) == MK_OK, "%s", mk_error());
	ck_assert_int_eq(mk_expr_to_mask(e, &want), MK_OK);
	for (size_t k = 0; k < 4; k++) {
		ck_assert_msg(mk_write_expr(e, path(roundtrip_names[k]), &wo) == MK_OK, "%s",
			      mk_error());
		ck_assert_int_eq(mk_mask_load(path(roundtrip_names[k]), 0, &got), MK_OK);
		ck_assert(mk_mask_equal(want, got));
		mk_mask_free(got);
	}
	ck_assert_int_eq(mk_write_expr(e, path("m.csv"), &wo), MK_EINVAL);
	ck_assert_int_eq(access(path("m.csv"), F_OK), -1);
	wo.format = MK_FMT_H5;
	ck_assert_int_eq(mk_write_expr_stream(e, stdout, &wo), MK_EINVAL);
	mk_mask_free(want);
	mk_expr_free(e);
}
END_TEST

/* The one whole-file reader: its limit, its NUL rule, and errors that name
 * the file (and, through a prefix, keep naming it). */
START_TEST(file_read_checks)
{
	char *buf = (char *)1;
	size_t len = 99;

	put_file(path("f.txt"), "ab\0c", 4);
	ck_assert_int_eq(mk_file_read(path("f.txt"), 4, "a test file", 0, &buf, &len), MK_OK);
	ck_assert_uint_eq(len, 4);
	ck_assert(!memcmp(buf, "ab\0c", 5));
	free(buf);
	ck_assert_int_eq(mk_file_read(path("f.txt"), 4, "a test file", MK_FILE_TEXT, &buf, &len),
			 MK_EFORMAT);
	ck_assert_ptr_null(buf);
	ck_assert(strstr(mk_error(), "a NUL byte at offset 2 in a test file"));
	ck_assert_str_eq(mk_error_get()->file, path("f.txt"));
	ck_assert_int_eq(mk_file_read(path("f.txt"), 3, "a test file", 0, &buf, &len), MK_ERANGE);
	ck_assert_uint_eq(len, 4); /* the size, for a caller whose limit is not in bytes */
	ck_assert(strstr(mk_error(), "4 bytes is too large for a test file (at most 3)"));
	ck_assert_int_eq(mk_file_read(path(""), 100, "a test file", 0, &buf, &len), MK_EIO);
	ck_assert(strstr(mk_error(), "is a directory"));
	ck_assert_int_eq(mk_file_read(path("none"), 100, "a test file", 0, &buf, &len), MK_EIO);
	ck_assert_str_eq(mk_error_get()->file, path("none"));
	/* context in front keeps the file and the parameter */
	ck_assert_int_eq(mk_check_memory(2, 1, "a test"), MK_ERANGE);
	mk_error_file(path("none"));
	ck_assert_int_eq(mk_error_prefix("'%s': ", "x"), MK_ERANGE);
	ck_assert_str_eq(mk_error_get()->param, "max_memory");
	ck_assert_str_eq(mk_error_get()->file, path("none"));
	ck_assert(!strncmp(mk_error(), "'x': a test would need", 22));
	/* one parameter an error: a caller's replaces its callee's, NULL drops it */
	ck_assert_int_eq(mk_error_param("batch"), MK_ERANGE);
	ck_assert_str_eq(mk_error_get()->param, "batch");
	ck_assert(strstr(mk_error(), "limit of 1 B (batch)") && !strstr(mk_error(), "max_memory"));
	mk_error_param(NULL);
	ck_assert_ptr_null(mk_error_get()->param);
	ck_assert(strstr(mk_error(), "limit of 1 B") && !strstr(mk_error(), "("));
}
END_TEST

static Suite *io_suite(void)
{
	Suite *s = suite_create("io");
	TCase *tc = tcase_create("io");
	tcase_add_checked_fixture(tc, scratch_setup, scratch_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, roundtrip, 0, 20);
	tcase_add_test(tc, txt_layout_is_exact);
	tcase_add_test(tc, json_header_and_count);
	tcase_add_loop_test(tc, reads_other_spellings, 0, sizeof good_files / sizeof good_files[0]);
	tcase_add_test(tc, npy_header_layout);
	tcase_add_test(tc, npy_reads_fortran_order_and_wide_types);
	tcase_add_loop_test(tc, png_sizes, 0, 3);
	tcase_add_loop_test(tc, blocks_layout, 0, sizeof layouts / sizeof layouts[0]);
	tcase_add_test(tc, viridis_ends_and_nan);
	tcase_add_test(tc, npy_truncated);
	tcase_add_test(tc, npy_rectangular);
	tcase_add_loop_test(tc, malformed_files, 0, sizeof bad_files / sizeof bad_files[0]);
	tcase_add_test(tc, h5_two_datasets_without_mask);
	tcase_add_test(tc, h5_real_model_file);
	tcase_add_test(tc, load_by_extension);
	tcase_add_test(tc, atomic_failure_keeps_old_file);
	tcase_add_test(tc, atomic_success_replaces);
	tcase_add_test(tc, write_expr_round_trip);
	tcase_add_test(tc, file_read_checks);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return mk_test_main(io_suite());
}
