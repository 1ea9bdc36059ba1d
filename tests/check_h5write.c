/* Unit tests for HDF5 writes that fail (src/h5write.c): with a file-size
 * limit (RLIMIT_FSIZE, so writes past it fail with EFBIG as on a full disk)
 * every HDF5 writer returns MK_ESYS naming the OS's reason, leaves no
 * temporary file, and leaves libhdf5 with no open identifier, so that it
 * closes cleanly (libhdf5 1.10 kept the identifier of a file whose close had
 * failed and closed it again at exit, through freed memory); the writers
 * work again once the limit is lifted. */
#include "config.h"
#include <check.h>
#include <errno.h>
#include <hdf5.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include "testutil.h"
#include "scratchutil.h"

#define LIMIT_BYTES 4096 /* smaller than any HDF5 file written here */

static struct rlimit saved;

static void limit_setup(void)
{
	struct rlimit r;

	scratch_setup();
	signal(SIGXFSZ, SIG_IGN); /* a write past the limit fails with EFBIG instead */
	ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &saved), 0);
	r = saved;
	r.rlim_cur = LIMIT_BYTES;
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &r), 0);
}

static void limit_teardown(void)
{
	setrlimit(RLIMIT_FSIZE, &saved);
	scratch_walk(true);
	rmdir(scratch);
}

static const char *at(const char *name)
{
	static char p[PATH_MAX + 64];
	snprintf(p, sizeof p, "%s/%s", scratch, name);
	return p;
}

/* What every failed write must leave: MK_ESYS with the OS's reason, no file,
 * no HDF5 identifier; and libhdf5 must then close cleanly. */
static void check_failed_write(int ret)
{
	ssize_t left = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL);

	ck_assert_int_ne(ret, MK_OK);
	ck_assert_msg(left == 0, "%zd HDF5 identifiers left open after '%s'", left, mk_error());
	ck_assert_int_ge(H5close(), 0);
	ck_assert_int_ge(H5open(), 0);
	ck_assert_int_eq(ret, MK_ESYS);
	ck_assert_msg(strstr(mk_error(), strerror(EFBIG)), "no reason in '%s'", mk_error());
	ck_assert_int_eq(scratch_walk(false), 0);
}

static mk_expr *bound(const char *text, int64_t n)
{
	mk_bind_opts b = {.n = n};
	mk_expr *e = NULL;
	ck_assert_int_eq(mk_expr_parse(text, &e), MK_OK);
	ck_assert_int_eq(mk_expr_bind(e, &b), MK_OK);
	return e;
}

START_TEST(test_mask_h5_too_large)
{
	mk_expr *e = bound("random(size=64)", 512);
	int ret = mk_write_expr(e, at("m.h5"), NULL);

	check_failed_write(ret);
	setrlimit(RLIMIT_FSIZE, &saved);
	ck_assert_int_eq(mk_write_expr(e, at("m.h5"), NULL), MK_OK);
	mk_expr_free(e);
}
END_TEST

static void stack_row(void *ctx, int64_t k, int64_t i, uint64_t *dst)
{
	(void)ctx;
	mk_bits_zero(dst, mk_words(256));
	for (int64_t j = 0; j < 256; j++)
		if ((i * 31 + j * 17 + k * 7) % 5 < 2)
			mk_bit_set(dst, j);
}

START_TEST(test_stack_h5_too_large)
{
	mk_stack s = {.n = 256, .layers = 2, .heads = 2, .row = stack_row, .expr = "test"};

	check_failed_write(mk_write_stack_h5(at("s.h5"), &s));
	setrlimit(RLIMIT_FSIZE, &saved);
	ck_assert_int_eq(mk_write_stack_h5(at("s.h5"), &s), MK_OK);
}
END_TEST

START_TEST(test_tensor_h5_too_large)
{
	int64_t dims[2] = {64, 32};
	mk_tensor t;

	ck_assert_int_eq(mk_tensor_new(2, dims, MK_DTYPE_F32, 0, "t", &t), MK_OK);
	check_failed_write(mk_tensor_write(&t, at("t.h5"), "O", MK_DTYPE_F32));
	check_failed_write(mk_tensor_write(&t, at("t.h5:/g/O"), "O", MK_DTYPE_F64));
	setrlimit(RLIMIT_FSIZE, &saved);
	ck_assert_int_eq(mk_tensor_write(&t, at("t.h5"), "O", MK_DTYPE_F32), MK_OK);
	mk_tensor_release(&t);
}
END_TEST

/* A write that fails anywhere, from the first metadata to the last chunk
 * or the final flush of the metadata cache, leaves libhdf5 clean: limits
 * at eighths of the file's whole size. */
START_TEST(test_fail_at_every_size)
{
	mk_expr *e = bound("random(size=8) + local(w=2)", 1024);
	struct rlimit r = saved;
	struct stat st;

	setrlimit(RLIMIT_FSIZE, &saved);
	ck_assert_int_eq(mk_write_expr(e, at("whole.h5"), NULL), MK_OK);
	ck_assert_int_eq(stat(at("whole.h5"), &st), 0);
	ck_assert_int_gt(st.st_size, 8 * LIMIT_BYTES);
	ck_assert_int_eq(unlink(at("whole.h5")), 0);
	for (int k = 1; k < 8; k++) {
		r.rlim_cur = (rlim_t)(st.st_size * k / 8);
		ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &r), 0);
		check_failed_write(mk_write_expr(e, at("m.h5"), NULL));
	}
	mk_expr_free(e);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("h5write");
	TCase *tc = tcase_create("full");
	tcase_add_checked_fixture(tc, limit_setup, limit_teardown);
	tcase_add_test(tc, test_mask_h5_too_large);
	tcase_add_test(tc, test_stack_h5_too_large);
	tcase_add_test(tc, test_tensor_h5_too_large);
	tcase_add_test(tc, test_fail_at_every_size);
	suite_add_tcase(s, tc);
	return mk_test_main(s);
}
