/*
 * maskkit tensors: dense float tensors of rank 2 to 4 read from and written
 * to .npy and HDF5 files.
 */
#ifndef MK_TENSOR_H
#define MK_TENSOR_H

#include "core.h"
#include "io.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- tensors (tensor.c) --------------------------------------------------- */

/* Dense float tensors of rank 2 to 4 in .npy or HDF5 files, as `maskkit
 * attn` reads and writes them.  In memory the data is float32, row-major and
 * contiguous; `dtype` is what the file holds (float32 or float64). */
#define MK_TENSOR_MAX_RANK 4

typedef struct mk_tensor {
	int rank;                        /* 2..MK_TENSOR_MAX_RANK */
	int64_t dims[MK_TENSOR_MAX_RANK];
	mk_dtype dtype;                  /* as stored in the file */
	float *data;
	void *map;                       /* the file mapping data lies in
					  * (mk_tensor_read_mapped), or NULL */
	size_t map_bytes;
} mk_tensor;

/* Reads "FILE.npy", "FILE.h5" (its only dataset of rank 2 to 4) or
 * "FILE.h5:/path" (.hdf5 too).  Errors: MK_EIO (cannot open), MK_EFORMAT
 * (malformed file, another dtype than float32/float64, rank outside 2..4,
 * an empty dimension, NaN or Inf with the first bad element's index, a
 * float64 beyond float32's range), MK_ERANGE (sizes overflow or need more
 * than max_memory, 0 = MK_DEFAULT_MAX_MEMORY). */
int mk_tensor_read(const char *spec, uint64_t max_memory, mk_tensor *out);
/* mk_tensor_read, but a .npy file of float32 in the host's byte order and C
 * order, above 4 MiB, its data 64-byte aligned in the file (numpy pads its
 * headers so), is mapped (MAP_PRIVATE) rather than copied: no copy,
 * and no fresh memory to fault in (a third of `maskkit attn`'s time outside
 * its kernel at n = 4096; docs/performance.md).  Writing to data changes
 * only the copy in memory.  The catch: the file is read as the program
 * goes, so a file truncated meanwhile by someone else raises SIGBUS where
 * the missing data is touched, and changes written to it meanwhile may be
 * seen.  A program that maps must handle SIGBUS (mk_tensor_mapped_file says
 * which file it was); the library never installs a handler. */
int mk_tensor_read_mapped(const char *spec, uint64_t max_memory, mk_tensor *out);
/* The file of the mapped tensor whose mapping holds addr, or NULL.
 * Async-signal-safe: for a SIGBUS handler, with siginfo's si_addr. */
const char *mk_tensor_mapped_file(const void *addr);
/* Writes t as dtype to "FILE.npy", or to one dataset of an HDF5 file:
 * "FILE.h5" (dataset `dataset`) or "FILE.h5:/path" (the path wins; groups
 * created).  An existing FILE.h5 keeps every other dataset, group and
 * attribute: the dataset is added, or replaces the dataset of that name.
 * Atomic: a failure leaves an existing file untouched.  MK_EINVAL for
 * another extension, for an existing FILE.h5 that is not HDF5 and for a
 * path that names a group; MK_ESYS (a full disk...) or MK_EIO with the OS's
 * reason when writing fails. */
int mk_tensor_write(const mk_tensor *t, const char *spec, const char *dataset, mk_dtype dtype);
/* Where a producer may say, while it runs, that elements [0, ready) are
 * final (ready only grows): from any thread, one call at a time.  A part
 * said final is written at once, not when the producer returns. */
typedef struct mk_tensor_sink mk_tensor_sink;
void mk_tensor_sink_ready(mk_tensor_sink *sink, uint64_t ready);
/* Makes more of a tensor's data: on return elements [0, *ready) are final
 * (*ready grows on every call); MK_OK or an error with its message.  It
 * may report parts on the way through sink. */
typedef int (*mk_tensor_produce)(void *arg, mk_tensor_sink *sink, uint64_t *ready);
/* mk_tensor_write of t whose data produce makes a part at a time, called
 * until all of it is ready: a .npy file takes each part as it comes and
 * starts it on its way to the disk while the next is made (where the OS
 * can: Linux), so little is left to wait for at the end; HDF5 is written
 * once all is made.  The producer's error is returned as it set it, and
 * nothing is written. */
int mk_tensor_write_parts(const mk_tensor *t, const char *spec, const char *dataset,
			  mk_dtype dtype, mk_tensor_produce produce, void *arg);
/* The length of the file part of a tensor spec: "a/b.h5" of "a/b.h5:/g/x". */
size_t mk_tensor_file_len(const char *spec);
/* MK_EINVAL, naming both, when writing the tensor spec `out` (dataset
 * `dataset` when it names none) would overwrite one of the count input
 * specs: the same file (by device and inode, so through any links) for
 * .npy, or the same dataset of the same file for HDF5 (adding a dataset to
 * a file that holds inputs is fine). */
int mk_tensor_check_output(const char *out, const char *dataset, const char *const *inputs,
			   size_t count);
/* A zeroed float32 tensor, its size checked for overflow and against
 * max_memory (0 = MK_DEFAULT_MAX_MEMORY); `what` names it in errors. */
int mk_tensor_new(int rank, const int64_t *dims, mk_dtype dtype, uint64_t max_memory,
		  const char *what, mk_tensor *out);
/* mk_tensor_new without the zeroing, for a caller that writes every
 * element before any is read (a first pass over memory the caller's own
 * writes would touch anyway). */
int mk_tensor_new_unset(int rank, const int64_t *dims, mk_dtype dtype, uint64_t max_memory,
			const char *what, mk_tensor *out);
void mk_tensor_release(mk_tensor *t); /* frees data (or unmaps it), zeroes *t; NULL-safe */
/* Elements, the product of the dims (checked when the tensor was made). */
uint64_t mk_tensor_count(const mk_tensor *t);
/* "(2, 8, 128, 64)" into buf. */
void mk_tensor_shape_text(const mk_tensor *t, char *buf, size_t cap);
/* The format a tensor path names: MK_FMT_NPY, MK_FMT_H5 (also with a
 * ":/dataset" suffix) or MK_FMT_NONE. */
mk_format mk_tensor_format(const char *spec);

#ifdef __cplusplus
}
#endif
#endif /* MK_TENSOR_H */
