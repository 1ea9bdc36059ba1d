/* Writing HDF5 weight files in the unit tests (independent of weights.c). */
#ifndef MK_H5TESTUTIL_H
#define MK_H5TESTUTIL_H

#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <hdf5.h>

/* A fresh file name in TMPDIR (the file itself is created by h5t_create). */
static inline void h5t_tmpname(char *buf, size_t cap, const char *tag)
{
	const char *tmp = getenv("TMPDIR");
	int fd;
	snprintf(buf, cap, "%s/%s.XXXXXX", tmp ? tmp : "/tmp", tag);
	fd = mkstemp(buf);
	ck_assert_int_ge(fd, 0);
	close(fd);
}

static inline hid_t h5t_create(const char *path)
{
	hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	ck_assert_int_ge(f, 0);
	return f;
}

/* Writes doubles `data` as dataset `name` (intermediate groups created) of
 * the given rank and dims, stored as file type ftype (e.g.
 * H5T_IEEE_F32LE); data is always given as doubles. */
static inline void h5t_write(hid_t file, const char *name, int rank, const hsize_t *dims,
			     hid_t ftype, const double *data)
{
	hid_t lcpl = H5Pcreate(H5P_LINK_CREATE), space, dset;
	ck_assert_int_ge(lcpl, 0);
	ck_assert_int_ge(H5Pset_create_intermediate_group(lcpl, 1), 0);
	space = H5Screate_simple(rank, dims, NULL);
	ck_assert_int_ge(space, 0);
	dset = H5Dcreate2(file, name, ftype, space, lcpl, H5P_DEFAULT, H5P_DEFAULT);
	ck_assert_int_ge(dset, 0);
	ck_assert_int_ge(H5Dwrite(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), 0);
	H5Dclose(dset);
	H5Sclose(space);
	H5Pclose(lcpl);
}

static inline void h5t_write2(hid_t file, const char *name, hsize_t rows, hsize_t cols,
			      const double *data)
{
	hsize_t dims[2] = {rows, cols};
	h5t_write(file, name, 2, dims, H5T_IEEE_F64LE, data);
}

static inline void h5t_write1(hid_t file, const char *name, hsize_t len, const double *data)
{
	h5t_write(file, name, 1, &len, H5T_IEEE_F64LE, data);
}

/* An IEEE binary16 file type, as h5py writes numpy's float16. */
static inline hid_t h5t_float16(void)
{
	hid_t t = H5Tcopy(H5T_IEEE_F32LE);
	ck_assert_int_ge(t, 0);
	ck_assert_int_ge(H5Tset_fields(t, 15, 10, 5, 0, 10), 0);
	ck_assert_int_ge(H5Tset_size(t, 2), 0);
	ck_assert_int_ge(H5Tset_ebias(t, 15), 0);
	return t;
}

/* Writes `data` as dataset `name` byte for byte: its memory type is the
 * file type ftype, so HDF5 converts nothing (e.g. float16 bit patterns as
 * uint16_t with ftype h5t_float16()). */
static inline void h5t_write_raw(hid_t file, const char *name, int rank, const hsize_t *dims,
				 hid_t ftype, const void *data)
{
	hid_t space = H5Screate_simple(rank, dims, NULL), dset;
	ck_assert_int_ge(space, 0);
	dset = H5Dcreate2(file, name, ftype, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	ck_assert_int_ge(dset, 0);
	ck_assert_int_ge(H5Dwrite(dset, ftype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), 0);
	H5Dclose(dset);
	H5Sclose(space);
}

#endif
