/* Unit tests of the safetensors reader and the other new weights sources
 * (model directories, sharded indexes, bare .npy arrays): files written
 * here byte by byte with known values, and every malformed case. */
#include "config.h"
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <hdf5.h>
#include "maskkit.h"
#include "scratchutil.h"
#include "testutil.h"

/* F32 a [2,2] = 1, -2, 0.5, 3; F16 h [4] = 1, -0.5, 65504, 2^-24;
 * BF16 b [2] = 1, -3; F64 d [1,2] = 0.1, 2.5; I64 ids [1,3] = 0, 1, 2. */
static const uint8_t good_data[] = {
	0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0xc0, 0x00, 0x00, 0x00, 0x3f, 0x00, 0x00, 0x40, 0x40,
	0x00, 0x3c, 0x00, 0xb8, 0xff, 0x7b, 0x01, 0x00,
	0x80, 0x3f, 0x40, 0xc0,
	0x9a, 0x99, 0x99, 0x99, 0x99, 0x99, 0xb9, 0x3f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x40,
	0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0,
};

static const char good_header[] =
	"{\"__metadata__\":{\"format\":\"pt\"},"
	"\"a\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]},"
	"\"h\":{\"dtype\":\"F16\",\"shape\":[4],\"data_offsets\":[16,24]},"
	"\"b\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[24,28]},"
	"\"d\":{\"dtype\":\"F64\",\"shape\":[1,2],\"data_offsets\":[28,44]},"
	"\"ids\":{\"dtype\":\"I64\",\"shape\":[1,3],\"data_offsets\":[44,68]}}";

