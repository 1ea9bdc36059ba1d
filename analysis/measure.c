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
#include "result.h"

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
	int64_t off; /* query i is key position i + off: kv - n bottom-right, 0 top-left */
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
	j.off = mk_expr_align(e) == MK_ALIGN_TOP_LEFT ? 0 : j.kv - j.n;
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
	out->align = mk_expr_align(e);
	out->symmetric_known = j.check_sym || mk_expr_known_symmetric(e) || j.n != j.kv;
	if (!out->symmetric_known || j.n != j.kv)
		out->symmetric = false;
	return MK_OK;
}

int mk_measure_mask(const mk_expr *e, const int64_t *blocks, size_t ntiles,
		    mk_progress_fn progress, void *parg, mk_mask_measure *out)
{
	int ret;

	memset(out, 0, sizeof *out);
	if ((ret = mk_measure_expr(e, blocks, ntiles, progress, parg, &out->m)))
		return ret;
	out->tiles = out->m.tiles;
	out->align = out->m.n != out->m.kv_len ? mk_align_name(out->m.align) : NULL;
	out->ntiles = (int64_t)out->m.ntiles;
	out->expr = strdup(mk_expr_text(e));
	out->params = strdup(mk_expr_params(e));
	if (!out->expr || !out->params) {
		mk_mask_measure_release(out);
		return mk_error_set(MK_ENOMEM, "out of memory");
	}
	return MK_OK;
}

void mk_mask_measure_release(mk_mask_measure *m)
{
	if (!m)
		return;
	free(m->expr);
	free(m->params);
	memset(m, 0, sizeof *m);
}

int mk_mask_summarize(const mk_expr *e, uint64_t seed, mk_progress_fn progress, void *parg,
		      mk_mask_summary *out)
{
	mk_measure m;
	int ret = mk_measure_expr(e, NULL, 0, progress, parg, &m);

	memset(out, 0, sizeof *out);
	if (ret)
		return ret;
	*out = (mk_mask_summary){.expr = mk_expr_text(e), .params = mk_expr_params(e), .n = m.n,
				 .kv_len = m.kv_len, .seed = seed, .count = m.count,
				 .sparsity = m.sparsity};
	if (m.n != m.kv_len)
		out->align = mk_align_name(m.align);
	return MK_OK;
}

/* ---- the results, described once ------------------------------------------ */

static void meas_show_n(const void *rec, char *buf, size_t cap)
{
	const mk_measure *m = &((const mk_mask_measure *)rec)->m;

	if (m->kv_len == m->n)
		snprintf(buf, cap, "%" PRId64, m->n);
	else
		snprintf(buf, cap, "%" PRId64 " x %" PRId64 " (q_len x kv_len, %s)", m->n, m->kv_len,
			 mk_align_name(m->align));
}

static void meas_show_count(const void *rec, char *buf, size_t cap)
{
	const mk_measure *m = &((const mk_mask_measure *)rec)->m;
	snprintf(buf, cap, "%" PRIu64 " of %" PRIu64 " cells", m->count,
		 (uint64_t)m->n * (uint64_t)m->kv_len);
}

static void meas_show_diag(const void *rec, char *buf, size_t cap)
{
	const mk_measure *m = &((const mk_mask_measure *)rec)->m;
	snprintf(buf, cap, "%" PRIu64 " of %" PRId64 " cells set", m->diag,
		 m->n < m->kv_len ? m->n : m->kv_len);
}

static void meas_show_rows(const void *rec, char *buf, size_t cap)
{
	const mk_measure *m = &((const mk_mask_measure *)rec)->m;
	snprintf(buf, cap, "min %" PRId64 ", mean %.3f, max %" PRId64, m->row_min, m->row_mean,
		 m->row_max);
}

static void meas_show_empty(const void *rec, char *buf, size_t cap)
{
	const mk_measure *m = &((const mk_mask_measure *)rec)->m;

	if (m->empty_rows)
		snprintf(buf, cap, "%" PRId64 " (first: row %" PRId64 "; softmax is undefined "
			 "there)", m->empty_rows, m->first_empty_row);
	else
		snprintf(buf, cap, "0");
}

