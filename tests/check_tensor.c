/* Unit tests of tensor files (tensor.c), reading: .npy and HDF5 round
 * trips, malformed and unsupported inputs, non-finite values, size
 * overflow, mapped reads.  Writing: check_tensor_write.c. */
#include "config.h"
#include <check.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include "h5testutil.h"
#include "scratchutil.h"
#include "testutil.h"

/* A .npy file: version 1.0 preamble, then dict (padded by the caller or
 * not: the reader does not insist on alignment), then data. */
static void npy_put(const char *p, const char *dict, const void *data, size_t len)
{
	unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0};
	size_t hlen = strlen(dict);
	FILE *f = fopen(p, "wb");
	ck_assert_ptr_nonnull(f);
	pre[8] = (unsigned char)(hlen & 0xff);
	pre[9] = (unsigned char)(hlen >> 8);
	ck_assert_uint_eq(fwrite(pre, 1, 10, f), 10);
	ck_assert_uint_eq(fwrite(dict, 1, hlen, f), hlen);
	if (len)
		ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

static void expect_read_error(const char *spec, int status, const char *part)
{
	mk_tensor t;
	int ret = mk_tensor_read(spec, 0, &t);
	ck_assert_msg(ret == status, "%s: status %d, expected %d (%s)", spec, ret, status,
		      mk_error());
	ck_assert_msg(strstr(mk_error(), part), "'%s' not in '%s'", part, mk_error());
	ck_assert_ptr_null(t.data);
}

/* ---- round trips ------------------------------------------------------------------ */

static const int64_t dims4[4] = {2, 3, 5, 4};

/* Writes and reads back dir/file + suffix, then removes the file. */
static void round_trip(const char *file, const char *suffix, int rank, mk_dtype dtype)
{
	char spec[PATH_MAX + 128];
	mk_tensor a, b;
	snprintf(spec, sizeof spec, "%s%s", path(file), suffix);
	mk_test_tensor(rank, dims4 + 4 - rank, dtype, &a);
	ck_assert_msg(mk_tensor_write(&a, spec, "O", dtype) == MK_OK, "%s", mk_error());
	ck_assert_msg(mk_tensor_read(spec, 0, &b) == MK_OK, "%s", mk_error());
	ck_assert_int_eq(b.rank, rank);
	ck_assert_int_eq(b.dtype, dtype);
	ck_assert_mem_eq(a.dims, b.dims, (size_t)rank * sizeof *a.dims);
	ck_assert_mem_eq(a.data, b.data, mk_tensor_count(&a) * sizeof(float));
	mk_tensor_release(&a);
	mk_tensor_release(&b);
	ck_assert_int_eq(scratch_walk(false), 1); /* no temporary file left */
	ck_assert_int_eq(unlink(path(file)), 0);
}

START_TEST(npy_round_trips)
{
	for (int rank = 2; rank <= 4; rank++) {
		round_trip("t.npy", "", rank, MK_DTYPE_F32);
		round_trip("t.npy", "", rank, MK_DTYPE_F64);
	}
}
END_TEST

START_TEST(h5_round_trips)
{
	for (int rank = 2; rank <= 4; rank++) {
		round_trip("t.h5", "", rank, MK_DTYPE_F32);
		round_trip("t.h5", "", rank, MK_DTYPE_F64);
	}
	round_trip("t.hdf5", ":/deep/group/x", 3, MK_DTYPE_F64);
}
END_TEST

START_TEST(npy_file_layout)
{
	mk_tensor t;
	char buf[256];
	FILE *f;
	mk_test_tensor(3, dims4 + 1, MK_DTYPE_F64, &t);
	ck_assert_int_eq(mk_tensor_write(&t, path("t.npy"), NULL, MK_DTYPE_F64), MK_OK);
	f = fopen(path("t.npy"), "rb");
	ck_assert_uint_eq(fread(buf, 1, 128, f), 128);
	fclose(f);
	ck_assert_int_eq(strncmp(buf + 10, "{'descr': '<f8', 'fortran_order': False, "
				 "'shape': (3, 5, 4), }", 61), 0);
	ck_assert_int_eq(buf[127], '\n');
	mk_tensor_release(&t);
}
END_TEST

