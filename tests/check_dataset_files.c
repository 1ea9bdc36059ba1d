/* Unit tests for reading data sets (src/io/dataset.c, src/io/lengths.c): every
 * malformed or mismatched file gives its one-line error, values that have
 * no place in probabilities, sizes a file claims, and lengths files. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "testutil.h"
#include "h5testutil.h"

/* ---- malformed files ------------------------------------------------------ */

/* Opening path must fail with status, the message containing `needle`. */
static void open_fails(const char *path, const mk_dataset_opts *o, int status, const char *needle)
{
	mk_dataset *d = NULL;
	int ret = mk_dataset_open(path, o, &d);
	ck_assert_msg(ret == status, "status %d, expected %d: %s", ret, status, mk_error());
	ck_assert_ptr_null(d);
	ck_assert_msg(strstr(mk_error(), needle), "message '%s' lacks '%s'", mk_error(), needle);
	ck_assert_ptr_null(strchr(mk_error(), '\n'));
}

static void file_with(const char *path, const char *name, int rank, const hsize_t *dims,
		      hid_t type, const double *lengths, hsize_t nlen, hid_t ltype)
{
	static double zeros[4096];
	hid_t f = h5t_create(path);
	if (name)
		h5t_write(f, name, rank, dims, type, zeros);
	if (lengths)
		h5t_write(f, "lengths", 1, &nlen, ltype, lengths);
	H5Fclose(f);
}

START_TEST(test_bad_shapes)
{
	char path[256];
	hsize_t d1[1] = {16}, d6[6] = {1, 1, 1, 1, 4, 4}, rect[3] = {2, 4, 5}, empty[3] = {0, 4, 4};

	h5t_tmpname(path, sizeof path, "ds-bad");
	file_with(path, "masks", 1, d1, H5T_STD_U8LE, NULL, 0, 0);
	open_fails(path, NULL, MK_EFORMAT, "has 1 dimensions; expected 2 to 5");
	file_with(path, "masks", 6, d6, H5T_STD_U8LE, NULL, 0, 0);
	open_fails(path, NULL, MK_EFORMAT, "has 6 dimensions");
	file_with(path, "masks", 3, rect, H5T_STD_U8LE, NULL, 0, 0);
	open_fails(path, NULL, MK_EFORMAT, "must be square");
	file_with(path, "masks", 3, empty, H5T_STD_U8LE, NULL, 0, 0);
	open_fails(path, NULL, MK_EFORMAT, "empty dimension");
	unlink(path);
}
END_TEST

