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

static char scratch[PATH_MAX]; /* a fresh directory per test */

static void scratch_setup(void)
{
	snprintf(scratch, sizeof scratch, "%s/check_io.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(scratch));
}

static void scratch_teardown(void)
{
	char p[PATH_MAX + 256];
	DIR *d = opendir(scratch);
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			snprintf(p, sizeof p, "%s/%s", scratch, e->d_name);
			unlink(p);
		}
	if (d)
		closedir(d);
	rmdir(scratch);
}

static const char *path(const char *name)
{
	static char buf[PATH_MAX + 64];
	snprintf(buf, sizeof buf, "%s/%s", scratch, name);
	return buf;
}

static int scratch_entries(void)
{
	int k = 0;
	DIR *d = opendir(scratch);
	struct dirent *e;
	while ((e = readdir(d)))
		k += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return k;
}

static void put_file(const char *p, const void *data, size_t len)
{
	FILE *f = fopen(p, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

static char *get_file(const char *p, size_t *len)
{
	FILE *f = fopen(p, "rb");
	char *buf;
	long size;
	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	buf = malloc((size_t)size + 1);
	ck_assert_uint_eq(fread(buf, 1, (size_t)size, f), (size_t)size);
	buf[size] = '\0';
	fclose(f);
	if (len)
		*len = (size_t)size;
	return buf;
}

/* A reproducible pseudo-random mask from a 64-bit LCG (independent of rng.c). */
static mk_mask *make_random(int64_t n, uint64_t seed, unsigned density_pct)
{
	mk_mask *m;
	ck_assert_int_eq(mk_mask_new(n, 0, &m), MK_OK);
	for (int64_t i = 0; i < n; i++)
		for (int64_t j = 0; j < n; j++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			if ((seed >> 33) % 100 < density_pct)
				mk_mask_set(m, i, j, true);
		}
	return m;
}

static void mask_row(void *ctx, int64_t i, uint64_t *dst)
{
	const mk_mask *m = ctx;
	memcpy(dst, mk_mask_crow(m, i), mk_mask_stride(m) * sizeof *dst);
}

static mk_rows mask_rows(mk_mask *m)
{
	return (mk_rows){.n = mk_mask_n(m), .row = mask_row, .ctx = m,
			 .expr = "test \"mask\"", .params = "lcg"};
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
	const struct job *j = arg;
	int (*fn)(const mk_rows *, FILE *, const mk_write_opts *) = NULL;
	FILE *f;
	int ret;
	switch (j->opts.format) {
	case MK_FMT_H5: return mk_io_write_h5(j->rows, tmp, &j->opts);
	case MK_FMT_TXT: fn = mk_io_write_txt; break;
	case MK_FMT_JSON: fn = mk_io_write_json; break;
	case MK_FMT_PNG: fn = mk_io_write_png; break;
	case MK_FMT_NPY: fn = mk_io_write_npy; break;
	case MK_FMT_BLOCKS: fn = mk_io_write_blocks; break;
	default: ck_abort();
	}
	f = fopen(tmp, "wb");
	ck_assert_ptr_nonnull(f);
	ret = fn(j->rows, f, &j->opts);
	ck_assert_int_eq(fclose(f), 0);
	return ret;
}

static void write_rows(const mk_rows *r, const char *p, mk_write_opts o)
{
	struct job j = {.rows = r, .opts = o};
	ck_assert_msg(mk_io_atomic(p, write_tmp, &j) == MK_OK, "%s: %s", p, mk_error());
}

static void write_mask(mk_mask *m, const char *p, mk_format f)
{
	mk_rows r = mask_rows(m);
	write_rows(&r, p, (mk_write_opts){.format = f, .seed = 42});
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
	mk_mask *m = make_random(n, (uint64_t)_i + 1, 30), *back = NULL;
	write_mask(m, path(roundtrip_names[fi]), roundtrip_formats[fi]);
	ck_assert_msg(mk_mask_load(path(roundtrip_names[fi]), 0, &back) == MK_OK, "%s n=%lld: %s",
		      roundtrip_names[fi], (long long)n, mk_error());
	ck_assert(mk_mask_equal(m, back));
	ck_assert_int_eq(scratch_entries(), 1); /* no temporary file left */
	mk_mask_free(m);
	mk_mask_free(back);
}
END_TEST

START_TEST(txt_layout_is_exact)
{
	char *text;
	mk_mask *m;
	ck_assert_int_eq(mk_mask_new(3, 0, &m), MK_OK);
	mk_mask_set(m, 0, 0, true);
	mk_mask_set(m, 1, 0, true);
	mk_mask_set(m, 2, 2, true);
	write_mask(m, path("m.txt"), MK_FMT_TXT);
	text = get_file(path("m.txt"), NULL);
	ck_assert_str_eq(text, "#..\n#..\n..#\n");
	free(text);
	mk_mask_free(m);
}
END_TEST

START_TEST(txt_reader_takes_digits_and_crlf)
{
	mk_mask *m;
	put_file(path("d.txt"), "10\r\n01\r\n\n", 9);
	ck_assert_int_eq(mk_mask_load(path("d.txt"), 0, &m), MK_OK);
	ck_assert_int_eq(mk_mask_n(m), 2);
	ck_assert(mk_mask_test(m, 0, 0) && !mk_mask_test(m, 0, 1));
	ck_assert(!mk_mask_test(m, 1, 0) && mk_mask_test(m, 1, 1));
	mk_mask_free(m);
}
END_TEST

START_TEST(json_header_and_count)
{
	mk_mask *m = make_random(9, 5, 40);
	char *text;
	cJSON *root;
	write_mask(m, path("m.json"), MK_FMT_JSON);
	text = get_file(path("m.json"), NULL);
	root = cJSON_Parse(text);
	ck_assert_ptr_nonnull(root);
	ck_assert_str_eq(cJSON_GetObjectItem(root, "format")->valuestring, "maskkit-mask");
	ck_assert_str_eq(cJSON_GetObjectItem(root, "expr")->valuestring, "test \"mask\"");
	ck_assert_int_eq(cJSON_GetObjectItem(root, "n")->valueint, 9);
	ck_assert_int_eq(cJSON_GetObjectItem(root, "seed")->valueint, 42);
	ck_assert_uint_eq((uint64_t)cJSON_GetObjectItem(root, "count")->valuedouble,
			  mk_mask_count(m));
	cJSON_Delete(root);
	free(text);
	mk_mask_free(m);
}
END_TEST

START_TEST(json_dense_array_reads)
{
	const char *text = "[[1, 0, true], [0, false, 0], [0, 0, 1]]";
	mk_mask *m;
	put_file(path("d.json"), text, strlen(text));
	ck_assert_int_eq(mk_mask_load(path("d.json"), 0, &m), MK_OK);
	ck_assert_uint_eq(mk_mask_count(m), 3);
	ck_assert(mk_mask_test(m, 0, 0) && mk_mask_test(m, 0, 2) && mk_mask_test(m, 2, 2));
	mk_mask_free(m);
}
END_TEST

START_TEST(npy_header_layout)
{
	mk_mask *m = make_random(7, 3, 50);
	size_t len, hlen;
	char *b;
	write_mask(m, path("m.npy"), MK_FMT_NPY);
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
	char buf[512];
	size_t pre = version == 1 ? 10 : 12, hlen = strlen(dict), k;
	memcpy(buf, "\x93NUMPY", 6);
	buf[6] = (char)version;
	buf[7] = 0;
	buf[8] = (char)hlen;
	buf[9] = buf[10] = buf[11] = 0;
	memcpy(buf + pre, dict, hlen);
	k = pre + hlen;
	memcpy(buf + k, data, len);
	put_file(p, buf, k + len);
}

START_TEST(npy_reads_fortran_order_and_wide_types)
{
	/* [[1, 0], [1, 1]] stored column by column */
	int32_t col_major[4] = {1, 1, 0, 1};
	/* [[0.5, -0.0], [0, 2]] big-endian doubles: -0.0 is clear */
	unsigned char be[32] = {0x3f, 0xe0, 0, 0, 0, 0, 0, 0, 0x80, 0, 0, 0, 0, 0, 0, 0,
				0, 0, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0};
	mk_mask *m;
	put_npy(path("f.npy"), 1, "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 2), }\n",
		col_major, sizeof col_major);
	ck_assert_msg(mk_mask_load(path("f.npy"), 0, &m) == MK_OK, "%s", mk_error());
	ck_assert(mk_mask_test(m, 0, 0) && !mk_mask_test(m, 0, 1));
	ck_assert(mk_mask_test(m, 1, 0) && mk_mask_test(m, 1, 1));
	mk_mask_free(m);
	put_npy(path("b.npy"), 2, "{\"shape\": (2L, 2L), \"fortran_order\": False, "
		"\"descr\": \">f8\"}", be, sizeof be);
	ck_assert_msg(mk_mask_load(path("b.npy"), 0, &m) == MK_OK, "%s", mk_error());
	ck_assert(mk_mask_test(m, 0, 0) && !mk_mask_test(m, 0, 1));
	ck_assert(!mk_mask_test(m, 1, 0) && mk_mask_test(m, 1, 1));
	mk_mask_free(m);
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
	mk_rows r = {.n = n, .row = band_row, .ctx = &n};
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

static mk_mask *blocks_mask(void)
{
	mk_mask *m;
	ck_assert_int_eq(mk_mask_new(8, 0, &m), MK_OK);
	for (int64_t i = 0; i < 4; i++)
		for (int64_t j = 0; j < 4; j++)
			mk_mask_set(m, i, j, true);
	mk_mask_set(m, 2, 5, true);
	for (int64_t i = 4; i < 8; i++)
		for (int64_t j = 4; j < 8; j++)
			mk_mask_set(m, i, j, !(i == 4 && j == 7));
	return m;
}

static void expect_json(const cJSON *item, const char *want)
{
	char *text = cJSON_PrintUnformatted(item);
	ck_assert_str_eq(text, want);
	cJSON_free(text);
}

/* Compares a JSON array of arrays of ints with a text like "0,1;;2". */
static void expect_lists(const cJSON *a, const char *want)
{
	char got[256] = "";
	size_t len = 0;
	const cJSON *row, *x;
	cJSON_ArrayForEach(row, a) {
		cJSON_ArrayForEach(x, row)
			len += (size_t)snprintf(got + len, sizeof got - len, "%s%d",
						x == row->child ? "" : ",", x->valueint);
		len += (size_t)snprintf(got + len, sizeof got - len, "%s", row->next ? ";" : "");
	}
	ck_assert_str_eq(got, want);
}

static cJSON *write_blocks(int64_t block)
{
	mk_mask *m = blocks_mask();
	mk_rows r = mask_rows(m);
	char *text;
	cJSON *root;
	write_rows(&r, path("b.json"), (mk_write_opts){.format = MK_FMT_BLOCKS, .block = block});
	text = get_file(path("b.json"), NULL);
	root = cJSON_Parse(text);
	ck_assert_msg(root != NULL, "not JSON: %s", text);
	ck_assert_str_eq(cJSON_GetObjectItem(root, "format")->valuestring, "maskkit-blocks");
	ck_assert_int_eq(cJSON_GetObjectItem(root, "n")->valueint, 8);
	ck_assert_int_eq(cJSON_GetObjectItem(root, "block")->valueint, block);
	free(text);
	mk_mask_free(m);
	return root;
}

START_TEST(blocks_b4)
{
	cJSON *root = write_blocks(4);
	ck_assert_int_eq(cJSON_GetObjectItem(root, "num_blocks")->valueint, 2);
	expect_lists(cJSON_GetObjectItem(root, "kv_indices"), "0,1;1");
	expect_lists(cJSON_GetObjectItem(root, "full_kv_indices"), "0;");
	expect_json(cJSON_GetObjectItem(root, "kv_num_blocks"), "[2,1]");
	expect_json(cJSON_GetObjectItem(root, "full_kv_num_blocks"), "[1,0]");
	cJSON_Delete(root);
}
END_TEST

START_TEST(blocks_partial_edge_b3)
{
	/* 8 = 3 + 3 + 2: the 2 x 2 corner tile is full though it is not 3 x 3 */
	cJSON *root = write_blocks(3);
	ck_assert_int_eq(cJSON_GetObjectItem(root, "num_blocks")->valueint, 3);
	expect_lists(cJSON_GetObjectItem(root, "kv_indices"), "0,1;0,1,2;1,2");
	expect_lists(cJSON_GetObjectItem(root, "full_kv_indices"), "0;;2");
	expect_json(cJSON_GetObjectItem(root, "full_kv_num_blocks"), "[1,0,1]");
	cJSON_Delete(root);
}
END_TEST

START_TEST(viridis_ends_and_nan)
{
	uint8_t a[3], b[3];
	mk_colormap_viridis(0.0, a);
	ck_assert(a[0] == 68 && a[1] == 1 && a[2] == 84);
	mk_colormap_viridis(1.0, a);
	ck_assert(a[0] == 253 && a[1] == 231 && a[2] == 37);
	mk_colormap_viridis(7.0, b);
	ck_assert_mem_eq(a, b, 3);
	mk_colormap_viridis(NAN, a);
	mk_colormap_viridis(-1.0, b);
	ck_assert_mem_eq(a, b, 3);
	ck_assert_uint_eq(a[0], 68);
}
END_TEST

/* ---- malformed inputs ------------------------------------------------------ */

START_TEST(npy_truncated)
{
	mk_mask *m = make_random(7, 9, 50);
	size_t len;
	char *b;
	write_mask(m, path("t.npy"), MK_FMT_NPY);
	b = get_file(path("t.npy"), &len);
	put_file(path("t.npy"), b, len - 5);
	expect_load_error(path("t.npy"), MK_EFORMAT, "truncated");
	put_file(path("t.npy"), b, 20);
	expect_load_error(path("t.npy"), MK_EFORMAT, "truncated");
	free(b);
	mk_mask_free(m);
}
END_TEST

START_TEST(npy_not_square)
{
	uint8_t data[6] = {0};
	put_npy(path("r.npy"), 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (2, 3), }\n",
		data, sizeof data);
	expect_load_error(path("r.npy"), MK_EFORMAT, "shape (2, 3) is not square");
	put_file(path("r.npy"), "\x93NUMPZ\x01\x00", 8);
	expect_load_error(path("r.npy"), MK_EFORMAT, "not a .npy file");
}
END_TEST

START_TEST(json_not_square)
{
	const char *text = "[[1, 0], [1]]";
	put_file(path("s.json"), text, strlen(text));
	expect_load_error(path("s.json"), MK_EFORMAT, "row 1 has 1 entries, expected 2");
}
END_TEST

START_TEST(json_column_out_of_range)
{
	const char *text = "{\"n\": 8, \"rows\": [[], [], [], [1, 9], [], [], [], []]}";
	char want[PATH_MAX + 160];
	put_file(path("m.json"), text, strlen(text));
	snprintf(want, sizeof want, "'%s': row 3 has column 9 out of range for n = 8",
		 path("m.json"));
	expect_load_error(path("m.json"), MK_EFORMAT, want);
}
END_TEST

START_TEST(json_not_json)
{
	const char *text = "{\"n\": 8,\n \"rows\": [[0],";
	put_file(path("x.json"), text, strlen(text));
	expect_load_error(path("x.json"), MK_EFORMAT, "not valid JSON (line 2");
}
END_TEST

START_TEST(txt_ragged)
{
	put_file(path("r.txt"), "#..\n##\n###\n", 11);
	expect_load_error(path("r.txt"), MK_EFORMAT, "line 2 has 2 cells, expected 3");
	put_file(path("r.txt"), "#..\n##.\n", 8);
	expect_load_error(path("r.txt"), MK_EFORMAT, "a mask must be square");
	put_file(path("r.txt"), "#x\n..\n", 6);
	expect_load_error(path("r.txt"), MK_EFORMAT, "line 1, column 2: unexpected 'x'");
}
END_TEST

START_TEST(h5_that_is_text)
{
	put_file(path("t.h5"), "just text\n", 10);
	expect_load_error(path("t.h5"), MK_EFORMAT, "not an HDF5 file");
}
END_TEST

static void h5_dataset(hid_t file, const char *name, hsize_t rows, hsize_t cols)
{
	hsize_t dims[2] = {rows, cols};
	hid_t space = H5Screate_simple(2, dims, NULL);
	hid_t dset = H5Dcreate2(file, name, H5T_IEEE_F32LE, space, H5P_DEFAULT, H5P_DEFAULT,
				H5P_DEFAULT);
	float *v = calloc(rows * cols, sizeof *v);
	v[0] = 0.25f; /* (0, 0) set, the rest clear */
	ck_assert_int_ge(H5Dwrite(dset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v), 0);
	free(v);
	H5Dclose(dset);
	H5Sclose(space);
}

START_TEST(h5_two_datasets_without_mask)
{
	hid_t file = H5Fcreate(path("two.h5"), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	hid_t group = H5Gcreate2(file, "g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	mk_mask *m;
	h5_dataset(file, "a", 4, 4);
	H5Gclose(group);
	H5Fclose(file);
	/* one 2-D dataset: taken whatever its name */
	ck_assert_msg(mk_mask_load(path("two.h5"), 0, &m) == MK_OK, "%s", mk_error());
	ck_assert_uint_eq(mk_mask_count(m), 1);
	mk_mask_free(m);
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
			  "'x.csv': unknown mask file type (use .txt, .json, .h5 or .npy)");
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
	const char *old = "old content\n";
	char *now;
	put_file(path("keep.txt"), old, strlen(old));
	ck_assert_int_eq(mk_io_atomic(path("keep.txt"), failing_writer, NULL), MK_EIO);
	now = get_file(path("keep.txt"), NULL);
	ck_assert_str_eq(now, old);
	free(now);
	ck_assert_int_eq(scratch_entries(), 1);
	/* nor does it create a missing target */
	ck_assert_int_eq(mk_io_atomic(path("new.txt"), failing_writer, NULL), MK_EIO);
	ck_assert_int_eq(access(path("new.txt"), F_OK), -1);
	ck_assert_int_eq(scratch_entries(), 1);
}
END_TEST

START_TEST(atomic_success_replaces)
{
	struct stat st;
	char *text;
	mode_t mask = umask(022);
	put_file(path("r.txt"), "old\n", 4);
	chmod(path("r.txt"), 0640);
	ck_assert_int_eq(mk_io_atomic(path("r.txt"), good_writer, "new\n"), MK_OK);
	text = get_file(path("r.txt"), NULL);
	ck_assert_str_eq(text, "new\n");
	free(text);
	ck_assert_int_eq(stat(path("r.txt"), &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0640); /* kept */
	ck_assert_int_eq(mk_io_atomic(path("fresh.txt"), good_writer, "x"), MK_OK);
	ck_assert_int_eq(stat(path("fresh.txt"), &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0644); /* as any new file */
	ck_assert_int_eq(scratch_entries(), 2);
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

static Suite *io_suite(void)
{
	Suite *s = suite_create("io");
	TCase *tc = tcase_create("io");
	tcase_add_checked_fixture(tc, scratch_setup, scratch_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, roundtrip, 0, 20);
	tcase_add_test(tc, txt_layout_is_exact);
	tcase_add_test(tc, txt_reader_takes_digits_and_crlf);
	tcase_add_test(tc, json_header_and_count);
	tcase_add_test(tc, json_dense_array_reads);
	tcase_add_test(tc, npy_header_layout);
	tcase_add_test(tc, npy_reads_fortran_order_and_wide_types);
	tcase_add_loop_test(tc, png_sizes, 0, 3);
	tcase_add_test(tc, blocks_b4);
	tcase_add_test(tc, blocks_partial_edge_b3);
	tcase_add_test(tc, viridis_ends_and_nan);
	tcase_add_test(tc, npy_truncated);
	tcase_add_test(tc, npy_not_square);
	tcase_add_test(tc, json_not_square);
	tcase_add_test(tc, json_column_out_of_range);
	tcase_add_test(tc, json_not_json);
	tcase_add_test(tc, txt_ragged);
	tcase_add_test(tc, h5_that_is_text);
	tcase_add_test(tc, h5_two_datasets_without_mask);
	tcase_add_test(tc, h5_real_model_file);
	tcase_add_test(tc, load_by_extension);
	tcase_add_test(tc, atomic_failure_keeps_old_file);
	tcase_add_test(tc, atomic_success_replaces);
	tcase_add_test(tc, write_expr_round_trip);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return mk_test_main(io_suite());
}
