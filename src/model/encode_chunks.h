/* maskkit encode's chunks, packed as libhdf5's shuffle and deflate filters
 * would store them, by the OpenMP threads at once, and written with
 * H5Dwrite_chunk from the calling thread (encode_chunks.c); shared by the
 * padded layout (encode_h5.c) and the ragged one (encode_ragged.c).
 * Library-private. */
#ifndef MK_ENCODE_CHUNKS_H
#define MK_ENCODE_CHUNKS_H

#include <hdf5.h>
#include "h5lazy.h"
#include <stdbool.h>
#include <stdint.h>
#include <zlib.h>

#define EH_LEVEL 1 /* deflate level: the maps are mostly zeros or near it */
#define EH_RANK_MAX 5

/* One chunk of floats to write: heads blocks of rows x cols, of which the
 * top-left rows_valid x cols_valid come from src (row i of block h at src +
 * h * hstride + i * rstride), zeros elsewhere; src NULL: a chunk of zeros
 * (the packer's `zero`). */
typedef struct eh_block {
	const float *src;
	int64_t heads, rows, cols, rows_valid, cols_valid, hstride, rstride;
	hid_t dset;
	hsize_t at[EH_RANK_MAX]; /* the chunk's first element */
} eh_block;

/* A thread's scratch: the shuffled bytes, their deflated form and the
 * deflate stream (raw deflate: the zlib header and checksum are added here). */
typedef struct eh_buf {
	uint8_t *raw, *z;
	size_t zcap;
	z_stream zs;
	bool zs_ready;
} eh_buf;

/* A chunk ready for H5Dwrite_chunk: its bytes (malloc'd, NULL when zlib
 * or malloc failed: err says which). */
typedef struct eh_out {
	uint8_t *data;
	size_t len;
	int err;
} eh_out;

typedef struct eh_packer {
	bool deflate;      /* shuffle + deflate, else the plain bytes */
	int esize;         /* bytes an element: 4 (float32) or 2 (float16) */
	eh_buf *bufs;      /* one per thread */
	int nbufs;
	eh_out *outs;      /* one per block of a call */
	int64_t nouts;
	eh_out zero;       /* the chunk of zeros, with its shape given to eh_packer_init */
} eh_packer;

/* Scratch for chunks of up to `elements` elements and `blocks` blocks a
 * call, and the chunk of zeros (heads x tile x tile elements; tile 0: none). */
int eh_packer_init(eh_packer *p, bool deflate, int esize, size_t elements, int64_t blocks,
		   int64_t heads, int64_t tile);
void eh_packer_release(eh_packer *p);
/* Packs every block on the threads at once, then writes them in order. */
int eh_write_blocks(eh_packer *p, const eh_block *blocks, int64_t count);
/* A float32 or float16 (esize) dataset of `rank` dims chunked by `chunk`,
 * with the filters whose work the packer does. */
hid_t eh_create_floats(const eh_packer *p, hid_t where, const char *name, int rank,
		       const hsize_t *dims, const hsize_t *chunk);

/* A whole small dataset at once (MK_ESYS naming it). */
int eh_write_small(hid_t file, const char *name, hid_t ftype, hid_t mtype, int rank,
		   const hsize_t *dims, const void *data);

#endif
