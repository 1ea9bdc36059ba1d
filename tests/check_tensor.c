/* Unit tests of tensor files (tensor.c): .npy and HDF5 round trips, malformed
 * and unsupported inputs, non-finite values, size overflow, mapped reads,
 * atomic writes, writes of tensors made a part at a time. */
#include "config.h"
#include <check.h>
#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "h5testutil.h"
#include "testutil.h"

static char dir[PATH_MAX];

static void dir_make(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof dir, "%s/check_tensor.XXXXXX", tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static int dir_select_all(const struct dirent *e)
{
	return strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
}

/* Number of files in the directory; with purge, removes them. */
static int dir_entries(bool purge)
{
	struct dirent **list;
	char p[PATH_MAX + 300];
	int count = scandir(dir, &list, dir_select_all, alphasort);
	ck_assert_int_ge(count, 0);
	for (int k = 0; k < count; k++) {
		snprintf(p, sizeof p, "%s/%s", dir, list[k]->d_name);
		if (purge)
			unlink(p);
		free(list[k]);
	}
	free(list);
	return count;
}

static void dir_remove(void)
{
	dir_entries(true);
	rmdir(dir);
}

/* dir/name; two slots so that two names can be held at once. */
static const char *at(const char *name)
{
	static char buf[2][PATH_MAX + 64];
	static int slot;
	slot ^= 1;
	snprintf(buf[slot], sizeof buf[slot], "%s/%s", dir, name);
	return buf[slot];
}

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

/* A tensor of the given dims filled with e * 0.25 - 3 (exact in float32). */
static void make_tensor(int rank, const int64_t *dims, mk_dtype dtype, mk_tensor *t)
{
	ck_assert_int_eq(mk_tensor_new(rank, dims, dtype, 0, "test", t), MK_OK);
	for (uint64_t e = 0; e < mk_tensor_count(t); e++)
		t->data[e] = (float)e * 0.25f - 3.0f;
}

/* ---- round trips ------------------------------------------------------------------ */

static const int64_t dims4[4] = {2, 3, 5, 4};

/* Writes and reads back dir/file + suffix, then removes the file. */
static void round_trip(const char *file, const char *suffix, int rank, mk_dtype dtype)
{
	char spec[PATH_MAX + 128];
	mk_tensor a, b;
	snprintf(spec, sizeof spec, "%s%s", at(file), suffix);
	make_tensor(rank, dims4 + 4 - rank, dtype, &a);
	ck_assert_msg(mk_tensor_write(&a, spec, "O", dtype) == MK_OK, "%s", mk_error());
	ck_assert_msg(mk_tensor_read(spec, 0, &b) == MK_OK, "%s", mk_error());
	ck_assert_int_eq(b.rank, rank);
	ck_assert_int_eq(b.dtype, dtype);
	ck_assert_mem_eq(a.dims, b.dims, (size_t)rank * sizeof *a.dims);
	ck_assert_mem_eq(a.data, b.data, mk_tensor_count(&a) * sizeof(float));
	mk_tensor_release(&a);
	mk_tensor_release(&b);
	ck_assert_int_eq(dir_entries(false), 1); /* no temporary file left */
	ck_assert_int_eq(unlink(at(file)), 0);
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
	make_tensor(3, dims4 + 1, MK_DTYPE_F64, &t);
	ck_assert_int_eq(mk_tensor_write(&t, at("t.npy"), NULL, MK_DTYPE_F64), MK_OK);
	f = fopen(at("t.npy"), "rb");
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
	npy_put(at("f.npy"), "{'descr': '>f4', 'fortran_order': True, 'shape': (2, 3), }\n", be,
		sizeof be);
	ck_assert_msg(mk_tensor_read(at("f.npy"), 0, &t) == MK_OK, "%s", mk_error());
	ck_assert_int_eq(t.dims[0], 2);
	ck_assert_int_eq(t.dims[1], 3);
	for (int k = 0; k < 6; k++)
		ck_assert_float_eq(t.data[k], (float)(k + 1));
	mk_tensor_release(&t);
}
END_TEST

START_TEST(h5_finds_the_only_tensor)
{
	hid_t f = h5t_create(at("w.h5"));
	const double v[6] = {1, 2, 3, 4, 5, 6};
	mk_tensor t;
	h5t_write1(f, "bias", 6, v);                 /* rank 1: not a candidate */
	h5t_write2(f, "group/weights", 2, 3, v);
	H5Fclose(f);
	ck_assert_int_eq(mk_tensor_read(at("w.h5"), 0, &t), MK_OK);
	ck_assert_int_eq(t.dtype, MK_DTYPE_F64);
	ck_assert_float_eq(t.data[5], 6.0f);
	mk_tensor_release(&t);
	f = H5Fopen(at("w.h5"), H5F_ACC_RDWR, H5P_DEFAULT);
	h5t_write2(f, "other", 3, 2, v);
	H5Fclose(f);
	expect_read_error(at("w.h5"), MK_EFORMAT, "2 datasets of rank 2 to 4 to choose from");
	expect_read_error(at("w.h5:/missing"), MK_EFORMAT, "no dataset '/missing'");
	expect_read_error(at("w.h5:/bias"), MK_EFORMAT, "has rank 1; a tensor is [n, d]");
}
END_TEST

/* ---- bad inputs ----------------------------------------------------------------- */

START_TEST(npy_malformed_headers)
{
	const float x[4] = {0};
	npy_put(at("a.npy"), "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2) \n", x, 16);
	expect_read_error(at("a.npy"), MK_EFORMAT, "bad .npy header");
	npy_put(at("b.npy"), "{'descr': '<f4', 'shape': (2, 2), }", x, 16);
	expect_read_error(at("b.npy"), MK_EFORMAT, "it needs 'descr'");
	npy_put(at("c.npy"), "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", x, 12);
	expect_read_error(at("c.npy"), MK_EFORMAT, "(truncated)");
	npy_put(at("d.npy"), "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", x, 16);
	ck_assert_int_eq(truncate(at("d.npy"), 7), 0);
	expect_read_error(at("d.npy"), MK_EFORMAT, "not a .npy file");
	expect_read_error(at("missing.npy"), MK_EIO, "No such file");
	expect_read_error(at("x.txt"), MK_EINVAL, "a tensor file is .npy, .h5");
}
END_TEST

START_TEST(unsupported_dtypes)
{
	const int32_t x[4] = {0};
	npy_put(at("i.npy"), "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 2), }", x, 16);
	expect_read_error(at("i.npy"), MK_EFORMAT, "unsupported dtype '<i4' (use float32 or");
	npy_put(at("h.npy"), "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 4), }", x, 16);
	expect_read_error(at("h.npy"), MK_EFORMAT, "unsupported dtype '<f2'");
	hid_t f = h5t_create(at("i.h5"));
	hsize_t dims[2] = {2, 2};
	const double v[4] = {1, 2, 3, 4};
	h5t_write(f, "x", 2, dims, H5T_STD_I32LE, v);
	H5Fclose(f);
	expect_read_error(at("i.h5"), MK_EFORMAT, "is not float32 or float64");
}
END_TEST

START_TEST(wrong_ranks)
{
	const float x[32] = {0};
	npy_put(at("1.npy"), "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", x, 16);
	expect_read_error(at("1.npy"), MK_EFORMAT, "rank 1; a tensor is [n, d]");
	npy_put(at("5.npy"), "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2, 2, 2, 2), }",
		x, 128);
	expect_read_error(at("5.npy"), MK_EFORMAT, "rank above 4");
	npy_put(at("0.npy"), "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 0), }", x, 0);
	expect_read_error(at("0.npy"), MK_EFORMAT, "empty dimension (0 at axis 1)");
}
END_TEST

START_TEST(non_finite_values)
{
	float x[6] = {1, 2, 3, 4, 5, 6};
	double y[6] = {1, 2, 3, 4, 5, 6};
	const char *f4 = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
	const char *f8 = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }";
	x[4] = NAN;
	npy_put(at("n.npy"), f4, x, sizeof x);
	expect_read_error(at("n.npy"), MK_EFORMAT, "element [1, 1] is NaN");
	y[2] = -INFINITY;
	npy_put(at("i.npy"), f8, y, sizeof y);
	expect_read_error(at("i.npy"), MK_EFORMAT, "element [0, 2] is Inf");
	y[2] = 1e300;
	npy_put(at("r.npy"), f8, y, sizeof y);
	expect_read_error(at("r.npy"), MK_EFORMAT, "beyond float32's range");
	y[2] = INFINITY;
	hid_t f = h5t_create(at("i.h5"));
	hsize_t dims[2] = {3, 2};
	h5t_write(f, "x", 2, dims, H5T_IEEE_F32LE, y);
	H5Fclose(f);
	expect_read_error(at("i.h5"), MK_EFORMAT, "element [1, 0] is Inf");
}
END_TEST