START_TEST(test_bad_types)
{
	char path[256];
	hsize_t dims[2] = {2, 2};
	hid_t f, str = H5Tcopy(H5T_C_S1), space;
	const char text[4][4] = {"a", "b", "c", "d"};

	h5t_tmpname(path, sizeof path, "ds-type");
	f = h5t_create(path);
	H5Tset_size(str, 4);
	space = H5Screate_simple(2, dims, NULL);
	H5Dclose(H5Dcreate2(f, "masks", str, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
	{
		hid_t d = H5Dopen2(f, "masks", H5P_DEFAULT);
		H5Dwrite(d, str, H5S_ALL, H5S_ALL, H5P_DEFAULT, text);
		H5Dclose(d);
	}
	H5Sclose(space);
	H5Tclose(str);
	H5Fclose(f);
	open_fails(path, NULL, MK_EFORMAT, "does not hold masks");
	unlink(path);
}
END_TEST

START_TEST(test_bad_lengths)
{
	char path[256];
	hsize_t dims[3] = {3, 4, 4}, rank4[4] = {3, 1, 4, 4};
	const double big[3] = {4, 5, 2}, neg[3] = {4, -1, 2}, zero[3] = {1, 0, 2}, two[2] = {1, 2};
	const double fine[3] = {4, 1, 2};
	mk_dataset_opts sh = {.axes = "sh"};

	h5t_tmpname(path, sizeof path, "ds-len");
	/* rank 3 is [heads, N, N]: one sample, so three lengths do not fit */
	file_with(path, "masks", 3, dims, H5T_STD_U8LE, fine, 3, H5T_STD_I64LE);
	open_fails(path, NULL, MK_EFORMAT, "has 3 entries for 1 samples");
	mk_dataset_opts s = {.axes = "s"};
	file_with(path, "masks", 3, dims, H5T_STD_U8LE, big, 3, H5T_STD_I64LE);
	open_fails(path, &s, MK_EFORMAT, "lengths[1] = 5 is outside 1..4");
	file_with(path, "masks", 3, dims, H5T_STD_U8LE, neg, 3, H5T_STD_I32LE);
	open_fails(path, &s, MK_EFORMAT, "lengths[1] = -1 is outside 1..4");
	file_with(path, "masks", 3, dims, H5T_STD_U8LE, zero, 3, H5T_STD_I32LE);
	open_fails(path, &s, MK_EFORMAT, "lengths[1] = 0");
	file_with(path, "masks", 3, dims, H5T_STD_U8LE, two, 2, H5T_STD_I32LE);
	open_fails(path, &s, MK_EFORMAT, "has 2 entries for 3 samples");
	file_with(path, "masks", 3, dims, H5T_STD_U8LE, fine, 3, H5T_IEEE_F64LE);
	open_fails(path, &s, MK_EFORMAT, "1-D integer dataset");
	file_with(path, "masks", 4, rank4, H5T_STD_U8LE, fine, 3, H5T_STD_I32LE);
	{
		mk_dataset *d = NULL;
		ck_assert_int_eq(mk_dataset_open(path, &sh, &d), MK_OK);
		ck_assert_int_eq(mk_dataset_get_info(d)->samples, 3);
		ck_assert_int_eq(mk_dataset_get_info(d)->layers, 1);
		ck_assert_int_eq(mk_dataset_get_info(d)->heads, 1);
		ck_assert_int_eq(mk_dataset_lengths(d)[1], 1);
		mk_dataset_close(d);
	}
	sh.lengths = "/nope";
	open_fails(path, &sh, MK_EFORMAT, "no lengths dataset '/nope'");
	unlink(path);
}
END_TEST

START_TEST(test_bad_datasets)
{
	char path[256];
	hsize_t dims[3] = {1, 4, 4};
	mk_dataset_opts named = {.dataset = "/missing"}, axes = {.axes = "sl"},
			letter = {.axes = "x"}, tiny = {.max_memory = 8};
	hid_t f;

	h5t_tmpname(path, sizeof path, "ds-missing");
	file_with(path, NULL, 0, NULL, 0, NULL, 0, 0);
	open_fails(path, NULL, MK_EFORMAT, "no dataset of rank 2 to 5");
	file_with(path, "a", 3, dims, H5T_STD_U8LE, NULL, 0, 0);
	open_fails(path, &named, MK_EFORMAT, "no dataset '/missing'");
	open_fails(path, &axes, MK_EFORMAT, "name 2 leading axes where it needs 1 (axes)");
	open_fails(path, &letter, MK_EINVAL, "unknown axis 'x'");
	open_fails(path, &tiny, MK_ERANGE, "");
	f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
	h5t_write(f, "b", 3, dims, H5T_STD_U8LE, (double[16]){0});
	H5Fclose(f);
	open_fails(path, NULL, MK_EFORMAT, "2 datasets could be the data: /a, /b");
	unlink(path);
	open_fails(path, NULL, MK_EIO, path);
	{
		FILE *t = fopen(path, "w");
		fputs("not hdf5\n", t);
		fclose(t);
	}
	open_fails(path, NULL, MK_EFORMAT, "not an HDF5 file");
	unlink(path);
}
END_TEST

START_TEST(test_truncated)
{
	char path[256];
	static double data[8 * 64 * 64];
	hsize_t dims[3] = {8, 64, 64};
	hid_t f;
	mk_dataset *d = NULL;
	struct stat st;
	int ret;

	h5t_tmpname(path, sizeof path, "ds-trunc");
	f = h5t_create(path);
	h5t_write(f, "masks", 3, dims, H5T_IEEE_F64LE, data);
	H5Fclose(f);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(truncate(path, st.st_size / 2), 0);
	ret = mk_dataset_open(path, NULL, &d);
	if (ret == MK_OK) { /* libhdf5 may open it: then the read fails */
		mk_dataset_block b;
		ret = mk_dataset_read(d, 0, 0, &b);
		mk_dataset_close(d);
	}
	ck_assert_int_eq(ret, MK_EFORMAT);
	ck_assert_ptr_null(strchr(mk_error(), '\n'));
	unlink(path);
}
END_TEST

START_TEST(test_bad_values)
{
	char path[256];
	double v[2 * 3 * 3] = {0};
	hsize_t dims[3] = {2, 3, 3};
	mk_ds_measure r;
	mk_dataset *d;
	mk_keep thr = {MK_KEEP_THRESHOLD, 0.5}, top = {MK_KEEP_TOP_P, 0.5};
	hid_t f;

	h5t_tmpname(path, sizeof path, "ds-nan");
	v[9 + 5] = NAN; /* head 1, row 1, column 2 */
	f = h5t_create(path);
	h5t_write(f, "attentions", 3, dims, H5T_IEEE_F32LE, v);
	H5Fclose(f);
	ck_assert_int_eq(mk_dataset_open(path, NULL, &d), MK_OK);
	ck_assert_int_eq(mk_dataset_measure(d, &thr, NULL, NULL, &r), MK_EFORMAT);
	ck_assert_ptr_nonnull(strstr(mk_error(), "holds nan at sample 0, layer 0, head 1, row 1, "
				     "column 2 (probabilities must be finite)"));
	mk_dataset_close(d);
	v[9 + 5] = -0.25; /* a threshold takes it, top-p has no mass to make of it */
	f = h5t_create(path);
	h5t_write(f, "attentions", 3, dims, H5T_IEEE_F32LE, v);
	H5Fclose(f);
	ck_assert_int_eq(mk_dataset_open(path, NULL, &d), MK_OK);
	ck_assert_int_eq(mk_dataset_measure(d, &thr, NULL, NULL, &r), MK_OK);
	ck_assert_double_eq(r.rho, 1);
	mk_ds_measure_release(&r);
	ck_assert_int_eq(mk_dataset_measure(d, &top, NULL, NULL, &r), MK_EFORMAT);
	ck_assert_ptr_nonnull(strstr(mk_error(), "holds -0.25: the top-p rule needs probabilities"));
	mk_dataset_close(d);
	unlink(path);
}
END_TEST

/* Padding is not data: NaN there (a softmax over a fully masked row) reads
 * as 0, and negative values there do not stop top-p. */
START_TEST(test_padding_values)
{
	char path[256];
	double v[2 * 3 * 3] = {0}, len[2] = {3, 2};
	hsize_t dims[3] = {2, 3, 3}, nlen = 2;
	mk_ds_measure r;
	mk_dataset *d;
	mk_keep top = {MK_KEEP_TOP_P, 0.5};
	hid_t f;

	for (int c = 0; c < 18; c++)
		v[c] = 0.25;
	v[9 + 2 * 3 + 0] = NAN; /* sample 1 (length 2): row 2 is padding */
	v[9 + 0 * 3 + 2] = -1;  /* column 2 too */
	h5t_tmpname(path, sizeof path, "ds-pad");
	f = h5t_create(path);
	h5t_write(f, "attentions", 3, dims, H5T_IEEE_F32LE, v);
	h5t_write(f, "lengths", 1, &nlen, H5T_STD_I32LE, len);
	H5Fclose(f);
	{
		mk_dataset_opts s = {.axes = "s"};
		ck_assert_int_eq(mk_dataset_open(path, &s, &d), MK_OK);
	}
	ck_assert_int_eq(mk_dataset_measure(d, &top, NULL, NULL, &r), MK_OK);
	/* uniform rows keep half their keys, rounded up: 2 of 3, 1 of 2 */
	ck_assert_double_eq_tol(r.by_sample[0], 1 - 6.0 / 9, 1e-15);
	ck_assert_double_eq_tol(r.by_sample[1], 1 - 2.0 / 4, 1e-15);
	mk_ds_measure_release(&r);
	mk_dataset_close(d);
	unlink(path);
}
END_TEST

/* A file may claim any shape: the sizes are checked before anything is
 * allocated (2^61 samples once wrapped a size to 0). */
START_TEST(test_huge_claims)
{
	char path[256];
	hsize_t dims[3] = {(hsize_t)1 << 61, 1, 1}, chunk[3] = {1, 1, 1};
	hid_t f, space, dcpl;
	mk_dataset *d = NULL;
	mk_dataset_opts s = {.axes = "s"};

	h5t_tmpname(path, sizeof path, "ds-huge");
	f = h5t_create(path);
	space = H5Screate_simple(3, dims, NULL);
	dcpl = H5Pcreate(H5P_DATASET_CREATE);
	H5Pset_chunk(dcpl, 3, chunk);
	H5Dclose(H5Dcreate2(f, "masks", H5T_STD_U8LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
	H5Pclose(dcpl);
	H5Sclose(space);
	H5Fclose(f);
	ck_assert_int_eq(mk_dataset_open(path, &s, &d), MK_ERANGE);
	ck_assert_ptr_nonnull(strstr(mk_error(), "claims 2305843009213693952 samples"));
	unlink(path);
}
END_TEST

/* ---- layouts: what a file declares is bounded before it is read ----------- */

/* uint8 "masks" of dims (rank 5) in chunks (NULL: contiguous) growing to
 * maxdims (NULL: dims); the first `written` samples are written as ones,
 * the others never. */
static void layout_file(const char *path, const hsize_t *dims, const hsize_t *maxdims,
			const hsize_t *chunk, hsize_t written)
{
	hid_t f = h5t_create(path), space = H5Screate_simple(5, dims, maxdims);
	hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE), d;
	hsize_t start[5] = {0}, count[5];
	uint8_t *ones;

	if (chunk)
		ck_assert_int_ge(H5Pset_chunk(dcpl, 5, chunk), 0);
	d = H5Dcreate2(f, "masks", H5T_STD_U8LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
	ck_assert_int_ge(d, 0);
	memcpy(count, dims, sizeof count);
	count[0] = written;
	if (written) {
		hid_t m = H5Screate_simple(5, count, NULL);
		ones = malloc(written * dims[1] * dims[2] * dims[3] * dims[4]);
		memset(ones, 1, written * dims[1] * dims[2] * dims[3] * dims[4]);
		H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL);
		ck_assert_int_ge(H5Dwrite(d, H5T_NATIVE_UINT8, m, space, H5P_DEFAULT, ones), 0);
		H5Sclose(m);
		free(ones);
	}
	H5Dclose(d);
	H5Pclose(dcpl);
	H5Sclose(space);
	H5Fclose(f);
}

/* h5py's resizable datasets: chunks longer than the extent, which the
 * maximum extent (unlimited) allows; every block reads back whole. */
START_TEST(test_resizable_reads)
{
	char path[256];
	hsize_t dims[5] = {3, 2, 2, 4, 4}, chunk[5] = {8, 2, 2, 8, 8};
	hsize_t max[5] = {H5S_UNLIMITED, 2, 2, H5S_UNLIMITED, H5S_UNLIMITED};
	mk_dataset *d = NULL;
	mk_dataset_block b;

	h5t_tmpname(path, sizeof path, "ds-grow");
	layout_file(path, dims, max, chunk, 3);
	ck_assert_msg(mk_dataset_open(path, NULL, &d) == MK_OK, "%s", mk_error());
	for (int64_t s = 0; s < 3; s++)
		for (int64_t l = 0; l < 2; l++) {
			ck_assert_int_eq(mk_dataset_read(d, s, l, &b), MK_OK);
			for (int c = 0; c < 2 * 16; c++)
				ck_assert_int_eq(b.m[c], 1);
		}
	mk_dataset_close(d);
	unlink(path);
}
END_TEST

/* Storage never written reads as the fill value, for as long as the file
 * declares: refused, whole or in part. */
START_TEST(test_unwritten_refused)
{
	char path[256];
	hsize_t dims[5] = {4, 1, 1, 4, 4}, chunk[5] = {1, 1, 1, 4, 4};

	h5t_tmpname(path, sizeof path, "ds-unwritten");
	layout_file(path, dims, NULL, NULL, 0);
	open_fails(path, NULL, MK_EFORMAT, "dataset '/masks' was never written (no storage is "
		   "allocated for it");
	layout_file(path, dims, NULL, chunk, 0);
	open_fails(path, NULL, MK_EFORMAT, "was never written");
	layout_file(path, dims, NULL, chunk, 1);
	open_fails(path, NULL, MK_EFORMAT, "dataset '/masks' is only partly written (1 of its 4 "
		   "chunks are stored");
	layout_file(path, dims, NULL, chunk, 4);
	open_fails(path, &(mk_dataset_opts){.max_memory = 16}, MK_ERANGE, "over the memory limit");
	unlink(path);
}
END_TEST

/* One decompressed chunk, and the chunk cache that keeps a chunk spanning
 * samples until every layer of them is read, count against max_memory. */
START_TEST(test_chunk_memory)
{
	char path[256];
	hsize_t dims[5] = {64, 8, 1, 64, 64}, whole[5] = {64, 8, 1, 64, 64};
	hsize_t pairs[5] = {2, 1, 1, 64, 64};
	mk_dataset *d = NULL;
	mk_dataset_block b;

	h5t_tmpname(path, sizeof path, "ds-chunks");
	layout_file(path, dims, NULL, whole, 64);
	open_fails(path, &(mk_dataset_opts){.max_memory = 1 << 20}, MK_ERANGE,
		   "one chunk of dataset '/masks', decompressed, would need 2.0 MiB");
	/* 2 samples of one layer a chunk: 8 of them (every layer) stay cached */
	layout_file(path, dims, NULL, pairs, 64);
	open_fails(path, &(mk_dataset_opts){.max_memory = 40 << 10}, MK_ERANGE,
		   "the chunk cache of dataset '/masks' (8 chunks, each decompressed once)");
	ck_assert_msg(mk_dataset_open(path, &(mk_dataset_opts){.max_memory = 200 << 10}, &d) ==
		      MK_OK, "%s", mk_error());
	for (int64_t s = 0; s < 64; s++)
		for (int64_t l = 0; l < 8; l++) {
			ck_assert_int_eq(mk_dataset_read(d, s, l, &b), MK_OK);
			ck_assert(b.m[0] == 1 && b.m[64 * 64 - 1] == 1);
		}
	mk_dataset_close(d);
	unlink(path);
}
END_TEST

/* The results per (layer, head) count too: 2^20 layers x 16 heads. */
START_TEST(test_per_head_memory)
{
	char path[256];
	hsize_t dims[5] = {1, (hsize_t)1 << 20, 16, 1, 1};

	h5t_tmpname(path, sizeof path, "ds-heads");
	layout_file(path, dims, NULL, NULL, 0);
	open_fails(path, &(mk_dataset_opts){.max_memory = 64 << 20}, MK_ERANGE,
		   "and results for 1 samples x 1048576 layers x 16 heads) would need 1.0 GiB");
	unlink(path);
}
END_TEST

/* External raw data (here shorter than the dataset) would read as zeros. */
START_TEST(test_external_refused)
{
	char path[256], raw[300];
	hsize_t dims[5] = {1, 1, 1, 4, 4};
	hid_t f, space, dcpl;
	FILE *r;

	h5t_tmpname(path, sizeof path, "ds-ext");
	snprintf(raw, sizeof raw, "%s.raw", path);
	r = fopen(raw, "wb");
	fputs("\1\1\1", r);
	fclose(r);
	f = h5t_create(path);
	space = H5Screate_simple(5, dims, NULL);
	dcpl = H5Pcreate(H5P_DATASET_CREATE);
	ck_assert_int_ge(H5Pset_external(dcpl, raw, 0, 16), 0);
	H5Dclose(H5Dcreate2(f, "masks", H5T_STD_U8LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
	H5Pclose(dcpl);
	H5Sclose(space);
	H5Fclose(f);
	open_fails(path, NULL, MK_EFORMAT, "keeps its data in the external file '");
	ck_assert_ptr_nonnull(strstr(mk_error(), raw));
	unlink(raw);
	unlink(path);
}
END_TEST

/* ---- lengths files ------------------------------------------------------- */

START_TEST(test_lengths_files)
{
	char path[256], spec[300];
	int64_t *len = NULL, count = 0;
	FILE *f;
	hid_t h;
	const double v[3] = {3, 9, 4};
	/* '<i4' [5, 7] as a version 1.0 .npy: a 10-byte preamble, the header
	 * dictionary padded with spaces and a newline to 128 bytes in all */
	const char *dict = "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }";
	char npy[128];

	h5t_tmpname(path, sizeof path, "ds-lentxt");
	f = fopen(path, "w");
	fputs("12 7,3\n\n  40\n", f);
	fclose(f);
	ck_assert_int_eq(mk_lengths_read(path, 0, &len, &count), MK_OK);
	ck_assert_int_eq(count, 4);
	ck_assert(len[0] == 12 && len[1] == 7 && len[2] == 3 && len[3] == 40);
	free(len);
	ck_assert_int_eq(mk_lengths_read(path, 39, &len, &count), MK_EFORMAT);
	ck_assert_ptr_nonnull(strstr(mk_error(), "lengths[3] = 40 is outside 1..39"));
	f = fopen(path, "w");
	fputs("12\n7x\n", f);
	fclose(f);
	ck_assert_int_eq(mk_lengths_read(path, 0, &len, &count), MK_EFORMAT);
	ck_assert_ptr_nonnull(strstr(mk_error(), "line 2: '7x' is not an integer length"));
	unlink(path);

	snprintf(spec, sizeof spec, "%s.h5", path);
	h = h5t_create(spec);
	h5t_write1(h, "other/len", 3, v);
	H5Fclose(h);
	ck_assert_int_eq(mk_lengths_read(spec, 0, &len, &count), MK_EFORMAT); /* float */
	h = h5t_create(spec);
	h5t_write(h, "other/len", 1, (hsize_t[]){3}, H5T_STD_I16LE, v);
	H5Fclose(h);
	ck_assert_int_eq(mk_lengths_read(spec, 0, &len, &count), MK_OK);
	ck_assert(count == 3 && len[1] == 9);
	free(len);
	snprintf(spec + strlen(spec), sizeof spec - strlen(spec), ":/other/len");
	ck_assert_int_eq(mk_lengths_read(spec, 0, &len, &count), MK_OK);
	ck_assert(count == 3 && len[2] == 4);
	free(len);
	spec[strlen(path) + 3] = '\0';
	unlink(spec);

	snprintf(spec, sizeof spec, "%s.npy", path);
	f = fopen(spec, "wb");
	memcpy(npy, "\x93NUMPY\x01\x00\x76\x00", 10);
	memset(npy + 10, ' ', 118);
	memcpy(npy + 10, dict, strlen(dict));
	npy[127] = '\n';
	fwrite(npy, 1, 128, f);
	fwrite((int32_t[]){5, 7}, 4, 2, f);
	fclose(f);
	ck_assert_int_eq(mk_lengths_read(spec, 0, &len, &count), MK_OK);
	ck_assert(count == 2 && len[0] == 5 && len[1] == 7);
	free(len);
	unlink(spec);
}
END_TEST

static Suite *dataset_files_suite(void)
{
	Suite *s = suite_create("dataset files");
	TCase *e = tcase_create("errors");
	TCase *v = tcase_create("values");
	TCase *l = tcase_create("lengths");

	tcase_add_test(e, test_bad_shapes);
	tcase_add_test(e, test_bad_types);
	tcase_add_test(e, test_bad_lengths);
	tcase_add_test(e, test_bad_datasets);
	tcase_add_test(e, test_truncated);
	tcase_add_test(e, test_huge_claims);
	tcase_add_test(e, test_unwritten_refused);
	tcase_add_test(e, test_chunk_memory);
	tcase_add_test(e, test_per_head_memory);
	tcase_add_test(e, test_external_refused);
	tcase_add_test(v, test_resizable_reads);
	tcase_add_test(v, test_bad_values);
	tcase_add_test(v, test_padding_values);
	tcase_add_test(l, test_lengths_files);
	suite_add_tcase(s, e);
	suite_add_tcase(s, v);
	suite_add_tcase(s, l);
	return s;
}

int main(void)
{
	return mk_test_main(dataset_files_suite());
}