START_TEST(npy_big_endian_and_fortran)
{
	/* [[1, 2, 3], [4, 5, 6]] as big-endian float32, stored column by column */
	const float vals[6] = {1, 4, 2, 5, 3, 6};
	unsigned char be[24];
	mk_tensor t;
	for (int k = 0; k < 6; k++) {
		uint32_t u;
		memcpy(&u, &vals[k], 4);
		for (int b = 0; b < 4; b++)
			be[4 * k + b] = (unsigned char)(u >> (24 - 8 * b));
	}
	npy_put(path("f.npy"), "{'descr': '>f4', 'fortran_order': True, 'shape': (2, 3), }\n", be,
		sizeof be);
	ck_assert_msg(mk_tensor_read(path("f.npy"), 0, &t) == MK_OK, "%s", mk_error());
	ck_assert_int_eq(t.dims[0], 2);
	ck_assert_int_eq(t.dims[1], 3);
	for (int k = 0; k < 6; k++)
		ck_assert_float_eq(t.data[k], (float)(k + 1));
	mk_tensor_release(&t);
}
END_TEST

START_TEST(h5_finds_the_only_tensor)
{
	hid_t f = h5t_create(path("w.h5"));
	const double v[6] = {1, 2, 3, 4, 5, 6};
	mk_tensor t;
	h5t_write1(f, "bias", 6, v);                 /* rank 1: not a candidate */
	h5t_write2(f, "group/weights", 2, 3, v);
	H5Fclose(f);
	ck_assert_int_eq(mk_tensor_read(path("w.h5"), 0, &t), MK_OK);
	ck_assert_int_eq(t.dtype, MK_DTYPE_F64);
	ck_assert_float_eq(t.data[5], 6.0f);
	mk_tensor_release(&t);
	f = H5Fopen(path("w.h5"), H5F_ACC_RDWR, H5P_DEFAULT);
	h5t_write2(f, "other", 3, 2, v);
	H5Fclose(f);
	expect_read_error(path("w.h5"), MK_EFORMAT, "2 datasets of rank 2 to 4 to choose from");
	expect_read_error(path("w.h5:/missing"), MK_EFORMAT, "no dataset '/missing'");
	expect_read_error(path("w.h5:/bias"), MK_EFORMAT, "has rank 1; a tensor is [n, d]");
}
END_TEST

/* ---- bad inputs ----------------------------------------------------------------- */

START_TEST(npy_malformed_headers)
{
	const float x[4] = {0};
	npy_put(path("a.npy"), "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2) \n", x, 16);
	expect_read_error(path("a.npy"), MK_EFORMAT, "bad .npy header");
	npy_put(path("b.npy"), "{'descr': '<f4', 'shape': (2, 2), }", x, 16);
	expect_read_error(path("b.npy"), MK_EFORMAT, "it needs 'descr'");
	npy_put(path("c.npy"), "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", x, 12);
	expect_read_error(path("c.npy"), MK_EFORMAT, "(truncated)");
	npy_put(path("d.npy"), "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", x, 16);
	ck_assert_int_eq(truncate(path("d.npy"), 7), 0);
	expect_read_error(path("d.npy"), MK_EFORMAT, "not a .npy file");
	expect_read_error(path("missing.npy"), MK_EIO, "No such file");
	expect_read_error(path("x.txt"), MK_EINVAL, "a tensor file is .npy, .h5");
}
END_TEST