/* Past 4 MiB a float32 .npy is read in pieces by every thread, each checked
 * for NaN and Inf as it comes: the values, the first bad element's index
 * (in a later piece) and a file shorter than its header says. */
START_TEST(large_npy_read_in_pieces)
{
	const int64_t dims[3] = {3, 1000, 1001}; /* 12 MB: three pieces, the last short */
	mk_tensor a, b;

	make_tensor(3, dims, MK_DTYPE_F32, &a);
	ck_assert_msg(mk_tensor_write(&a, at("big.npy"), "O", MK_DTYPE_F32) == MK_OK, "%s",
		      mk_error());
	ck_assert_msg(mk_tensor_read(at("big.npy"), 0, &b) == MK_OK, "%s", mk_error());
	ck_assert_mem_eq(a.data, b.data, mk_tensor_count(&a) * sizeof(float));
	mk_tensor_release(&b);
	a.data[2 * 1000 * 1001 + 5 * 1001 + 7] = NAN; /* in the second piece */
	a.data[2 * 1000 * 1001 + 9 * 1001] = INFINITY;
	ck_assert_int_eq(mk_tensor_write(&a, at("big.npy"), "O", MK_DTYPE_F32), MK_OK);
	expect_read_error(at("big.npy"), MK_EFORMAT, "element [2, 5, 7] is NaN");
	/* cut short: the header promises 12 MB */
	ck_assert_int_eq(truncate(at("big.npy"), 6 << 20), 0);
	expect_read_error(at("big.npy"), MK_EFORMAT, "big.npy");
	mk_tensor_release(&a);
	ck_assert_int_eq(unlink(at("big.npy")), 0);
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

	make_tensor(3, dims, MK_DTYPE_F32, &a);
	ck_assert_int_eq(mk_tensor_write(&a, at("m.npy"), "O", MK_DTYPE_F32), MK_OK);
	ck_assert_msg(mk_tensor_read_mapped(at("m.npy"), 0, &b) == MK_OK, "%s", mk_error());
	ck_assert_ptr_nonnull(b.map);
	ck_assert_mem_eq(a.data, b.data, mk_tensor_count(&a) * sizeof(float));
	ck_assert_str_eq(mk_tensor_mapped_file(b.data + 12345), at("m.npy"));
	ck_assert_ptr_null(mk_tensor_mapped_file(a.data));
	b.data[0] = 42.0f; /* the copy in memory only */
	ck_assert_int_eq(mk_tensor_read(at("m.npy"), 0, &c), MK_OK);
	ck_assert_ptr_null(c.map);
	ck_assert(c.data[0] == a.data[0]);
	gone = b.data;
	mk_tensor_release(&b);
	mk_tensor_release(&c);
	ck_assert_ptr_null(mk_tensor_mapped_file(gone));
	/* data 76 bytes in, not 64-byte aligned as numpy writes: read */
	npy_put(at("m.npy"), "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 1000, 1001)}",
		a.data, mk_tensor_count(&a) * sizeof(float));
	ck_assert_int_eq(mk_tensor_read_mapped(at("m.npy"), 0, &b), MK_OK);
	ck_assert_ptr_null(b.map);
	ck_assert_mem_eq(a.data, b.data, mk_tensor_count(&a) * sizeof(float));
	mk_tensor_release(&b);
	a.data[2 * 1000 * 1001 + 5 * 1001 + 7] = NAN;
	ck_assert_int_eq(mk_tensor_write(&a, at("m.npy"), "O", MK_DTYPE_F32), MK_OK);
	ck_assert_int_eq(mk_tensor_read_mapped(at("m.npy"), 0, &b), MK_EFORMAT);
	ck_assert_ptr_nonnull(strstr(mk_error(), "element [2, 5, 7] is NaN"));
	ck_assert_ptr_null(b.data);
	a.data[2 * 1000 * 1001 + 5 * 1001 + 7] = 1.0f;
	ck_assert_int_eq(mk_tensor_write(&a, at("m.npy"), "O", MK_DTYPE_F64), MK_OK);
	ck_assert_int_eq(mk_tensor_read_mapped(at("m.npy"), 0, &b), MK_OK);
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

	make_tensor(2, dims, MK_DTYPE_F32, &a);
	ck_assert_int_eq(mk_tensor_write(&a, at("t.npy"), "O", MK_DTYPE_F32), MK_OK);
	mk_tensor_release(&a);
	bus_want = at("t.npy");
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
	npy_put(at("o.npy"), "{'descr': '<f4', 'fortran_order': False, "
		"'shape': (1099511627776, 1099511627776, 4), }", x, 16);
	expect_read_error(at("o.npy"), MK_ERANGE, "its size overflows");
	npy_put(at("m.npy"), "{'descr': '<f4', 'fortran_order': False, "
		"'shape': (1048576, 1048576), }", x, 16);
	expect_read_error(at("m.npy"), MK_ERANGE, "over the memory limit");
	ck_assert_int_eq(mk_tensor_new(3, huge, MK_DTYPE_F32, 0, "t", &t), MK_ERANGE);
	ck_assert_ptr_null(t.data);
}
END_TEST

