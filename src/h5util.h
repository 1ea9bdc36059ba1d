/* HDF5 helpers shared by the mask reader (io_h5.c) and the weights reader
 * (weights.c); library-private. */
#ifndef MK_H5UTIL_H
#define MK_H5UTIL_H

#include <hdf5.h>
#include "internal.h"

#define MK_H5_LIST 5          /* datasets named in an error, at most */
#define MK_H5_MESSAGE 512     /* bytes in mk_error()'s buffer (error.c) */
#define MK_H5_MAX_VISIT 100000 /* links looked at in one walk */

/* Turns off HDF5's printing of its error stack (the library must not
 * print); every entry point that calls HDF5 calls this first. */
void mk_h5_silence(void);

/* Opens path read-only: MK_EIO when it cannot be opened at all (missing,
 * no permission), MK_EFORMAT when it is not an HDF5 file. */
int mk_h5_open(const char *path, hid_t *file);

/* Every dataset reached through hard links whose rank is `rank` (0: any)
 * and whose path, with its leading '/', contains each of the NULL-terminated
 * needles (NULL: no needles).  *out is NULL-terminated, sorted by strcmp,
 * freed with mk_h5_names_free.  A walk cut off by a looping or huge group
 * structure is an MK_EFORMAT error naming `path` and ending with `hint`. */
int mk_h5_datasets(hid_t file, const char *path, int rank, const char *const *needles,
		   const char *hint, char ***out, size_t *count);
void mk_h5_names_free(char **names);

/* "a, b, c, ..." into buf: up to MK_H5_LIST of the names, as many as fit in
 * cap bytes, and ", ..." when some are left out. */
void mk_h5_join(char *buf, size_t cap, char *const *names, size_t count);

/* MK_EFORMAT unless the dataset's layout is sound for its dims; libhdf5
 * trusts the layout a file gives when it reads, and reads or copies out of
 * bounds with a damaged one.  Chunked: every chunk dimension in [1, dims[k]]
 * (a larger chunk makes it read out of bounds; only a resizable dataset can
 * have one legitimately, and neither masks nor model weights are stored
 * resizable).  Compact: the stored size is the dataset's size. */
int mk_h5_check_layout(hid_t dset, const char *path, const char *name, int rank,
		       const hsize_t *dims);

#endif
