/*
 * Streaming measurement of a mask expression: counts, sparsity, per-row
 * statistics, structure flags and tile densities, in O(n) memory per thread.
 * Rows are split into chunks aligned to every tile size, so each thread
 * closes its own block-rows of tiles and the partial results just add up.
 */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "core.h"
#include "mask.h"
#include "expr.h"
#include "measure.h"
#include "structure.h"

typedef struct mk_partial {
	uint64_t count, diag;
	int64_t row_min, row_max, empty, first_empty;
	bool causal, toeplitz, symmetric;
	mk_tile_acc tiles[MK_MEASURE_MAX_TILES];
} mk_partial;

typedef struct mk_job {
	const mk_expr *e;
	int64_t n, chunk;
	int64_t kv;  /* columns: n for a square mask */
	int64_t off; /* kv - n: query i is key position i + off (bottom-right) */
	const int64_t *blocks;
	size_t ntiles;
	int from[MK_MEASURE_MAX_TILES]; /* tile size fed by a smaller one, or -1: by rows */
	size_t order[MK_MEASURE_MAX_TILES]; /* blocks (ascending) -> the caller's order */
	bool check_sym;
	volatile int stop_toeplitz, stop_sym; /* shared early exits */
} mk_job;

static int64_t mk_gcd(int64_t a, int64_t b)
{
	while (b) {
		int64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

/* Chunks are multiples of every tile size, and large enough to amortise. */
static int64_t mk_chunk_size(int64_t n, const int64_t *blocks, size_t nt, int threads)
{
	int64_t l = 1, want;
	for (size_t k = 0; k < nt; k++) {
		l = l / mk_gcd(l, blocks[k]) * blocks[k];
		if (l >= n)
			return n;
	}
	want = n / ((int64_t)threads * 16);
	if (want < 256)
		want = 256;
	want = (want + l - 1) / l * l;
	return want < n ? want : n;
}

/* The row's count and whether it reaches past column d, the query's own
 * position (the causal test): counting around word d/64 tells it for free. */
static void mk_row_counts(const uint64_t *row, int64_t n, int64_t d, int64_t *cnt, bool *past)
{
	int64_t nw = (int64_t)mk_words(n), wi;
	uint64_t after, mid;

	if (d < 0 || d >= n) {
		*cnt = (int64_t)mk_bits_count(row, (size_t)nw);
		*past = d < 0 && *cnt > 0;
		return;
	}
	wi = d >> 6;
	after = mk_bits_count(row + wi + 1, (size_t)(nw - wi - 1));
	mid = row[wi];
	*cnt = (int64_t)(mk_bits_count(row, (size_t)wi) + after) + __builtin_popcountll(mid);
	*past = after || (mid >> (d & 63)) >> 1;
}

static void mk_partial_row(mk_partial *p, mk_job *j, int64_t i, const uint64_t *row,
			   const uint64_t *prev, uint64_t *col, mk_cursor *c)
{
	int64_t n = j->kv, d = i + j->off, cnt;
	bool past;
	mk_row_counts(row, n, d, &cnt, &past);
	p->count += (uint64_t)cnt;
	p->diag += d >= 0 && d < n && mk_bit_test(row, d);
	if (cnt < p->row_min)
		p->row_min = cnt;
	if (cnt > p->row_max)
		p->row_max = cnt;
	if (cnt == 0 && p->empty++ == 0)
		p->first_empty = i;
	if (past)
		p->causal = false;
	if (prev && p->toeplitz && !j->stop_toeplitz && !mk_rows_toeplitz(prev, row, n)) {
		p->toeplitz = false;
		j->stop_toeplitz = 1;
	}
	if (j->check_sym && !j->stop_sym) {
		if (mk_cursor_col(c, i, col) != MK_OK || memcmp(col, row, mk_words(n) * sizeof *row) != 0) {
			p->symmetric = false;
			j->stop_sym = 1;
		}
	}
	for (size_t k = 0; k < j->ntiles; k++) {
		mk_tile_acc *a = &p->tiles[k], *src;
		if (j->from[k] < 0) {
			mk_tile_acc_merge(a, i, i, row, row);
			continue;
		}
		src = &p->tiles[j->from[k]];
		if (src->closed) /* from[k] < k: src already saw row i */
			mk_tile_acc_merge(a, src->start, i, src->any, src->all_zero ? NULL : src->all);
	}
}

/* Orders the tile sizes' feeding: each size takes the largest smaller size
 * that divides it, if any (processed first since the sort is ascending). */
static void mk_plan_tiles(mk_job *j, int64_t *sorted)
{
	for (size_t k = 0; k < j->ntiles; k++) {
		j->from[k] = -1;
		for (size_t q = 0; q < k; q++)
			if (sorted[q] < sorted[k] && sorted[k] % sorted[q] == 0)
				j->from[k] = (int)q;
	}
}

static int mk_partial_init(mk_partial *p, const mk_job *j)
{
	memset(p, 0, sizeof *p);
	p->row_min = INT64_MAX;
	p->first_empty = -1;
	p->causal = p->toeplitz = p->symmetric = true;
	for (size_t k = 0; k < j->ntiles; k++)
		if (mk_tile_acc_init(&p->tiles[k], j->blocks[k], j->n, j->kv))
			return MK_ENOMEM;
	return MK_OK;
}

static void mk_partial_merge(mk_partial *into, const mk_partial *p, size_t ntiles)
{
	into->count += p->count;
	into->diag += p->diag;
	if (p->row_min < into->row_min)
		into->row_min = p->row_min;
	if (p->row_max > into->row_max)
		into->row_max = p->row_max;
	if (p->empty && (into->first_empty < 0 || p->first_empty < into->first_empty))
		into->first_empty = p->first_empty;
	into->empty += p->empty;
	into->causal &= p->causal;
	into->toeplitz &= p->toeplitz;
	into->symmetric &= p->symmetric;
	for (size_t k = 0; k < ntiles; k++) {
		into->tiles[k].nonempty += p->tiles[k].nonempty;
		into->tiles[k].full += p->tiles[k].full;
		into->tiles[k].cells += p->tiles[k].cells;
	}
}

static void mk_run_chunk(mk_job *j, mk_partial *p, mk_cursor *c, uint64_t *buf[3], int64_t r0)
{
	int64_t r1 = r0 + j->chunk < j->n ? r0 + j->chunk : j->n;
	uint64_t *prev = buf[0], *row = buf[1], *t;
	bool have_prev = false;
	if (r0 > 0 && !j->stop_toeplitz) {
		mk_cursor_row(c, r0 - 1, prev);
		have_prev = true;
	}
	for (int64_t i = r0; i < r1; i++) {
		mk_cursor_row(c, i, row);
		mk_partial_row(p, j, i, row, have_prev ? prev : NULL, buf[2], c);
		t = prev, prev = row, row = t;
		have_prev = true;
	}
}

/* A team costs a fork, a join and a cursor per thread: a small mask (a
 * dataset measures one at each of its lengths) is faster on one thread, and
 * on a loaded machine a join can wait for a whole time slice. */
static int mk_measure_team(int64_t n, int64_t kv, int64_t nchunks)
{
	int64_t t = 1, cells = n * kv, per = (int64_t)1 << 22;

#ifdef _OPENMP
	t = omp_get_max_threads();
#endif
	if (t > nchunks)
		t = nchunks;
	if (t > cells / per)
		t = cells / per;
	return t > 1 ? (int)t : 1;
}

static int mk_measure_run(mk_job *j, mk_partial *total, mk_progress_fn progress, void *parg)
{
	int64_t nchunks = (j->n + j->chunk - 1) / j->chunk, done = 0;
	int fail = MK_OK, team = mk_measure_team(j->n, j->kv, nchunks);
#pragma omp parallel num_threads(team)
	{
		mk_partial p;
		mk_cursor *c = NULL;
		size_t nw = mk_words(j->n > j->kv ? j->n : j->kv); /* a row or a column */
		uint64_t *mem = malloc(3 * nw * sizeof *mem);
		uint64_t *buf[3] = {mem, mem + nw, mem + 2 * nw};
		int r = mk_partial_init(&p, j);
		if (!r)
			r = mk_cursor_new(j->e, &c);
		if (!mem)
			r = MK_ENOMEM;
		if (r) {
#pragma omp atomic write
			fail = r;
		}
#pragma omp for schedule(dynamic, 1)
		for (int64_t k = 0; k < nchunks; k++) {
			if (r)
				continue;
			mk_run_chunk(j, &p, c, buf, k * j->chunk);
#pragma omp atomic
			done++;
#ifdef _OPENMP
			if (progress && omp_get_thread_num() == 0)
#else
			if (progress)
#endif
				progress(done * j->chunk < j->n ? done * j->chunk : j->n - 1, j->n, parg);
		}
#pragma omp critical
		if (!r)
			mk_partial_merge(total, &p, j->ntiles);
		for (size_t k = 0; k < j->ntiles; k++)
			mk_tile_acc_release(&p.tiles[k]);
		mk_cursor_free(c);
		free(mem);
	}
	if (fail)
		return mk_error_set(fail, "out of memory for row buffers");
	if (progress)
		progress(j->n, j->n, parg);
	return MK_OK;
}

static void mk_measure_fill(const mk_job *j, const mk_partial *t, mk_measure *out)
{
	double n2 = (double)j->n * (double)j->kv;
	memset(out, 0, sizeof *out);
	out->n = j->n;
	out->kv_len = j->kv;
	out->count = t->count;
	out->diag = t->diag;
	out->sparsity = 1.0 - (double)t->count / n2;
	out->sparsity_nodiag = 1.0 - (double)(t->count - t->diag) / n2;
	out->row_min = t->row_min;
	out->row_max = t->row_max;
	out->row_mean = (double)t->count / (double)j->n;
	out->empty_rows = t->empty;
	out->first_empty_row = t->first_empty;
	out->causal = t->causal;
	out->toeplitz = t->toeplitz;
	out->symmetric = t->symmetric;
	out->ntiles = j->ntiles;
	for (size_t k = 0; k < j->ntiles; k++) {
		mk_tile_stats *s = &out->tiles[j->order[k]];
		uint64_t nb = (uint64_t)((j->n + j->blocks[k] - 1) / j->blocks[k]);
		uint64_t nb_kv = (uint64_t)((j->kv + j->blocks[k] - 1) / j->blocks[k]);
		s->block = j->blocks[k];
		s->tiles = nb * nb_kv;
		s->nonempty = t->tiles[k].nonempty;
		s->full = t->tiles[k].full;
		s->cells_in_nonempty = t->tiles[k].cells;
		s->density = (double)s->nonempty / (double)s->tiles;
		s->effective_sparsity = 1.0 - (double)s->cells_in_nonempty / n2;
	}
}

int mk_measure_expr(const mk_expr *e, const int64_t *blocks, size_t ntiles,
		    mk_progress_fn progress, void *parg, mk_measure *out)
{
	mk_job j = {.e = e, .n = mk_expr_n(e), .kv = mk_expr_kv_len(e), .ntiles = ntiles};
	int64_t sorted[MK_MEASURE_MAX_TILES];
	mk_partial total;
	int threads = 1, ret;
	if (ntiles > MK_MEASURE_MAX_TILES)
		return mk_error_set(MK_EINVAL, "at most %d tile sizes", MK_MEASURE_MAX_TILES);
	for (size_t k = 0; k < ntiles; k++)
		if (blocks[k] < 1 || blocks[k] > MK_N_MAX)
			return mk_error_set(MK_EINVAL, "tile size must be between 1 and %" PRId64
					    ", got %" PRId64, MK_N_MAX, blocks[k]);
	for (size_t k = 0; k < ntiles; k++) { /* insertion sort, remembering the order */
		size_t q = k;
		for (; q > 0 && sorted[q - 1] > blocks[k]; q--) {
			sorted[q] = sorted[q - 1];
			j.order[q] = j.order[q - 1];
		}
		sorted[q] = blocks[k];
		j.order[q] = k;
	}
	j.off = j.kv - j.n;
	j.blocks = sorted;
	mk_plan_tiles(&j, sorted);
#ifdef _OPENMP
	threads = omp_get_max_threads();
#endif
	j.chunk = mk_chunk_size(j.n, blocks, ntiles, threads);
	/* a symmetric-by-construction expression needs no column pass, and a
	 * rectangular one cannot be symmetric */
	j.check_sym = !mk_expr_known_symmetric(e) && mk_expr_has_cols(e) && j.n == j.kv;
	memset(&total, 0, sizeof total);
	total.row_min = INT64_MAX;
	total.first_empty = -1;
	total.causal = total.toeplitz = total.symmetric = true;
	if ((ret = mk_measure_run(&j, &total, progress, parg)))
		return ret;
	mk_measure_fill(&j, &total, out);
	out->symmetric_known = j.check_sym || mk_expr_known_symmetric(e) || j.n != j.kv;
	if (!out->symmetric_known || j.n != j.kv)
		out->symmetric = false;
	return MK_OK;
}