START_TEST(unsupported_dtypes)
{
	const int32_t x[4] = {0};
	npy_put(path("i.npy"), "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 2), }", x, 16);
	expect_read_error(path("i.npy"), MK_EFORMAT, "unsupported dtype '<i4' (use float32 or");
	npy_put(path("h.npy"), "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 4), }", x, 16);
	expect_read_error(path("h.npy"), MK_EFORMAT, "unsupported dtype '<f2'");
	hid_t f = h5t_create(path("i.h5"));
	hsize_t dims[2] = {2, 2};
	const double v[4] = {1, 2, 3, 4};
	h5t_write(f, "x", 2, dims, H5T_STD_I32LE, v);
	H5Fclose(f);
	expect_read_error(path("i.h5"), MK_EFORMAT, "is not float32 or float64");
}
END_TEST

START_TEST(wrong_ranks)
{
	const float x[32] = {0};
	npy_put(path("1.npy"), "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", x, 16);
	expect_read_error(path("1.npy"), MK_EFORMAT, "rank 1; a tensor is [n, d]");
	npy_put(path("5.npy"), "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2, 2, 2, 2), }",
		x, 128);
	expect_read_error(path("5.npy"), MK_EFORMAT, "rank above 4");
	npy_put(path("0.npy"), "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 0), }", x, 0);
	expect_read_error(path("0.npy"), MK_EFORMAT, "empty dimension (0 at axis 1)");
}
END_TEST

START_TEST(non_finite_values)
{
	float x[6] = {1, 2, 3, 4, 5, 6};
	double y[6] = {1, 2, 3, 4, 5, 6};
	const char *f4 = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
	const char *f8 = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }";
	x[4] = NAN;
	npy_put(path("n.npy"), f4, x, sizeof x);
	expect_read_error(path("n.npy"), MK_EFORMAT, "element [1, 1] is NaN");
	y[2] = -INFINITY;
	npy_put(path("i.npy"), f8, y, sizeof y);
	expect_read_error(path("i.npy"), MK_EFORMAT, "element [0, 2] is Inf");
	y[2] = 1e300;
	npy_put(path("r.npy"), f8, y, sizeof y);
	expect_read_error(path("r.npy"), MK_EFORMAT, "beyond float32's range");
	y[2] = INFINITY;
	hid_t f = h5t_create(path("i.h5"));
	hsize_t dims[2] = {3, 2};
	h5t_write(f, "x", 2, dims, H5T_IEEE_F32LE, y);
	H5Fclose(f);
	expect_read_error(path("i.h5"), MK_EFORMAT, "element [1, 0] is Inf");
}
END_TEST

/* Past 4 MiB a float32 .npy is read in pieces by every thread, each checked
 * for NaN and Inf as it comes: the values, the first bad element's index
 * (in a later piece) and a file shorter than its header says. */
START_TEST(large_npy_read_in_pieces)
{
	const int64_t dims[3] = {3, 1000, 1001}; /* 12 MB: three pieces, the last short */
	mk_tensor a, b;

	mk_test_tensor(3, dims, MK_DTYPE_F32, &a);
	ck_assert_msg(mk_tensor_write(&a, path("big.npy"), "O", MK_DTYPE_F32) == MK_OK, "%s",
		      mk_error());
	ck_assert_msg(mk_tensor_read(path("big.npy"), 0, &b) == MK_OK, "%s", mk_error());
	ck_assert_mem_eq(a.data, b.data, mk_tensor_count(&a) * sizeof(float));
	mk_tensor_release(&b);
	a.data[2 * 1000 * 1001 + 5 * 1001 + 7] = NAN; /* in the second piece */
	a.data[2 * 1000 * 1001 + 9 * 1001] = INFINITY;
	ck_assert_int_eq(mk_tensor_write(&a, path("big.npy"), "O", MK_DTYPE_F32), MK_OK);
	expect_read_error(path("big.npy"), MK_EFORMAT, "element [2, 5, 7] is NaN");
	/* cut short: the header promises 12 MB */
	ck_assert_int_eq(truncate(path("big.npy"), 6 << 20), 0);
	expect_read_error(path("big.npy"), MK_EFORMAT, "big.npy");
	mk_tensor_release(&a);
	ck_assert_int_eq(unlink(path("big.npy")), 0);
}
END_TEST