/* A table has one column for every tile size: "16:0.3438 128:0.5625". */
static void meas_show_density(const void *rec, char *buf, size_t cap)
{
	const mk_mask_measure *r = rec;
	size_t used = 0;

	buf[0] = '\0';
	for (int64_t k = 0; k < r->ntiles && used < cap; k++) {
		int w = snprintf(buf + used, cap - used, "%s%" PRId64 ":%.4f", k ? " " : "",
				 r->tiles[k].block, r->tiles[k].density);
		used += w > 0 ? (size_t)w : 0;
	}
}

static const mk_field meas_tile_fields[] = {
	{MK_FIELD(mk_tile_stats, block, "block", MK_FT_I64), .label = "B",
	 .help = "tile size: B x B tiles"},
	{MK_FIELD(mk_tile_stats, tiles, "tiles", MK_FT_U64), .help = "tiles in the mask"},
	{MK_FIELD(mk_tile_stats, nonempty, "nonempty", MK_FT_U64), .label = "non-empty",
	 .help = "tiles with a set cell"},
	{MK_FIELD(mk_tile_stats, full, "full", MK_FT_U64), .help = "tiles with every cell set"},
	{MK_FIELD(mk_tile_stats, density, "density", MK_FT_REAL), .fmt = "%.4f",
	 .help = "nonempty / tiles"},
	{MK_FIELD(mk_tile_stats, effective_sparsity, "effective_sparsity", MK_FT_REAL),
	 .label = "effective sparsity", .fmt = "%.6f",
	 .help = "1 - cells of the non-empty tiles / cells: a block-sparse kernel's"},
};
const mk_record mk_tile_stats_record = MK_RECORD("tiles", mk_tile_stats, meas_tile_fields);

static const mk_field meas_row_fields[] = {
	{MK_FIELD(mk_measure, row_min, "min", MK_FT_I64), .help = "fewest keys of a row"},
	{MK_FIELD(mk_measure, row_mean, "mean", MK_FT_REAL), .help = "mean keys per row"},
	{MK_FIELD(mk_measure, row_max, "max", MK_FT_I64), .help = "most keys of a row"},
	{MK_FIELD(mk_measure, empty_rows, "empty", MK_FT_I64),
	 .help = "rows with no key (softmax is undefined there)"},
	{MK_FIELD(mk_measure, first_empty_row, "first_empty", MK_FT_I64),
	 .help = "the first empty row, or -1"},
};
static const mk_record meas_row_record = MK_RECORD("rows", mk_measure, meas_row_fields);

