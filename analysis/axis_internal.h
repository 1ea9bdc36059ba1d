/* Private to the adaptive axis masks: the state shared by the counting and
 * writing side (axis.c) and the HDF5 side that opens and reads the
 * indicators (axis_h5.c). */
#ifndef MK_AXIS_INTERNAL_H
#define MK_AXIS_INTERNAL_H

#include "h5util.h"

#define AXIS_MAX_RANK 4
#define AXIS_NAME_CAP 256

/* One dataset of indicators, [samples, (layers, (heads,)) N]. */
typedef struct axis_ind {
	hid_t dset, mtype;
	size_t msize;
	bool is_float;
	char name[AXIS_NAME_CAP];
	mk_dtype dtype;
	void *raw;    /* one sample: blocks x n elements of msize bytes */
	uint8_t *bit; /* the same as 0/1 bytes */
} axis_ind;

typedef struct axis_pat {
	mk_expr *e;
	mk_cursor *cur;
} axis_pat;

typedef struct axis_src {
	const char *path;
	const mk_axis_opts *o;
	hid_t file;
	axis_ind ind[2]; /* rows, cols */
	int rank;
	hsize_t dims[AXIS_MAX_RANK];
	int64_t samples, layers, heads, n, blocks;
	uint64_t used; /* bytes reading the indicators keeps, chunk caches included */
	char lengths_name[AXIS_NAME_CAP];
	int64_t *lengths;
	axis_pat *pats;  /* [n + 1], bound on first use; NULL without a local pattern */
	uint64_t *colbits, *row; /* blocks x mk_words(n) words; mk_words(n) words */
} axis_src;

/* One block's cells (the AAA paper's B for one sample, layer and head). */
typedef struct mk_axis_cells {
	int64_t len;
	int64_t rows, cols;  /* row-wise / column-wise important tokens */
	uint64_t count;      /* |B|: the axis part OR the local pattern */
	uint64_t axis;       /* the axis part alone: (rows + cols) len - rows cols */
	uint64_t local;      /* the local pattern alone (0 without one) */
} mk_axis_cells;

/* Counts one block: rows and cols hold len bytes (nonzero: important);
 * local is an expression bound at n = len, or NULL for none (MK_EINVAL when
 * it is bound at another n).  O(len) memory: rows are bit-packed and
 * counted with popcount. */
int mk_axis_count(const uint8_t *rows, const uint8_t *cols, int64_t len, const mk_expr *local,
		  mk_axis_cells *out);


/* Whether o asks for a local pattern at all ("none" does not). */
bool mk_axis_has_local(const mk_axis_opts *o);

/* Empties s for path and o; mk_axis_src_close is then safe whatever
 * happens. */
void mk_axis_src_init(axis_src *s, const char *path, const mk_axis_opts *o);
/* Opens both indicator datasets, checks them, reads the lengths and
 * allocates one sample's buffers. */
int mk_axis_src_open(axis_src *s);
/* Reads sample's indicators into ind[k].raw and, as 0/1 bytes, ind[k].bit. */
int mk_axis_src_read(axis_src *s, int64_t sample);
/* Frees what mk_axis_src_init and mk_axis_src_open left in s. */
void mk_axis_src_close(axis_src *s);

#endif
