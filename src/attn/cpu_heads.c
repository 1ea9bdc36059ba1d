/* softmax's row pass over several slices (heads) of one shape at once.
 *
 * One slice after another, each parallel inside, the threads met at the
 * end of every slice: the last query tile of a slice left the others idle
 * (one item of 9 at n = 2048), and each slice's parallel regions woke
 * sleeping threads anew.  Here the work items of every slice form one
 * list, handed out in order: a thread that finishes a slice's last tile
 * goes on to the next slice's first.  Each slice's K and V are packed (and
 * its score bounds found) by the thread that takes the middle item of the
 * slice before it, into one of HEADS_SLOTS buffers, so that the packing
 * overlaps the computing and the packed memory stays that of two slices.
 * A block row split into pieces (a global row of a block mask) has its
 * pieces' states in the slice's set of HEADS_SLOTS and its counter in the
 * slice's copy, and the thread that finishes its last piece merges them: the block kernel one list too (one
 * by one, its regions' and merges' waits cost 15-50 % at n = 2048 with
 * OpenMP waiting passively, measured). */
#include "config.h"
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "cpu_rows.h"
#include "cpu_tiles.h"

#define HEADS_SLOTS 2

typedef struct heads_run {
	const mk_attn_slice *xs;
	tiles_pass *p;        /* per slice */
	float **bound;        /* per slice: its rows' score bounds, or NULL */
	int64_t count;
	tiles_work wk;        /* the items of one slice: alike in every slice */
	tiles_state part[HEADS_SLOTS]; /* split rows' pieces; [0] is wk's */
	float *buf;           /* HEADS_SLOTS packed K and V */
	size_t buf_bytes;
	int64_t slot;         /* floats per slot */
	atomic_llong *ready;  /* per slice: 1 once packed */
	atomic_llong *done;   /* per slice: items finished */
	atomic_int fail;      /* out of memory somewhere */
	mk_progress_fn progress; /* hears of the finished slices, in order */
	void *parg;
	int64_t front;        /* slices [0, front) finished and reported */
} heads_run;

/* Waits (yielding: a waiting thread may share a core with the one it waits
 * for) until *count reaches want. */
static void heads_wait(atomic_llong *count, long long want)
{
	while (atomic_load_explicit(count, memory_order_acquire) < want)
		sched_yield();
}

/* Slice h's bounds (none when out of memory: the running maximum is then
 * used, as for scores too large to bound) and its packed K and V, by the
 * calling thread, into slot h % HEADS_SLOTS. */
static void heads_pack(heads_run *r, int64_t h)
{
	tiles_pass *p = &r->p[h];
	bool ok = false;

	r->bound[h] = mk_tiles_bounds(&r->xs[h], &ok);
	p->shift = ok ? r->bound[h] : NULL;
	if (!p->uk)
		return;
	p->packed = r->buf + (h % HEADS_SLOTS) * r->slot;
	p->vpacked = p->packed + p->ntb * p->pstride;
	for (int64_t k = 0; k < p->ntb; k++)
		mk_tiles_pack_block(p, k);
	if (p->uk->bf16 && !(p->abf = mk_tiles_round_a(p)))
		atomic_store(&r->fail, 1);
}

/* Reports the slices finished from the front on (a slice's o is final
 * once its last item is done), one thread at a time. */
static void heads_report(heads_run *r)
{
	int64_t nitems = r->wk.nitems;

#pragma omp critical(mk_heads_report)
	{
		int64_t front = r->front;
		while (front < r->count &&
		       atomic_load_explicit(&r->done[front], memory_order_acquire) == nitems)
			front++;
		if (front > r->front && !atomic_load(&r->fail))
			r->progress(front, r->count, r->parg);
		r->front = front;
	}
}

/* Item k of the list: item k % nitems of slice k / nitems.  The taker of a
 * slice's middle item packs the next slice, once the slice before (whose
 * slot it takes) is finished; the items of a slice wait for its packing.
 * The last piece of a split row to finish merges the row. */
static void heads_item(heads_run *r, tiles_scratch *w, bool ok, int64_t k)
{
	int64_t nitems = r->wk.nitems, h = k / nitems, i = k % nitems;
	const tiles_item *it = &r->wk.items[i];
	tiles_work wk = r->wk;

	if (i == nitems / 2 && h + 1 < r->count) {
		if (h >= 1)
			heads_wait(&r->done[h - 1], nitems);
		heads_pack(r, h + 1);
		atomic_store_explicit(&r->ready[h + 1], 1, memory_order_release);
	}
	heads_wait(&r->ready[h], 1);
	ok = ok && !atomic_load_explicit(&r->fail, memory_order_relaxed);
	wk.part = r->part[h % HEADS_SLOTS];
	if (ok)
		mk_tiles_item_run(&r->p[h], w, &wk, it);
	/* fail read again: a piece skipped on another thread (it set or saw
	 * fail before its count) left its state unwritten */
	if (mk_tiles_piece_done(it, &wk, wk.pieces + h * wk.nsplit) && ok &&
	    !atomic_load_explicit(&r->fail, memory_order_acquire))
		mk_tiles_merge(&r->p[h], &wk, it->split);
	if (atomic_fetch_add_explicit(&r->done[h], 1, memory_order_acq_rel) + 1 == nitems &&
	    r->progress)
		heads_report(r);
}