static const mk_field meas_fields[] = {
	{MK_FIELD(mk_mask_measure, expr, "expr", MK_FT_STR), .label = "expression"},
	{MK_FIELD(mk_mask_measure, params, "params", MK_FT_STR), .label = "parameters",
	 .flags = MK_FF_NOTABLE},
	{MK_FIELD(mk_mask_measure, m.n, "n", MK_FT_I64), .show = meas_show_n},
	{MK_FIELD(mk_mask_measure, m.kv_len, "kv_len", MK_FT_I64), .flags = MK_FF_NOTEXT,
	 .help = "keys (columns; n when square)"},
	{MK_FIELD(mk_mask_measure, align, "align", MK_FT_STR), .flags = MK_FF_OMIT | MK_FF_NOTEXT,
	 .help = "where the queries sit among the keys: bottom-right or top-left (rectangular "
		 "masks only)"},
	{MK_FIELD(mk_mask_measure, m.count, "count", MK_FT_U64), .label = "|M|",
	 .flags = MK_FF_NOTABLE, .show = meas_show_count},
	{MK_FIELD(mk_mask_measure, m.count, "|M|", MK_FT_U64), .flags = MK_FF_TEXT | MK_FF_NOLINE},
	{MK_FIELD(mk_mask_measure, m.sparsity, "sparsity", MK_FT_REAL), .fmt = "%.6f",
	 .help = "1 - |M|/(q_len kv_len)"},
	{MK_FIELD(mk_mask_measure, m.sparsity_nodiag, "sparsity_nodiag", MK_FT_REAL),
	 .label = "w/o diag", .fmt = "%.6f", .help = "1 - |M \\ I|/(q_len kv_len)"},
	{MK_FIELD(mk_mask_measure, m.diag, "diagonal", MK_FT_U64), .flags = MK_FF_NOTABLE,
	 .show = meas_show_diag},
	{MK_FIELD(mk_mask_measure, m, "rows", MK_FT_OBJ), .sub = &meas_row_record,
	 .flags = MK_FF_NOTEXT, .help = "keys per row"},
	{MK_FIELD(mk_mask_measure, m.row_min, "keys_per_row", MK_FT_I64),
	 .label = "keys per row", .flags = MK_FF_TEXT | MK_FF_NOTABLE, .show = meas_show_rows},
	{MK_FIELD(mk_mask_measure, m.empty_rows, "empty_rows", MK_FT_I64), .label = "empty rows",
	 .flags = MK_FF_TEXT | MK_FF_NOTABLE, .show = meas_show_empty},
	{MK_FIELD(mk_mask_measure, m.empty_rows, "empty", MK_FT_I64),
	 .flags = MK_FF_TEXT | MK_FF_NOLINE},
	{MK_FIELD(mk_mask_measure, m.symmetric, "symmetric", MK_FT_BOOL), .flags = MK_FF_NOTABLE},
	{MK_FIELD(mk_mask_measure, m.causal, "causal", MK_FT_BOOL), .flags = MK_FF_NOTABLE},
	{MK_FIELD(mk_mask_measure, m.toeplitz, "toeplitz", MK_FT_BOOL), .flags = MK_FF_NOTABLE,
	 .help = "M[i][j] = M[i+1][j+1]"},
	{MK_FIELD(mk_mask_measure, tiles, "tiles", MK_FT_LIST), .sub = &mk_tile_stats_record,
	 .count_offset = offsetof(mk_mask_measure, ntiles), .help = "per tile size"},
	{MK_FIELD(mk_mask_measure, ntiles, "tile_density", MK_FT_I64), .label = "tiles (B:density)",
	 .flags = MK_FF_TEXT | MK_FF_NOLINE, .show = meas_show_density},
};
const mk_record mk_mask_measure_record = MK_RECORD("measure", mk_mask_measure, meas_fields);

static bool summ_rect(const void *rec)
{
	const mk_mask_summary *s = rec;
	return s->kv_len != s->n;
}

static const mk_field summ_fields[] = {
	{MK_FIELD(mk_mask_summary, expr, "expr", MK_FT_STR), .label = "expression"},
	{MK_FIELD(mk_mask_summary, params, "params", MK_FT_STR), .label = "parameters"},
	{MK_FIELD(mk_mask_summary, n, "n", MK_FT_I64)},
	{MK_FIELD(mk_mask_summary, kv_len, "kv_len", MK_FT_I64), .flags = MK_FF_OMIT,
	 .present = summ_rect, .help = "keys, when not n"},
	{MK_FIELD(mk_mask_summary, align, "align", MK_FT_STR), .flags = MK_FF_OMIT,
	 .help = "bottom-right or top-left, when not square"},
	{MK_FIELD(mk_mask_summary, seed, "seed", MK_FT_U64), .flags = MK_FF_EXACT},
	{MK_FIELD(mk_mask_summary, count, "count", MK_FT_U64), .label = "|M|"},
	{MK_FIELD(mk_mask_summary, sparsity, "sparsity", MK_FT_REAL), .fmt = "%.6f"},
	{MK_FIELD(mk_mask_summary, output, "output", MK_FT_STR)},
	{MK_FIELD(mk_mask_summary, format, "format", MK_FT_STR)},
};
const mk_record mk_mask_summary_record = MK_RECORD("mask", mk_mask_summary, summ_fields);
