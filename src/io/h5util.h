/* HDF5 helpers shared by the readers and writers of HDF5 files;
 * library-private. */
#ifndef MK_H5UTIL_H
#define MK_H5UTIL_H

#include <hdf5.h>
#include "h5lazy.h"
#include "internal.h"

#define MK_H5_LIST 5          /* datasets named in an error, at most */
#define MK_H5_MESSAGE 512     /* bytes in mk_error()'s buffer (error.c) */
#define MK_H5_MAX_VISIT 100000 /* links looked at in one walk */

/* Loads HDF5 (the first time: h5lazy.h) and turns off its printing of
 * its error stack (the library must not print); every entry point that
 * calls HDF5 calls this first and returns its error: MK_ESYS, one line
 * naming the library that could not be loaded. */
__attribute__((warn_unused_result)) int mk_h5_silence(void);

/* Opens path read-only: MK_EIO when it cannot be opened at all (missing,
 * no permission), MK_EFORMAT when it is not an HDF5 file. */
int mk_h5_open(const char *path, hid_t *file);
/* mk_h5_open on every MPI rank at once, through MPI-IO (parallel HDF5);
 * collective: so are the reads that ask for it and H5Fclose.  Without MPI
 * or with one rank, mk_h5_open. */
int mk_h5_open_par(const char *path, hid_t *file);

/* True when a and b are one object of one file (through any links). */
bool mk_h5_same_object(hid_t a, hid_t b);

/* The mk_dtype of a stored type: floats of 2, 4 or 8 bytes, integers of 1,
 * 2, 4 or 8, enums (MK_DTYPE_BOOL for one byte: h5py's bool) and bitfields;
 * MK_DTYPE_NONE for any other. */
mk_dtype mk_h5_dtype(hid_t ftype);

/* The string attribute `name` of obj into buf ("" when absent, not a
 * string or longer than cap - 1 bytes); fixed-length (NUL-padded or not)
 * and variable-length alike. */
void mk_h5_attr_text(hid_t obj, const char *name, char *buf, size_t cap);
/* The scalar integer attribute `name` of obj; false when absent or not one. */
bool mk_h5_attr_int(hid_t obj, const char *name, int64_t *v);

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

/* MK_EFORMAT unless the dataset can be read as it says: a sound layout for
 * dims (libhdf5 trusts the layout a file gives, and reads or copies out of
 * bounds with a damaged one: chunked, every chunk dimension at least 1 and
 * at most the maximum dimension, unless that is unlimited; compact, the
 * stored size is the dataset's size), no external storage, and every part
 * of it written (storage that was never written reads as the fill value). */
int mk_h5_check_layout(hid_t dset, const char *path, const char *name, int rank,
		       const hsize_t *dims);

/* Sizes a file declares, saturating at UINT64_MAX (which no memory limit
 * allows). */
static inline uint64_t mk_h5_mul(uint64_t a, uint64_t b)
{
	return a && b > UINT64_MAX / a ? UINT64_MAX : a * b;
}

static inline uint64_t mk_h5_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

#define MK_H5_STEPS 2

/* How a reader goes through a dataset: each H5Dread takes count[k] elements
 * along axis k, and the reads step through the axes
 * steps[0] (outermost), steps[1], ... (-1 ends the list), each through its
 * whole extent.  One read of everything: count = dims, steps -1. */
typedef struct mk_h5_reads {
	const hsize_t *count;
	int steps[MK_H5_STEPS];
	uint64_t max_memory; /* 0: MK_DEFAULT_MAX_MEMORY */
	uint64_t used;       /* bytes the reader holds besides what HDF5 needs */
	uint64_t *cache;     /* NULL, or gets the chunk cache's bytes */
} mk_h5_reads;

/* mk_h5_check_layout, then the memory the reads need within max_memory
 * (MK_ERANGE naming the file, the size and the limit): used plus one chunk
 * decompressed, and, when a chunk spans several reads, a chunk cache that
 * keeps every chunk from being read until the reads are done with it, so
 * that each is decompressed once (libhdf5's default cache of 1 MiB
 * decompresses a larger chunk again for every read).  *dset is then opened
 * again with that cache, by `name`, its path in the file (on failure it is
 * H5I_INVALID_HID). */
int mk_h5_prepare_read(hid_t *dset, const char *path, const char *name, int rank,
		       const hsize_t *dims, const mk_h5_reads *r);

/* ---- data sets (dataset.c, lengths here), shared with lengths.c ---------- */

/* True when name is a dataset of file (through any links). */
bool mk_h5_is_dataset(hid_t file, const char *name);
/* Reads the 1-D integer dataset `name` of `want` entries (want < 0: any)
 * into a malloc'd *out. */
int mk_h5_read_lengths(hid_t file, const char *path, const char *name, int64_t want,
		       int64_t **out, int64_t *count);
/* The same within max_memory (0: MK_DEFAULT_MAX_MEMORY), of which the
 * caller holds `used` bytes already. */
int mk_h5_read_lengths_within(hid_t file, const char *path, const char *name, int64_t want,
			      uint64_t max_memory, uint64_t used, int64_t **out, int64_t *count);
/* MK_EFORMAT unless every length is in [1, n_max]; `what` names their
 * source and `bound` (" (the data's N)") is said after a length too large. */
int mk_lengths_check(const int64_t *len, int64_t count, int64_t n_max, const char *what,
		     const char *bound);

/* ---- writing masks (io_h5.c), shared with the stack writer (io_h5_stack.c) ---- */

#define MK_H5_MASK_MAX_RANK 4 /* [layers, heads, n, n] */

/* Rows of an n-wide uint8 mask per chunk: about 1 MiB, at most 256. */
int64_t mk_h5_chunk_rows(int64_t n);
/* True when the deflate filter can encode here (it is optional in libhdf5). */
bool mk_h5_have_deflate(void);
/* Creates the uint8 dataset "mask" of dims[0 .. rank) (rank 2 to
 * MK_H5_MASK_MAX_RANK, the last two n x n), chunked by chunk_rows rows of one
 * mask, deflated at level 1 when the filter is there. */
hid_t mk_h5_create_mask(hid_t file, int rank, const hsize_t *dims, int64_t chunk_rows);
/* Streams the rows of r into the mask at lead[0 .. rank - 2) (the indices
 * on the leading axes; NULL for rank 2); *count gets its set cells. */
int mk_h5_write_rows(const mk_rows *r, hid_t dset, int rank, const hsize_t *lead,
		     int64_t chunk_rows, uint64_t *count);
/* A scalar attribute of file type ftype from *val of memory type mtype, and
 * a UTF-8 string attribute (s NULL: ""); MK_EIO naming the attribute. */
int mk_h5_attr(hid_t obj, const char *name, hid_t ftype, hid_t mtype, const void *val);
int mk_h5_attr_str(hid_t obj, const char *name, const char *s);

#endif
