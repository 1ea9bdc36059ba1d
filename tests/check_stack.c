/* Unit tests for stacks of masks in one HDF5 dataset (src/io_h5_stack.c):
 * shapes [heads, n, n] and [layers, heads, n, n] read back cell by cell with
 * the HDF5 C API, a single mask readable as a plain mask file, bad
 * arguments, and atomic replacement. */
#include "config.h"
#include <check.h>
#include <hdf5.h>
#include "testutil.h"
#include "scratchutil.h"

/* ---- stacks of masks (io_h5_stack.c) ------------------------------------ */

/* Mask k of a test stack: a different lattice per mask, plus the diagonal
 * for odd k, so no two masks are alike and rows cross word boundaries. */
static bool stack_cell(int64_t k, int64_t i, int64_t j)
{
	return (i * 7 + j * 3 + k) % (k + 2) == 0 || ((k & 1) && i == j);
}

static void stack_row(void *ctx, int64_t k, int64_t i, uint64_t *dst)
{
	int64_t n = *(const int64_t *)ctx;
	mk_bits_zero(dst, mk_words(n));
	for (int64_t j = 0; j < n; j++)
		if (stack_cell(k, i, j))
			mk_bit_set(dst, j);
}

/* Reads the scalar attribute name of dset as memory type mtype into *v. */
static void h5_attr_read(hid_t dset, const char *name, hid_t mtype, void *v)
{
	hid_t a = H5Aopen(dset, name, H5P_DEFAULT);
	ck_assert_int_ge(a, 0);
	ck_assert_int_ge(H5Aread(a, mtype, v), 0);
	H5Aclose(a);
}

static int64_t h5_attr_i64(hid_t dset, const char *name)
{
	int64_t v = -1;
	h5_attr_read(dset, name, H5T_NATIVE_INT64, &v);
	return v;
}

static void h5_attr_str_is(hid_t dset, const char *name, const char *want)
{
	hid_t a = H5Aopen(dset, name, H5P_DEFAULT), t = H5Tcopy(H5T_C_S1);
	char *got = NULL;
	ck_assert_int_ge(a, 0);
	ck_assert_int_ge(H5Tset_size(t, H5T_VARIABLE), 0);
	ck_assert_int_ge(H5Tset_cset(t, H5T_CSET_UTF8), 0);
	ck_assert_int_ge(H5Aread(a, t, &got), 0);
	ck_assert_str_eq(got, want);
	H5free_memory(got);
	H5Tclose(t);
	H5Aclose(a);
}

/* Reads the stack at p back with the HDF5 C API and checks its shape,
 * type, chunks, every cell and the attributes against stack_cell. */
static void stack_check_file(const char *p, int64_t layers, int64_t heads, int64_t n)
{
	int64_t masks = (layers ? layers : 1) * (heads ? heads : 1);
	int rank = 2 + (layers > 0) + (heads > 0);
	hsize_t dims[4], chunk[4];
	hid_t file = H5Fopen(p, H5F_ACC_RDONLY, H5P_DEFAULT), dset, space, type, dcpl;
	uint8_t *v = malloc((size_t)(masks * n * n));
	uint64_t count = 0;
	double sum = 0.0, sparsity = -1.0;

	ck_assert_ptr_nonnull(v);
	ck_assert_int_ge(file, 0);
	dset = H5Dopen2(file, "mask", H5P_DEFAULT);
	ck_assert_int_ge(dset, 0);
	space = H5Dget_space(dset);
	ck_assert_int_eq(H5Sget_simple_extent_ndims(space), rank);
	H5Sget_simple_extent_dims(space, dims, NULL);
	if (layers)
		ck_assert_uint_eq(dims[0], (hsize_t)layers);
	if (heads)
		ck_assert_uint_eq(dims[rank - 3], (hsize_t)heads);
	ck_assert_uint_eq(dims[rank - 2], (hsize_t)n);
	ck_assert_uint_eq(dims[rank - 1], (hsize_t)n);
	type = H5Dget_type(dset);
	ck_assert_int_gt(H5Tequal(type, H5T_STD_U8LE), 0);
	dcpl = H5Dget_create_plist(dset);
	ck_assert_int_eq(H5Pget_chunk(dcpl, 4, chunk), rank);
	for (int d = 0; d < rank - 2; d++)
		ck_assert_uint_eq(chunk[d], 1); /* one (layer, head) per chunk */
	ck_assert_uint_eq(chunk[rank - 1], (hsize_t)n);
	if (H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0)
		ck_assert_int_ge(H5Pget_nfilters(dcpl), 1);
	ck_assert_int_ge(H5Dread(dset, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, v), 0);
	for (int64_t k = 0; k < masks; k++) {
		uint64_t ck = 0;
		for (int64_t i = 0; i < n; i++)
			for (int64_t j = 0; j < n; j++) {
				uint8_t c = v[(k * n + i) * n + j];
				ck_assert_msg(c == stack_cell(k, i, j), "mask %lld (%lld, %lld) is %u",
					      (long long)k, (long long)i, (long long)j, c);
				ck += c;
			}
		count += ck;
		sum += 1.0 - (double)ck / (double)(n * n);
	}
	ck_assert_int_eq(h5_attr_i64(dset, "n"), n);
	ck_assert_int_eq(h5_attr_i64(dset, "layers"), layers);
	ck_assert_int_eq(h5_attr_i64(dset, "heads"), heads);
	ck_assert_int_eq(h5_attr_i64(dset, "count"), (int64_t)count);
	h5_attr_read(dset, "sparsity", H5T_NATIVE_DOUBLE, &sparsity);
	ck_assert_double_eq_tol(sparsity, sum / (double)masks, 1e-15);
	h5_attr_str_is(dset, "expr", "test stack");
	H5Pclose(dcpl);
	H5Tclose(type);
	H5Sclose(space);
	H5Dclose(dset);
	H5Fclose(file);
	free(v);
}

