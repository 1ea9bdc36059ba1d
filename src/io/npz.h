/*
 * NumPy .npz archives (npz.c), private to src/io: a zip file of .npy
 * members.  Written with "stored" entries (no compression); read stored or
 * deflated (np.savez, np.savez_compressed), ZIP64 records included, every
 * offset, size and CRC checked against the file.
 */
#ifndef MK_IO_NPZ_H
#define MK_IO_NPZ_H

#include "internal.h"

/* ---- writing ------------------------------------------------------------- */

/* Where a member's bytes go: f (NULL: nowhere), counted and CRC'd. */
typedef struct mk_npz_sink {
	FILE *f;
	uint32_t crc;
	uint64_t bytes;
} mk_npz_sink;
void mk_npz_put(mk_npz_sink *s, const void *p, size_t len);
/* Puts a little-endian int32. */
void mk_npz_put_i32(mk_npz_sink *s, int32_t v);

/* Puts a member's data, the same bytes each time it is called (once for
 * the CRC, once to write them). */
typedef void (*mk_npz_emit)(void *ctx, mk_npz_sink *s);

typedef struct mk_npz_writer {
	FILE *f;
	uint64_t offset; /* bytes written so far */
	struct mk_npz_wentry *e;
	size_t count;
} mk_npz_writer;

/* Appends the member NAME.npy: a C-order array of descr ("<i4") with
 * itemsize bytes per element and the given shape, its elements put by
 * emit(ctx).  MK_ERANGE when the archive would outgrow a zip without ZIP64
 * (4 GiB). */
int mk_npz_add(mk_npz_writer *z, const char *name, const char *descr, size_t itemsize,
	       int ndim, const int64_t *shape, mk_npz_emit emit, void *ctx);
/* Writes the central directory; frees the writer's entries (also when it
 * fails: call it once, after the last mk_npz_add or a failed one). */
int mk_npz_finish(mk_npz_writer *z, int status);

/* ---- reading ------------------------------------------------------------- */

typedef struct mk_npz_entry {
	char *name;
	uint16_t method;
	uint32_t crc;
	uint64_t csize, usize, offset;
} mk_npz_entry;

typedef struct mk_npz {
	const char *path;
	FILE *f;
	uint64_t size, cd_offset; /* the file, and where the members end */
	mk_npz_entry *e;
	size_t count;
} mk_npz;

/* Opens path and reads its central directory; mk_npz_close it, on failure
 * too. */
int mk_npz_open(const char *path, mk_npz *z);
void mk_npz_close(mk_npz *z);

/* The index of member NAME.npy (or NAME), or -1. */
int64_t mk_npz_find(const mk_npz *z, const char *name);
/* Member k read front to back in pieces of any size, inflated as it goes
 * (64 KiB buffers, whatever the member's size).  read gives exactly len
 * bytes or fails; finish checks that the member ends there and its CRC;
 * close it in any case. */
#define MK_NPZ_CHUNK ((size_t)1 << 16) /* the pieces, compressed and inflated */
typedef struct mk_npz_reader {
	mk_npz *z;
	const mk_npz_entry *e;
	uint64_t at, in_left, done; /* file offset, compressed left, given so far */
	uint32_t crc;
	struct z_stream_s *s;	    /* NULL for a stored member */
	uint8_t *in;
} mk_npz_reader;
int mk_npz_reader_open(mk_npz *z, size_t k, mk_npz_reader *r);
int mk_npz_reader_read(mk_npz_reader *r, void *buf, size_t len);
int mk_npz_reader_finish(mk_npz_reader *r);
void mk_npz_reader_close(mk_npz_reader *r);

/* An integer array, its values widened to int64. */
typedef struct mk_npz_ints {
	int ndim;
	int64_t shape[MK_NPY_MAX_DIMS];
	uint64_t count;
	int64_t *v;
} mk_npz_ints;

/* Reads member NAME.npy (or NAME) as an int32 or int64 array of either
 * byte order and at most MK_NPY_MAX_DIMS dimensions; *found is false and
 * a is empty when there is no such member.  The array (8 bytes an element,
 * whatever the member's width) and the caller's held bytes must fit in
 * max_memory together; the member is inflated in pieces, never whole.
 * Free a->v with free(). */
int mk_npz_read_ints(mk_npz *z, const char *name, uint64_t max_memory, uint64_t held,
		     bool *found, mk_npz_ints *a);

#endif