static void write_raw(const char *name, const void *bytes, size_t len)
{
	FILE *f = fopen(path(name), "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(bytes, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

/* The 8-byte length (hlen, or the header's own length when UINT64_MAX),
 * the header, then the data. */
static void write_st_len(const char *name, uint64_t hlen, const char *header, const void *data,
			 size_t len)
{
	size_t n = strlen(header);
	uint8_t *buf = malloc(8 + n + len + 1);
	uint64_t h = hlen == UINT64_MAX ? n : hlen;

	ck_assert_ptr_nonnull(buf);
	for (int k = 0; k < 8; k++)
		buf[k] = (uint8_t)(h >> (8 * k));
	memcpy(buf + 8, header, n);
	if (len)
		memcpy(buf + 8 + n, data, len);
	write_raw(name, buf, 8 + n + len);
	free(buf);
}

static void write_st(const char *name, const char *header, const void *data, size_t len)
{
	write_st_len(name, UINT64_MAX, header, data, len);
}

static void write_text(const char *name, const char *text)
{
	write_raw(name, text, strlen(text));
}

/* Opening `name` fails with code and a message containing `want`. */
static void open_fails(const char *name, int code, const char *want)
{
	mk_weights *w = (mk_weights *)1;
	int ret = mk_weights_open(path(name), &w);
	ck_assert_msg(ret == code, "'%s': got %d (%s), want %d", name, ret, mk_error(), code);
	ck_assert_ptr_null(w);
	ck_assert_msg(strstr(mk_error(), want), "'%s': message '%s' lacks '%s'", name, mk_error(),
		      want);
	ck_assert_ptr_null(strchr(mk_error(), '\n'));
}

START_TEST(reads_every_float_dtype)
{
	mk_weights *w;
	mk_matrix m;

	write_st("m.safetensors", good_header, good_data, sizeof good_data);
	ck_assert_int_eq(mk_weights_open(path("m.safetensors"), &w), MK_OK);
	ck_assert_ptr_null(mk_weights_config(w));
	ck_assert_int_eq(mk_weights_read(w, "/a", 2, 0, &m), MK_OK);
	ck_assert_int_eq(m.rows, 2);
	ck_assert_int_eq(m.cols, 2);
	ck_assert(m.data[0] == 1.0 && m.data[1] == -2.0 && m.data[2] == 0.5 && m.data[3] == 3.0);
	mk_matrix_release(&m);
	ck_assert_int_eq(mk_weights_read(w, "h", 1, 0, &m), MK_OK);
	ck_assert_int_eq(m.cols, 4);
	ck_assert(m.data[0] == 1.0 && m.data[1] == -0.5 && m.data[2] == 65504.0 &&
		  m.data[3] == ldexp(1.0, -24));
	mk_matrix_release(&m);
	ck_assert_int_eq(mk_weights_read(w, "/b", 1, 0, &m), MK_OK);
	ck_assert(m.data[0] == 1.0 && m.data[1] == -3.0);
	mk_matrix_release(&m);
	ck_assert_int_eq(mk_weights_read(w, "/d", 2, 0, &m), MK_OK);
	ck_assert(m.rows == 1 && m.data[0] == 0.1 && m.data[1] == 2.5);
	mk_matrix_release(&m);
	ck_assert_int_eq(mk_weights_read(w, "/ids", 2, 0, &m), MK_OK);
	ck_assert(m.data[0] == 0 && m.data[1] == 1 && m.data[2] == 2);
	mk_matrix_release(&m);
	mk_weights_close(w);
}
END_TEST

START_TEST(reads_float32_of_any_rank)
{
	mk_weights *w;
	float *f = NULL;
	int rank = 0;
	int64_t dims[4];

	write_st("m.safetensors", good_header, good_data, sizeof good_data);
	ck_assert_int_eq(mk_weights_open(path("m.safetensors"), &w), MK_OK);
	ck_assert_int_eq(mk_weights_read_f32(w, "/a", 0, &f, &rank, dims), MK_OK);
	ck_assert(rank == 2 && dims[0] == 2 && dims[1] == 2);
	ck_assert(f[0] == 1.0f && f[1] == -2.0f && f[2] == 0.5f && f[3] == 3.0f);
	free(f);
	ck_assert_int_eq(mk_weights_read_f32(w, "/h", 0, &f, &rank, dims), MK_OK);
	ck_assert(rank == 1 && dims[0] == 4 && f[2] == 65504.0f);
	free(f);
	ck_assert_int_eq(mk_weights_read_f32(w, "/d", 0, &f, &rank, dims), MK_OK);
	ck_assert(f[0] == 0.1f && f[1] == 2.5f);
	free(f);
	ck_assert_int_eq(mk_weights_read_f32(w, "/nothing", 0, &f, &rank, dims), MK_EFORMAT);
	ck_assert_ptr_null(f);
	mk_weights_close(w);
}
END_TEST

START_TEST(lists_with_leading_slash_sorted)
{
	const char *needles[] = {"d", NULL};
	mk_weights *w;
	char **list;
	size_t count;

	write_st("m.safetensors", good_header, good_data, sizeof good_data);
	ck_assert_int_eq(mk_weights_open(path("m.safetensors"), &w), MK_OK);
	ck_assert_int_eq(mk_weights_list(w, 0, NULL, &list, &count), MK_OK);
	ck_assert_uint_eq(count, 5);
	ck_assert_str_eq(list[0], "/a");
	ck_assert_str_eq(list[4], "/ids");
	ck_assert_ptr_null(list[5]);
	mk_weights_list_free(list);
	ck_assert_int_eq(mk_weights_list(w, 2, needles, &list, &count), MK_OK);
	ck_assert_uint_eq(count, 2); /* /d and /ids */
	mk_weights_list_free(list);
	mk_weights_close(w);
}
END_TEST

/* HuggingFace names, found by the searches toeplitz and positional use. */
START_TEST(model_directory_with_config)
{
	static const char hdr[] =
		"{\"embeddings.position_embeddings.weight\":{\"dtype\":\"F32\",\"shape\":[2,2],"
		"\"data_offsets\":[0,16]},\"embeddings.position_ids\":{\"dtype\":\"I64\","
		"\"shape\":[1,2],\"data_offsets\":[16,32]}}";
	uint8_t data[32] = {0};
	mk_weights *w;
	const mk_model_config *c;
	char *found = NULL;

	write_st("model.safetensors", hdr, data, sizeof data);
	write_text("config.json", "{\"num_attention_heads\": 2, \"hidden_size\": 2, "
				  "\"num_hidden_layers\": 1}");
	ck_assert_int_eq(mk_weights_open(scratch, &w), MK_OK);
	ck_assert_ptr_nonnull(c = mk_weights_config(w));
	ck_assert_int_eq(c->heads, 2);
	ck_assert_int_eq(mk_weights_find(w, "position_embeddings", "E_P", &found), MK_OK);
	ck_assert_str_eq(found, "/embeddings.position_embeddings.weight");
	free(found);
	mk_weights_close(w);
	/* the file alone finds config.json beside it */
	ck_assert_int_eq(mk_weights_open(path("model.safetensors"), &w), MK_OK);
	ck_assert_ptr_nonnull(mk_weights_config(w));
	mk_weights_close(w);
}
END_TEST

static void write_shards(const char *second)
{
	static const char h1[] = "{\"x.weight\":{\"dtype\":\"F32\",\"shape\":[1,1],"
				 "\"data_offsets\":[0,4]}}";
	static const char h2[] = "{\"y.weight\":{\"dtype\":\"BF16\",\"shape\":[1,2],"
				 "\"data_offsets\":[0,4]}}";
	static const uint8_t d1[] = {0x00, 0x00, 0x80, 0x3f}, d2[] = {0x80, 0x3f, 0x40, 0xc0};
	char index[512];

	write_st("model-00001-of-00002.safetensors", h1, d1, sizeof d1);
	write_st("model-00002-of-00002.safetensors", h2, d2, sizeof d2);
	snprintf(index, sizeof index, "{\"metadata\":{\"total_size\":8},\"weight_map\":{"
		 "\"x.weight\":\"model-00001-of-00002.safetensors\",\"y.weight\":\"%s\"}}", second);
	write_text("model.safetensors.index.json", index);
}

START_TEST(sharded_index)
{
	mk_weights *w;
	mk_matrix m;
	char **list;
	size_t count;

	write_shards("model-00002-of-00002.safetensors");
	ck_assert_int_eq(mk_weights_open(scratch, &w), MK_OK);
	ck_assert_int_eq(mk_weights_list(w, 2, NULL, &list, &count), MK_OK);
	ck_assert_uint_eq(count, 2);
	ck_assert_str_eq(list[0], "/x.weight");
	ck_assert_str_eq(list[1], "/y.weight");
	mk_weights_list_free(list);
	ck_assert_int_eq(mk_weights_read(w, "/y.weight", 2, 0, &m), MK_OK);
	ck_assert(m.data[0] == 1.0 && m.data[1] == -3.0);
	mk_matrix_release(&m);
	ck_assert_int_eq(mk_weights_read(w, "x.weight", 2, 0, &m), MK_OK);
	ck_assert(m.data[0] == 1.0);
	mk_matrix_release(&m);
	mk_weights_close(w);
}
END_TEST

START_TEST(shard_names_stay_in_the_directory)
{
	write_shards("../model-00002-of-00002.safetensors");
	open_fails(".", MK_EFORMAT, "not a plain file name");
	write_shards("..");
	open_fails(".", MK_EFORMAT, "not a plain file name");
	write_shards("x.safetensors");
	open_fails(".", MK_EIO, "x.safetensors");
	write_text("model.safetensors.index.json",
		   "{\"weight_map\":{\"z\":\"model-00001-of-00002.safetensors\"}}");
	open_fails(".", MK_EFORMAT, "no such tensor");
	write_text("model.safetensors.index.json", "{\"weight_map\": {}}");
	open_fails(".", MK_EFORMAT, "empty");
}
END_TEST

/* ---- malformed files ------------------------------------------------------- */

#define T1(off) "{\"t\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":" off "}}"

static const struct bad_st {
	const char *header;
	size_t data;     /* zero bytes after the header */
	uint64_t hlen;   /* UINT64_MAX: the header's length */
	const char *want;
} bad_sts[] = {
	{T1("[0,8]"), 8, 1000, "runs past the end"},
	{T1("[0,8]"), 8, (uint64_t)1 << 40, "runs past the end"},
	{T1("[0,8]"), 4, UINT64_MAX, "past the end of the data"},
	{T1("[0,12]"), 16, UINT64_MAX, "need 8"},
	{T1("[8,0]"), 8, UINT64_MAX, "run backwards"},
	{T1("[0,-8]"), 8, UINT64_MAX, "data_offsets"},
	{T1("[0,8.5]"), 8, UINT64_MAX, "data_offsets"},
	{"{\"t\":{\"dtype\":\"F128\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, UINT64_MAX,
	 "unknown dtype 'F128'"},
	{"{\"t\":{\"dtype\":\"F32\",\"shape\":[2,-1],\"data_offsets\":[0,8]}}", 8, UINT64_MAX,
	 "shape"},
	{"{\"t\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,4294967296],"
	 "\"data_offsets\":[0,8]}}", 8, UINT64_MAX, "overflows"},
	{"{\"t\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
	 "\"u\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", 12, UINT64_MAX,
	 "overlap"},
	{"{\"t\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
	 "\"t\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}", 16, UINT64_MAX,
	 "appears twice"},
	{"{\"t\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}", 8, UINT64_MAX,
	 "not valid JSON"},
	{"{\"t\":1} garbage", 0, UINT64_MAX, "not valid JSON"},
	{"[1, 2]", 0, UINT64_MAX, "not a JSON object"},
	{"{\"t\":[1]}", 0, UINT64_MAX, "not a JSON object"},
	{"{\"t\":{\"shape\":[2],\"data_offsets\":[0,8]}}", 8, UINT64_MAX, "dtype"},
	{"{\"t\":{\"dtype\":\"F32\",\"data_offsets\":[0,8]}}", 8, UINT64_MAX, "shape"},
};

START_TEST(bad_safetensors)
{
	const struct bad_st *b = &bad_sts[_i];
	uint8_t zero[16] = {0};

	write_st_len("bad.safetensors", b->hlen, b->header, zero, b->data);
	open_fails("bad.safetensors", MK_EFORMAT, b->want);
}
END_TEST

START_TEST(truncated_file)
{
	write_raw("t.safetensors", "\x10\x00\x00", 3);
	open_fails("t.safetensors", MK_EFORMAT, "too short");
	write_st("t.safetensors", good_header, good_data, sizeof good_data - 1);
	open_fails("t.safetensors", MK_EFORMAT, "past the end of the data");
}
END_TEST

START_TEST(nan_and_bool_refused_on_read)
{
	static const char hdr[] = "{\"n\":{\"dtype\":\"F32\",\"shape\":[1,2],\"data_offsets\":[0,8]},"
				  "\"m\":{\"dtype\":\"BOOL\",\"shape\":[1,2],\"data_offsets\":[8,10]}}";
	static const uint8_t data[] = {0, 0, 0x80, 0x3f, 0, 0, 0xc0, 0x7f, 1, 0};
	mk_weights *w;
	mk_matrix m;

	write_st("n.safetensors", hdr, data, sizeof data);
	ck_assert_int_eq(mk_weights_open(path("n.safetensors"), &w), MK_OK);
	ck_assert_int_eq(mk_weights_read(w, "/n", 2, 0, &m), MK_EFORMAT);
	ck_assert_ptr_nonnull(strstr(mk_error(), "non-finite value (nan) at [0, 1]"));
	ck_assert_int_eq(mk_weights_read(w, "/m", 2, 0, &m), MK_EFORMAT);
	ck_assert_ptr_nonnull(strstr(mk_error(), "BOOL"));
	ck_assert_int_eq(mk_weights_read(w, "/n", 1, 0, &m), MK_EFORMAT);
	ck_assert_ptr_nonnull(strstr(mk_error(), "expected 1"));
	mk_weights_close(w);
}
END_TEST

START_TEST(pytorch_and_empty_directory)
{
	write_raw("pytorch_model.bin", "PK\x03\x04....", 8);
	open_fails("pytorch_model.bin", MK_EFORMAT, "save_file");
	open_fails(".", MK_EFORMAT, "safetensors"); /* the directory has only the .bin */
	ck_assert_int_eq(unlink(path("pytorch_model.bin")), 0);
	open_fails(".", MK_EFORMAT, "no model.safetensors");
	write_raw("weights.dat", "\x80\x02}q\x00.", 6); /* a pickle by any name */
	open_fails("weights.dat", MK_EFORMAT, "PyTorch");
}
END_TEST

START_TEST(config_disagreeing_type_is_an_error)
{
	write_st("model.safetensors", good_header, good_data, sizeof good_data);
	write_text("config.json", "{\"num_attention_heads\": \"twelve\"}");
	open_fails(".", MK_EFORMAT, "num_attention_heads");
}
END_TEST

/* ---- .npy ---------------------------------------------------------------------- */

static void write_npy(const char *name, const char *dict, const void *data, size_t len)
{
	char head[128];
	size_t n = strlen(dict), total = (10 + n + 1 + 63) / 64 * 64, hlen = total - 10;
	uint8_t buf[512];

	ck_assert_uint_le(total + len, sizeof buf);
	memcpy(buf, "\x93NUMPY\x01\x00", 8);
	buf[8] = (uint8_t)(hlen & 0xff);
	buf[9] = (uint8_t)(hlen >> 8);
	memset(head, ' ', sizeof head);
	memcpy(head, dict, n);
	head[hlen - 1] = '\n';
	memcpy(buf + 10, head, hlen);
	memcpy(buf + total, data, len);
	write_raw(name, buf, total + len);
}

START_TEST(npy_bare_e_p)
{
	/* 2 x 3 float64 in Fortran order: the file holds columns */
	double col[6] = {1, 4, 2, 5, 3, 6};
	mk_weights *w;
	mk_matrix m;
	char *found = NULL;
	float *f = NULL;
	int rank;
	int64_t dims[4];

	write_npy("e.npy", "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }", col,
		  sizeof col);
	ck_assert_int_eq(mk_weights_open(path("e.npy"), &w), MK_OK);
	ck_assert_int_eq(mk_weights_find(w, "position_embeddings", "E_P", &found), MK_OK);
	ck_assert_str_eq(found, "/");
	ck_assert_int_eq(mk_weights_read(w, found, 2, 0, &m), MK_OK);
	ck_assert(m.rows == 2 && m.cols == 3);
	for (int k = 0; k < 6; k++)
		ck_assert(m.data[k] == k + 1);
	mk_matrix_release(&m);
	ck_assert_int_eq(mk_weights_read_f32(w, "/", 0, &f, &rank, dims), MK_OK);
	ck_assert(rank == 2 && f[5] == 6.0f);
	free(f);
	ck_assert_int_eq(mk_weights_read(w, "/x", 2, 0, &m), MK_EFORMAT);
	free(found);
	mk_weights_close(w);
	write_npy("e3.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1), }", col,
		  4);
	open_fails("e3.npy", MK_EFORMAT, "2-D");
	write_npy("ei.npy", "{'descr': '<i4', 'fortran_order': False, 'shape': (1, 1), }", col, 4);
	open_fails("ei.npy", MK_EFORMAT, "unsupported dtype '<i4'");
}
END_TEST

/* mk_weights_read_f32 on HDF5: any rank to 4, and float64 beyond float32. */
START_TEST(hdf5_read_f32)
{
	double v[2 * 3 * 2];
	hsize_t dims[3] = {2, 3, 2}, one[1] = {1};
	hid_t f, sp, d;
	mk_weights *w;
	float *out = NULL;
	int rank;
	int64_t got[4];

	for (int k = 0; k < 12; k++)
		v[k] = k * 0.5;
	f = H5Fcreate(path("w.h5"), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	ck_assert_int_ge(f, 0);
	sp = H5Screate_simple(3, dims, NULL);
	d = H5Dcreate2(f, "t3", H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	ck_assert_int_ge(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v), 0);
	H5Dclose(d);
	H5Sclose(sp);
	v[0] = 1e300;
	sp = H5Screate_simple(1, one, NULL);
	d = H5Dcreate2(f, "big", H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	ck_assert_int_ge(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v), 0);
	H5Dclose(d);
	H5Sclose(sp);
	H5Fclose(f);
	ck_assert_int_eq(mk_weights_open(path("w.h5"), &w), MK_OK);
	ck_assert_int_eq(mk_weights_read_f32(w, "t3", 0, &out, &rank, got), MK_OK);
	ck_assert(rank == 3 && got[0] == 2 && got[1] == 3 && got[2] == 2 && got[3] == 0);
	ck_assert(out[11] == 5.5f);
	free(out);
	ck_assert_int_eq(mk_weights_read_f32(w, "/big", 0, &out, &rank, got), MK_EFORMAT);
	ck_assert_ptr_null(out);
	ck_assert_ptr_nonnull(strstr(mk_error(), "non-finite"));
	mk_weights_close(w);
}
END_TEST

static Suite *safetensors_suite(void)
{
	Suite *s = suite_create("safetensors");
	TCase *tc = tcase_create("safetensors");
	tcase_add_checked_fixture(tc, scratch_setup, scratch_teardown);
	tcase_add_test(tc, reads_every_float_dtype);
	tcase_add_test(tc, reads_float32_of_any_rank);
	tcase_add_test(tc, lists_with_leading_slash_sorted);
	tcase_add_test(tc, model_directory_with_config);
	tcase_add_test(tc, sharded_index);
	tcase_add_test(tc, shard_names_stay_in_the_directory);
	tcase_add_loop_test(tc, bad_safetensors, 0, sizeof bad_sts / sizeof bad_sts[0]);
	tcase_add_test(tc, truncated_file);
	tcase_add_test(tc, nan_and_bool_refused_on_read);
	tcase_add_test(tc, pytorch_and_empty_directory);
	tcase_add_test(tc, config_disagreeing_type_is_an_error);
	tcase_add_test(tc, npy_bare_e_p);
	tcase_add_test(tc, hdf5_read_f32);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return mk_test_main(safetensors_suite());
}
