/* Writing HDF5 files without leaving libhdf5 broken when a write fails;
 * library-private.  Every HDF5 writer (io_h5.c, io_h5_stack.c, tensor.c)
 * creates or opens its file with these and closes it with mk_h5w_close. */
#ifndef MK_H5WRITE_H
#define MK_H5WRITE_H

#include <hdf5.h>
#include "h5lazy.h"
#include <stdbool.h>

/* One HDF5 file open for writing.  The fields are the driver's (h5write.c);
 * callers read `file` only. */
typedef struct mk_h5w {
	hid_t file;
	int err;      /* errno of the first failed write, truncate or close; 0 if none */
	int open_err; /* errno of the last failed open() */
	bool closing; /* in mk_h5w_close: failures are recorded, never returned */
} mk_h5w;

/* Creates path (truncating it) or opens an existing HDF5 file read-write,
 * through maskkit's file driver.  Errors name the OS's reason where there is
 * one: MK_EIO for a path that cannot be opened, MK_ESYS for a full disk and
 * the like, MK_EFORMAT when an existing file is not HDF5 libhdf5 can open. */
int mk_h5w_create(mk_h5w *w, const char *path);
int mk_h5w_open(mk_h5w *w, const char *path);

/* Closes every object still open in the file, then the file; returns ret,
 * or, when a write failed at any point (even while closing, where libhdf5
 * writes what it held back), the OS's reason: the message of ret (or
 * "write failed") followed by ": No space left on device", with the status
 * mk_status_from_errno gives.  After it no identifier of the file remains,
 * whatever write failed (a damaged file that libhdf5 was given to open can
 * still make its close fail: see tests/fuzz/README.md).  A no-op returning
 * ret when the file was never opened. */
int mk_h5w_close(mk_h5w *w, int ret);

/* A new IEEE binary16 little-endian file type (numpy's and h5py's float16;
 * libhdf5 1.10 has no predefined one), or H5I_INVALID_HID; H5Tclose it. */
hid_t mk_h5_type_f16(void);

#endif