/* ---- writing ---------------------------------------------------------------------- */

START_TEST(failed_writes_keep_the_old_file)
{
	mk_tensor t;
	FILE *f;
	char buf[16] = {0};
	make_tensor(2, dims4 + 2, MK_DTYPE_F32, &t);
	f = fopen(at("old.h5"), "w");
	fputs("sentinel\n", f);
	fclose(f);
	/* not HDF5: refused rather than replaced by a new file */
	ck_assert_int_eq(mk_tensor_write(&t, at("old.h5:/x"), NULL, MK_DTYPE_F32), MK_EINVAL);
	ck_assert_ptr_nonnull(strstr(mk_error(), "is not an HDF5 file"));
	/* the root group exists: HDF5 cannot create a dataset there */
	ck_assert_int_eq(mk_tensor_write(&t, at("new.h5:/"), NULL, MK_DTYPE_F32), MK_EINVAL);
	ck_assert_ptr_nonnull(strstr(mk_error(), "cannot create dataset '/'"));
	ck_assert_int_eq(mk_tensor_write(&t, at("nodir/x.npy"), NULL, MK_DTYPE_F32), MK_EIO);
	ck_assert_int_eq(mk_tensor_write(&t, at("x.txt"), NULL, MK_DTYPE_F32), MK_EINVAL);
	f = fopen(at("old.h5"), "r");
	ck_assert_uint_eq(fread(buf, 1, sizeof buf - 1, f), 9);
	fclose(f);
	ck_assert_str_eq(buf, "sentinel\n");
	ck_assert_int_eq(dir_entries(false), 1);
	mk_tensor_release(&t);
}
END_TEST