/* The list, every thread; slice 0 packed first by all of them. */
static void heads_loop(heads_run *r)
{
#pragma omp parallel
	{
		tiles_scratch w;
		bool ok = mk_tiles_scratch_new(&r->p[0], &w);
		if (!ok)
			atomic_store(&r->fail, 1);
#pragma omp single nowait
		{
			bool usable = false;
			r->bound[0] = mk_tiles_bounds(&r->xs[0], &usable);
			r->p[0].shift = usable ? r->bound[0] : NULL;
		}
#pragma omp for schedule(static)
		for (int64_t k = 0; k < (r->p[0].uk ? r->p[0].ntb : 0); k++)
			mk_tiles_pack_block(&r->p[0], k);
#pragma omp single
		if (r->p[0].uk && r->p[0].uk->bf16 && !(r->p[0].abf = mk_tiles_round_a(&r->p[0])))
			atomic_store(&r->fail, 1);
		/* in order: an item waits only for earlier ones (OpenMP 5 lets a
		 * plain dynamic schedule hand items out of order) */
#pragma omp for schedule(monotonic : dynamic)
		for (int64_t k = 0; k < r->count * r->wk.nitems; k++)
			heads_item(r, &w, ok, k);
		mk_tiles_scratch_release(&w);
	}
}

static void heads_release(heads_run *r)
{
	for (int64_t h = 0; r->p && h < r->count; h++)
		free(r->p[h].abf);
	for (int64_t h = 0; r->bound && h < r->count; h++)
		free(r->bound[h]);
	mk_huge_give(r->buf, r->buf_bytes);
	for (int s = 1; s < HEADS_SLOTS; s++) {
		free(r->part[s].m);
		free(r->part[s].l);
		free(r->part[s].o);
	}
	mk_tiles_work_release(&r->wk);
	free(r->p);
	free(r->bound);
	free(r->ready);
	free(r->done);
}

/* The other sets of split rows' states, like wk's. */
static int heads_parts(heads_run *r)
{
	size_t rows = (size_t)(r->wk.nslots * r->p[0].ta), d = (size_t)r->xs[0].d;
	bool o = r->p[0].o != NULL, ok = true;

	r->part[0] = r->wk.part;
	if (r->wk.nslots == 0)
		return MK_OK; /* no split row */
	for (int s = 1; s < HEADS_SLOTS; s++) {
		r->part[s].m = malloc(rows * sizeof *r->part[s].m);
		r->part[s].l = malloc(rows * sizeof *r->part[s].l);
		r->part[s].o = o ? malloc(rows * d * sizeof *r->part[s].o) : NULL;
		ok = ok && r->part[s].m && r->part[s].l && (!o || r->part[s].o);
	}
	if (!ok)
		return mk_error_set(MK_ENOMEM, "out of memory for %lld split attention rows",
				    (long long)r->wk.nsplit);
	return MK_OK;
}

/* The passes of every slice, and the buffers. */
static int heads_prepare(heads_run *r, float *lse)
{
	int ret;

	r->p = calloc((size_t)r->count, sizeof *r->p);
	r->bound = calloc((size_t)r->count, sizeof *r->bound);
	r->ready = calloc((size_t)r->count, sizeof *r->ready);
	r->done = calloc((size_t)r->count, sizeof *r->done);
	if (!r->p || !r->bound || !r->ready || !r->done)
		return mk_error_set(MK_ENOMEM, "out of memory for %lld attention slices",
				    (long long)r->count);
	for (int64_t h = 0; h < r->count; h++) {
		if ((ret = mk_tiles_setup(&r->xs[h], false, &r->p[h])))
			return ret;
		mk_tiles_row_fields(&r->p[h], NULL, lse + h * r->xs[h].n, true);
		atomic_init(&r->ready[h], h == 0);
		atomic_init(&r->done[h], 0);
	}
	if ((ret = mk_tiles_work_new(&r->p[0], r->count, &r->wk)) || (ret = heads_parts(r)))
		return ret;
	if (!r->p[0].uk)
		return MK_OK;
	r->slot = mk_tiles_packed_floats(&r->p[0]);
	for (int64_t h = 1; h < r->count; h++)
		r->p[h].pstride = r->p[0].pstride;
	r->buf = mk_huge_take((size_t)(HEADS_SLOTS * r->slot) * sizeof *r->buf, &r->buf_bytes);
	if (!r->buf)
		return mk_error_set(MK_ENOMEM, "out of memory for %lld packed keys",
				    (long long)(HEADS_SLOTS * r->p[0].nb));
	r->p[0].packed = r->buf;
	r->p[0].vpacked = r->buf + r->p[0].ntb * r->p[0].pstride;
	return MK_OK;
}

int mk_cpu_tiles_softmax_slices(const mk_attn_slice *xs, int64_t count, float *lse,
				mk_progress_fn progress, void *parg)
{
	heads_run r = {.xs = xs, .count = count, .progress = progress, .parg = parg};
	int ret;

	atomic_init(&r.fail, 0);
	ret = count > 1 ? heads_prepare(&r, lse) : 1;
	if (ret == MK_OK) {
		heads_loop(&r);
		if (atomic_load(&r.fail))
			ret = mk_error_set(MK_ENOMEM, "out of memory for attention tile buffers");
	}
	heads_release(&r);
	if (ret <= 0)
		return ret;
	ret = MK_OK;
	for (int64_t h = 0; h < count && ret == MK_OK; h++) { /* one by one */
		ret = mk_cpu_tiles_row_pass(&xs[h], NULL, lse + h * xs[h].n, true);
		if (ret == MK_OK && progress)
			progress(h + 1, count, parg);
	}
	return ret;
}
