/* The tiled kernels' shared state (cpu_tiles.c computes the items,
 * cpu_tiles_run.c plans them and runs the passes); private to src/attn. */
#ifndef MK_CPU_TILES_H
#define MK_CPU_TILES_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include "attn_internal.h"
#include "cpu_ukernel.h"

typedef struct tiles_pass {
	const mk_attn_slice *x;
	const float *a, *b;  /* rows reduced and the other side, na x d and nb x d */
	int64_t na, nb;      /* queries and keys for the row pass, keys and queries else */
	const float *bias;   /* per b row, or NULL */
	const float *shift;  /* per a row, an upper bound of its scores (softmax's row
			      * pass), or NULL: exponentials are taken from it, fixed */
	float *lse;          /* per a row */
	const float *v;      /* row pass with V: o = P v, else NULL */
	float *o;
	bool transposed;     /* column pass: cell (a, b) is mask bit (b, a) */
	bool mask_all;       /* masked kernel: the mask tested in every block */
	const int64_t *ptr, *idx; /* block kernel's tile lists, else NULL */
	const uint8_t *full;
	int64_t ta, tb;      /* rows per a tile, per b block */
	int64_t nta, ntb;    /* a tiles, b blocks */
	int64_t group, tw;   /* blocks per score block, its width */
	const mk_uk *uk;     /* the micro-kernels, or NULL: cblas_sgemm */
	float *packed;       /* with uk: the b blocks packed and scaled, and the v */
	float *vpacked;      /* blocks packed (or NULL), pstride floats apart */
	int64_t pstride;
	uint32_t *abf;       /* bf16 levels: the a rows rounded once, in pairs, */
	int64_t apairs;      /* apairs a row, mr zero rows past the last */
} tiles_pass;

/* One a tile's blocks t0 .. t1-1 (positions in its list); slot < 0 writes
 * lse and o directly, else the partial state goes to slot, a piece of split
 * row `split` (an index into tiles_work's split lists). */
typedef struct tiles_item {
	int64_t r, t0, t1, slot, split;
} tiles_item;

typedef struct tiles_state {
	float *m;  /* running max per row */
	double *l; /* running sum per row, relative to m */
	float *o;  /* rows x d, or NULL */
} tiles_state;

typedef struct tiles_scratch {
	float *s, *nb, *m;
	double *l;
	float *bp, *vp;  /* b and v rows of a group, when not contiguous */
	float *zero, *sink; /* the micro-kernels' missing rows */
	int64_t *j0, *width;
	bool *test;
	uint64_t *live;  /* per block of a group: the key panels the strip has entries in */
} tiles_scratch;

typedef struct tiles_work {
	tiles_item *items;
	int64_t nitems, nslots;
	int64_t *split;      /* a tiles that were split, with first slots */
	int64_t *split_slot; /* nsplit + 1 entries */
	int64_t nsplit;
	tiles_state part;    /* nslots * ta rows */
	atomic_int *pieces;  /* copies * nsplit: finished pieces per split row */
} tiles_work;

static inline int64_t tiles_min(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* Runs one work item: its tile's blocks t0 .. t1-1, finished (lse and o
 * written) or, for a piece of a split tile, into its slot. */
void mk_tiles_item_run(const tiles_pass *p, tiles_scratch *w, tiles_work *wk,
		       const tiles_item *it);
/* Merges the pieces of split tile k into its lse and o. */
void mk_tiles_merge(const tiles_pass *p, const tiles_work *wk, int64_t k);
/* Counts item it as finished in pieces (wk->pieces, or a copy's); true when
 * it was the last piece of its split row to finish: the row's merge is then
 * the caller's (with acquire-release ordering, every piece's state is
 * visible to it).  False for an item of an unsplit row. */
bool mk_tiles_piece_done(const tiles_item *it, const tiles_work *wk, atomic_int *pieces);

/* cpu_tiles_run.c's pieces, shared with the several-slice softmax
 * (cpu_heads.c): the geometry of a pass over slice x (cols: the column
 * pass); the row pass's operands (g the column scaling or NULL, f its lse);
 * the work items and a thread's scratch; the floats of a pass's packed K
 * and V (setting p->pstride) and the packing of key block k into
 * p->packed, p->vpacked; the bf16 levels' rounded rows. */
int mk_tiles_setup(const mk_attn_slice *x, bool cols, tiles_pass *p);
void mk_tiles_row_fields(tiles_pass *p, const float *g, float *f, bool with_v);
int mk_tiles_work_new(const tiles_pass *p, int64_t copies, tiles_work *wk);
void mk_tiles_work_release(tiles_work *wk);
bool mk_tiles_scratch_new(const tiles_pass *p, tiles_scratch *w);
void mk_tiles_scratch_release(tiles_scratch *w);
int64_t mk_tiles_packed_floats(tiles_pass *p);
void mk_tiles_pack_block(const tiles_pass *p, int64_t k);
uint32_t *mk_tiles_round_a(tiles_pass *p);

#endif