/* mk_tensor_write_parts: a producer that makes `step` elements a call (the
 * formula of make_tensor; the first half said final through the sink),
 * failing on call `fail` (0: never) or making no progress on call `stall`. */
struct parts {
	mk_tensor *t;
	uint64_t step;
	int calls, fail, stall;
};

static int parts_produce(void *arg, mk_tensor_sink *sink, uint64_t *ready)
{
	struct parts *p = arg;
	uint64_t count = mk_tensor_count(p->t), end = *ready + p->step;

	if (++p->calls == p->fail)
		return mk_error_set(MK_EINVAL, "the producer failed on call %d", p->calls);
	if (p->calls == p->stall)
		return MK_OK;
	end = end < count ? end : count;
	for (uint64_t e = *ready; e < end; e++) {
		p->t->data[e] = (float)e * 0.25f - 3.0f;
		if (e == (*ready + end) / 2)
			mk_tensor_sink_ready(sink, e + 1);
	}
	*ready = end;
	return MK_OK;
}

/* Writes spec from a producer of step elements a call, reads it back and
 * compares with make_tensor's tensor; then removes the file. */
static void parts_round_trip(const char *spec, const char *file, mk_dtype dtype, uint64_t step)
{
	mk_tensor want, got, t;
	struct parts p = {.t = &t, .step = step};

	make_tensor(4, dims4, dtype, &want);
	ck_assert_int_eq(mk_tensor_new(4, dims4, dtype, 0, "test", &t), MK_OK);
	ck_assert_msg(mk_tensor_write_parts(&t, spec, "O", dtype, parts_produce, &p) == MK_OK,
		      "%s", mk_error());
	ck_assert_int_eq(p.calls, (int)((mk_tensor_count(&t) + step - 1) / step));
	ck_assert_msg(mk_tensor_read(spec, 0, &got) == MK_OK, "%s", mk_error());
	ck_assert_int_eq(got.dtype, dtype);
	ck_assert_mem_eq(got.dims, want.dims, sizeof dims4);
	ck_assert_mem_eq(got.data, want.data, mk_tensor_count(&want) * sizeof(float));
	mk_tensor_release(&want);
	mk_tensor_release(&got);
	mk_tensor_release(&t);
	ck_assert_int_eq(dir_entries(false), 1); /* no temporary file left */
	ck_assert_int_eq(unlink(at(file)), 0);
}