/* mk_tensor_read_mapped maps a large float32 file (tensor_map.c): the same
 * values, its errors, a private copy when written, the file named for an
 * address in it; float64 and misaligned data are read as before (small
 * files too: the attn CLI cases). */
START_TEST(mapped_reads)
{
	const int64_t dims[3] = {3, 1000, 1001};
	mk_tensor a, b, c;
	const float *gone;

	mk_test_tensor(3, dims, MK_DTYPE_F32, &a);
	ck_assert_int_eq(mk_tensor_write(&a, path("m.npy"), "O", MK_DTYPE_F32), MK_OK);
	ck_assert_msg(mk_tensor_read_mapped(path("m.npy"), 0, &b) == MK_OK, "%s", mk_error());
	ck_assert_ptr_nonnull(b.map);
	ck_assert_mem_eq(a.data, b.data, mk_tensor_count(&a) * sizeof(float));
	ck_assert_str_eq(mk_tensor_mapped_file(b.data + 12345), path("m.npy"));
	ck_assert_ptr_null(mk_tensor_mapped_file(a.data));
	b.data[0] = 42.0f; /* the copy in memory only */
	ck_assert_int_eq(mk_tensor_read(path("m.npy"), 0, &c), MK_OK);
	ck_assert_ptr_null(c.map);
	ck_assert(c.data[0] == a.data[0]);
	gone = b.data;
	mk_tensor_release(&b);
	mk_tensor_release(&c);
	ck_assert_ptr_null(mk_tensor_mapped_file(gone));
	/* data 76 bytes in, not 64-byte aligned as numpy writes: read */
	npy_put(path("m.npy"), "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 1000, 1001)}",
		a.data, mk_tensor_count(&a) * sizeof(float));
	ck_assert_int_eq(mk_tensor_read_mapped(path("m.npy"), 0, &b), MK_OK);
	ck_assert_ptr_null(b.map);
	ck_assert_mem_eq(a.data, b.data, mk_tensor_count(&a) * sizeof(float));
	mk_tensor_release(&b);
	a.data[2 * 1000 * 1001 + 5 * 1001 + 7] = NAN;
	ck_assert_int_eq(mk_tensor_write(&a, path("m.npy"), "O", MK_DTYPE_F32), MK_OK);
	ck_assert_int_eq(mk_tensor_read_mapped(path("m.npy"), 0, &b), MK_EFORMAT);
	ck_assert_ptr_nonnull(strstr(mk_error(), "element [2, 5, 7] is NaN"));
	ck_assert_ptr_null(b.data);
	a.data[2 * 1000 * 1001 + 5 * 1001 + 7] = 1.0f;
	ck_assert_int_eq(mk_tensor_write(&a, path("m.npy"), "O", MK_DTYPE_F64), MK_OK);
	ck_assert_int_eq(mk_tensor_read_mapped(path("m.npy"), 0, &b), MK_OK);
	ck_assert_ptr_null(b.map);
	ck_assert_mem_eq(a.data, b.data, mk_tensor_count(&a) * sizeof(float));
	mk_tensor_release(&a);
	mk_tensor_release(&b);
}
END_TEST

static const char *bus_want;

static void bus_handler(int sig, siginfo_t *info, void *ctx)
{
	const char *file = mk_tensor_mapped_file(info->si_addr);
	(void)sig;
	(void)ctx;
	_exit(file && strcmp(file, bus_want) == 0 ? 42 : 43);
}

/* A mapped file truncated under the reader: SIGBUS where the data is
 * touched, and the handler learns which file (the program's message). */
