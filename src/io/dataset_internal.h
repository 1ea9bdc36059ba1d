/* The data-set reader's state, shared by dataset.c and the reader of the
 * ragged layout (dataset_ragged.c); library-private. */
#ifndef MK_DATASET_INTERNAL_H
#define MK_DATASET_INTERNAL_H

#include "h5util.h"

#define DS_MAX_RANK 5
#define DS_NAME_CAP 256
/* Bytes the readers keep per sample (its length, here and in the results,
 * its rho and a sorted copy of the lengths) and per (layer, head) (the
 * results and one block's counts): what mk_dataset_measure and
 * mk_attn_summary_dataset allocate besides their own accumulators. */
#define DS_PER_SAMPLE 32
#define DS_PER_HEAD 64

struct mk_dataset {
	hid_t file, dset, mtype;
	mk_dataset_info info;
	char path[1024], name[DS_NAME_CAP], lengths_name[DS_NAME_CAP];
	int axis_s, axis_l, axis_h;  /* position of each leading axis, -1 when absent */
	hsize_t dims[DS_MAX_RANK];
	uint64_t used;               /* bytes the readers keep, chunk cache included */
	bool reused;                 /* filtered chunks that span several blocks */
	bool half;                   /* IEEE float16, read as such and converted here */
	size_t msize, fsize;         /* bytes per element in memory, in the file */
	int64_t *lengths;
	uint8_t *raw;                /* heads x n x n elements of msize bytes */
	uint8_t *m;                  /* masks: 0/1 */
	hid_t dxpl;                  /* transfer properties: MPI-IO collective, or default */
	/* the ragged layout (dataset_ragged.c): [layers, T] with offsets */
	bool ragged;
	int64_t *offsets;            /* [samples + 1] */
	int64_t ragged_max;          /* elements in the largest block */
	/* in memory (dataset_mem.c): the caller's [samples, layers, heads, n, n]
	 * elements of fsize bytes, never written to; file and dset invalid */
	const uint8_t *mem;
};

/* What the readers keep, checked against max_memory before anything is
 * allocated (dataset.c): d->info's shape, d->msize and d->fsize set. */
int mk_ds_sizes(mk_dataset *d, uint64_t max_memory);
/* Block (sample, layer) of an in-memory data set copied into d->raw as
 * the file's reader leaves it: floats as float32, masks as their bytes. */
void mk_ds_mem_read(mk_dataset *d, int64_t sample, int64_t layer);

/* The ragged layout (maskkit encode --layout ragged): d->dset is a 2-D
 * float dataset [layers, T] whose attribute layout is "ragged".  Detects
 * it (false for any other dataset), then takes its shape: heads and n from
 * its attributes, samples from /offsets; MK_EFORMAT for a missing or bad
 * attribute, axes other than "slh" (MK_EINVAL), integer data. */
bool mk_ds_ragged_is(const mk_dataset *d);
int mk_ds_ragged_shape(mk_dataset *d, const char *axes);
/* Reads /offsets and checks them against the lengths and the data: 0 first,
 * each step heads len_i^2, the last T (MK_EFORMAT naming the first wrong one). */
int mk_ds_ragged_offsets(mk_dataset *d, uint64_t max_memory);
/* Sample's block, read into the start of d->raw as heads x len x len
 * (one stretch of a row: offsets[sample] .. offsets[sample + 1]), spread
 * in place to heads x n x n with zeros outside len x len. */
void mk_ds_ragged_spread(mk_dataset *d, int64_t sample);

/* float16 (dataset_ragged.c), which libhdf5 converts on a general path, 10
 * times slower than reading (a minute for encode's 1 GB of padded maps):
 * whether ftype is IEEE binary16 (sign bit 15, exponent bits 10..14 of bias
 * 15, fraction bits 0..9: numpy's float16), and count halves at the start
 * of raw turned into floats, from the last back (each float lands at or
 * past its half). */
bool mk_ds_is_half(hid_t ftype);
void mk_ds_halves(uint8_t *raw, uint64_t count);

#endif