START_TEST(parts_are_written_as_made)
{
	/* 120 elements: one call, parts that divide it, and a short last part */
	for (uint64_t step = 1; step <= 120; step = step * 3 + 1) {
		parts_round_trip(at("p.npy"), "p.npy", MK_DTYPE_F32, step);
		parts_round_trip(at("p.npy"), "p.npy", MK_DTYPE_F64, step);
	}
	parts_round_trip(at("p.h5"), "p.h5", MK_DTYPE_F32, 7);
	parts_round_trip(at("p.h5"), "p.h5", MK_DTYPE_F64, 50);
}
END_TEST

/* A failing producer: its own status and message, not the file's; the old
 * file kept, no temporary file left. */
START_TEST(parts_failures_write_nothing)
{
	const char *specs[] = {"q.npy", "q.h5"};
	mk_tensor t;

	ck_assert_int_eq(mk_tensor_new(4, dims4, MK_DTYPE_F32, 0, "test", &t), MK_OK);
	for (int k = 0; k < 2; k++) {
		struct parts p = {.t = &t, .step = 16, .fail = 3};
		FILE *f = fopen(at("keep.npy"), "w");
		ck_assert_ptr_nonnull(f);
		fputs("old\n", f);
		fclose(f);
		ck_assert_int_eq(mk_tensor_write_parts(&t, at(specs[k]), "O", MK_DTYPE_F32,
						       parts_produce, &p), MK_EINVAL);
		ck_assert_str_eq(mk_error(), "the producer failed on call 3");
		ck_assert_ptr_null(mk_error_get()->file);
		p = (struct parts){.t = &t, .step = 16, .fail = 2};
		ck_assert_int_eq(mk_tensor_write_parts(&t, at("keep.npy"), "O", MK_DTYPE_F32,
						       parts_produce, &p), MK_EINVAL);
		p = (struct parts){.t = &t, .step = 16, .stall = 2};
		ck_assert_int_eq(mk_tensor_write_parts(&t, at(specs[k]), "O", MK_DTYPE_F32,
						       parts_produce, &p), MK_EINTERNAL);
		ck_assert_int_eq(dir_entries(false), 1); /* keep.npy only */
		f = fopen(at("keep.npy"), "r");
		ck_assert_int_eq(fgetc(f), 'o');
		fclose(f);
	}
	/* a file's own failure still names it */
	struct parts p = {.t = &t, .step = 16};
	ck_assert_int_eq(mk_tensor_write_parts(&t, at("nodir/x.npy"), "O", MK_DTYPE_F32,
					       parts_produce, &p), MK_EIO);
	ck_assert_ptr_nonnull(strstr(mk_error(), "nodir/x.npy"));
	mk_tensor_release(&t);
}
END_TEST

/* A write that fails in the flusher's thread (flusher.c) past a file size
 * limit: MK_ESYS with the OS's reason, no file left; in a child, since the
 * limit is the process's. */
START_TEST(parts_write_failure_reported)
{
	const int64_t dims[2] = {1024, 1024}; /* 4 MiB */
	int status;
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct rlimit lim = {1 << 20, 1 << 20};
		mk_tensor t;
		struct parts p = {.t = &t, .step = 1 << 18};
		int ret;
		signal(SIGXFSZ, SIG_IGN);
		if (mk_tensor_new(2, dims, MK_DTYPE_F32, 0, "test", &t) || setrlimit(RLIMIT_FSIZE, &lim))
			_exit(44);
		ret = mk_tensor_write_parts(&t, at("big.npy"), "O", MK_DTYPE_F32, parts_produce, &p);
		_exit(ret == MK_ESYS && strstr(mk_error(), "File too large") && dir_entries(false) == 0
		      ? 42 : 43);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 42, "child status %d", status);
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
	tcase_add_checked_fixture(tc, dir_make, dir_remove);
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
	tcase_add_test(tc, failed_writes_keep_the_old_file);
	tcase_add_test(tc, parts_are_written_as_made);
	tcase_add_test(tc, parts_failures_write_nothing);
	tcase_add_test(tc, parts_write_failure_reported);
	tcase_add_test(tc, names_and_formats);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return mk_test_main(tensor_suite());
}