static const struct {
	int64_t layers, heads, n;
} stack_shapes[] = {
	{2, 3, 70},  /* [layers, heads, n, n], rows over two words */
	{0, 2, 300}, /* [heads, n, n], two row blocks per mask */
	{0, 0, 65},  /* one [n, n] mask */
	{1, 1, 1},
};

START_TEST(stack_round_trip)
{
	int64_t n = stack_shapes[_i].n;
	mk_stack s = {.layers = stack_shapes[_i].layers, .heads = stack_shapes[_i].heads, .n = n,
		      .row = stack_row, .ctx = &n, .expr = "test stack"};
	ck_assert_msg(mk_write_stack_h5(path("s.h5"), &s) == MK_OK, "%s", mk_error());
	stack_check_file(path("s.h5"), s.layers, s.heads, n);
	ck_assert_int_eq(scratch_walk(false), 1); /* no temporary file left */
}
END_TEST

/* layers = heads = 0 stays readable by the 2-D mask reader. */
START_TEST(stack_single_reads_as_mask)
{
	int64_t n = 65;
	mk_stack s = {.n = n, .row = stack_row, .ctx = &n};
	mk_mask *m = NULL;
	ck_assert_int_eq(mk_write_stack_h5(path("one.h5"), &s), MK_OK);
	ck_assert_msg(mk_mask_load(path("one.h5"), 0, &m) == MK_OK, "%s", mk_error());
	ck_assert_int_eq(mk_mask_n(m), n);
	for (int64_t i = 0; i < n; i++)
		for (int64_t j = 0; j < n; j++)
			ck_assert_int_eq(mk_mask_test(m, i, j), stack_cell(0, i, j));
	mk_mask_free(m);
}
END_TEST

START_TEST(stack_bad_arguments)
{
	int64_t n = 4;
	mk_stack s = {.layers = 2, .heads = 0, .n = n, .row = stack_row, .ctx = &n};
	put_file(path("old.h5"), "old", 3);
	ck_assert_int_eq(mk_write_stack_h5(path("old.h5"), &s), MK_EINVAL);
	ck_assert_ptr_nonnull(strstr(mk_error(), "2 layers of 0 heads"));
	s = (mk_stack){.heads = -1, .n = n, .row = stack_row, .ctx = &n};
	ck_assert_int_eq(mk_write_stack_h5(path("old.h5"), &s), MK_EINVAL);
	s = (mk_stack){.heads = 2, .n = 0, .row = stack_row, .ctx = &n};
	ck_assert_int_eq(mk_write_stack_h5(path("old.h5"), &s), MK_EINVAL);
	s = (mk_stack){.heads = 2, .n = MK_N_MAX + 1, .row = stack_row, .ctx = &n};
	ck_assert_int_eq(mk_write_stack_h5(path("old.h5"), &s), MK_ERANGE);
	s = (mk_stack){.layers = INT64_MAX / 2, .heads = 4, .n = n, .row = stack_row, .ctx = &n};
	ck_assert_int_eq(mk_write_stack_h5(path("old.h5"), &s), MK_ERANGE);
	ck_assert_ptr_nonnull(strstr(mk_error(), "too many"));
	s = (mk_stack){.heads = 2, .n = n};
	ck_assert_int_eq(mk_write_stack_h5(path("old.h5"), &s), MK_EINVAL);
	ck_assert_int_eq(mk_write_stack_h5(path("old.h5"), NULL), MK_EINVAL);
	/* the old file is untouched and nothing else was created */
	ck_assert_int_eq(scratch_walk(false), 1);
	{
		char buf[8] = {0};
		FILE *f = fopen(path("old.h5"), "rb");
		ck_assert_ptr_nonnull(f);
		ck_assert_uint_eq(fread(buf, 1, sizeof buf, f), 3);
		fclose(f);
		ck_assert_str_eq(buf, "old");
	}
	s = (mk_stack){.heads = 1, .n = n, .row = stack_row, .ctx = &n};
	ck_assert_int_eq(mk_write_stack_h5(path("no/such/dir.h5"), &s), MK_EIO);
	ck_assert_ptr_nonnull(strstr(mk_error(), "dir.h5"));
}
END_TEST

/* A stack replaces an existing file of any kind, atomically. */
START_TEST(stack_replaces_file)
{
	int64_t n = 70;
	mk_stack s = {.layers = 2, .heads = 3, .n = n, .row = stack_row, .ctx = &n,
		      .expr = "test stack"};
	put_file(path("s.h5"), "not hdf5 at all", 15);
	ck_assert_int_eq(mk_write_stack_h5(path("s.h5"), &s), MK_OK);
	stack_check_file(path("s.h5"), 2, 3, n);
	ck_assert_int_eq(scratch_walk(false), 1);
}
END_TEST

static Suite *stack_suite(void)
{
	Suite *s = suite_create("stack");
	TCase *tc = tcase_create("stack");
	tcase_add_checked_fixture(tc, scratch_setup, scratch_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, stack_round_trip, 0, sizeof stack_shapes / sizeof stack_shapes[0]);
	tcase_add_test(tc, stack_single_reads_as_mask);
	tcase_add_test(tc, stack_bad_arguments);
	tcase_add_test(tc, stack_replaces_file);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return mk_test_main(stack_suite());
}