START_TEST(mapped_truncated_is_named)
{
	const int64_t dims[2] = {2000, 1000};
	mk_tensor a;
	int status;
	pid_t pid;

	mk_test_tensor(2, dims, MK_DTYPE_F32, &a);
	ck_assert_int_eq(mk_tensor_write(&a, path("t.npy"), "O", MK_DTYPE_F32), MK_OK);
	mk_tensor_release(&a);
	bus_want = path("t.npy");
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct sigaction sa = {.sa_sigaction = bus_handler, .sa_flags = SA_SIGINFO};
		mk_tensor t;
		if (mk_tensor_read_mapped(bus_want, 0, &t) || !t.map || truncate(bus_want, 100))
			_exit(44);
		sigemptyset(&sa.sa_mask);
		sigaction(SIGBUS, &sa, NULL);
		_exit(*(volatile float *)(t.data + 1999 * 1000) > 1e30f ? 45 : 46);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 42, "child status %d", status);
}
END_TEST

START_TEST(size_overflow)
{
	const float x[4] = {0};
	int64_t huge[3] = {(int64_t)1 << 40, (int64_t)1 << 40, 4};
	mk_tensor t;
	npy_put(path("o.npy"), "{'descr': '<f4', 'fortran_order': False, "
		"'shape': (1099511627776, 1099511627776, 4), }", x, 16);
	expect_read_error(path("o.npy"), MK_ERANGE, "its size overflows");
	npy_put(path("m.npy"), "{'descr': '<f4', 'fortran_order': False, "
		"'shape': (1048576, 1048576), }", x, 16);
	expect_read_error(path("m.npy"), MK_ERANGE, "over the memory limit");
	ck_assert_int_eq(mk_tensor_new(3, huge, MK_DTYPE_F32, 0, "t", &t), MK_ERANGE);
	ck_assert_ptr_null(t.data);
}
END_TEST

START_TEST(names_and_formats)
{
	mk_tensor t = {.rank = 3, .dims = {2, 16, 8}};
	char buf[64];
	ck_assert_int_eq(mk_tensor_format("a.npy"), MK_FMT_NPY);
	ck_assert_int_eq(mk_tensor_format("a.H5"), MK_FMT_H5);
	ck_assert_int_eq(mk_tensor_format("dir.h5:x/a.hdf5:/g/x"), MK_FMT_H5);
	ck_assert_int_eq(mk_tensor_format("a.npy:/x"), MK_FMT_NONE);
	ck_assert_int_eq(mk_tensor_format("a.json"), MK_FMT_NONE);
	mk_tensor_shape_text(&t, buf, sizeof buf);
	ck_assert_str_eq(buf, "(2, 16, 8)");
	ck_assert_uint_eq(mk_tensor_count(&t), 256);
	ck_assert_str_eq(mk_dtype_name(MK_DTYPE_F64), "float64");
	mk_tensor_release(NULL);
}
END_TEST

static Suite *tensor_suite(void)
{
	Suite *s = suite_create("tensor");
	TCase *tc = tcase_create("files");
	tcase_add_checked_fixture(tc, scratch_setup, scratch_teardown);
	tcase_add_test(tc, npy_round_trips);
	tcase_add_test(tc, h5_round_trips);
	tcase_add_test(tc, npy_file_layout);
	tcase_add_test(tc, npy_big_endian_and_fortran);
	tcase_add_test(tc, h5_finds_the_only_tensor);
	tcase_add_test(tc, npy_malformed_headers);
	tcase_add_test(tc, unsupported_dtypes);
	tcase_add_test(tc, wrong_ranks);
	tcase_add_test(tc, non_finite_values);
	tcase_add_test(tc, large_npy_read_in_pieces);
	tcase_add_test(tc, mapped_reads);
	tcase_add_test(tc, mapped_truncated_is_named);
	tcase_add_test(tc, size_overflow);
	tcase_add_test(tc, names_and_formats);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return mk_test_main(tensor_suite());
}
