/* The CPU backend's tiled kernels: dense, masked and block.
 *
 * Both passes are one computation, lse_a = LSE_b (scale a.b - bias_b) over
 * the cells a kernel visits: the row pass reduces queries against keys (bias
 * g, optionally accumulating P V as flash attention does), the column pass
 * reduces keys against queries (bias f) through the layout's column view.
 * Work is a list of items, each a tile of reduced rows and a run of blocks
 * of the other side; score blocks come from sgemm, the online softmax keeps
 * a running max m and sum l per row, and the output is rescaled whenever m
 * grows.  A block row with many tiles (global tokens) is split into pieces
 * whose partial (m, l, o) states are merged afterwards, so that one long row
 * does not leave the other threads idle. */
#include "config.h"
#include <cblas.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cpu_rows.h"

#define MK_TILES_PARALLEL_WORK ((int64_t)1 << 20) /* n^2 d below which one thread runs */

/* dense and masked: 256 queries against 512 keys per score block (512 KiB,
 * in L2): sgemm's packing of K and V is shared by more queries and the
 * online softmax rescales less often (48 ms against 61 ms for 64 x 256 at
 * n = 2048, d = 64, 8 heads, 2 threads; measured) */
#define TILES_QUERY_TILE 256
#define TILES_KEY_BLOCK 512
#define TILES_GROUP_WIDTH 256 /* block: tiles go to sgemm this many keys at a time */
#define TILES_MIN_PIECE 8   /* a block row is split only above this many tiles */


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
} tiles_pass;

/* One a tile's blocks t0 .. t1-1 (positions in its list); slot < 0 writes
 * lse and o directly, else the partial state goes to slot. */
typedef struct tiles_item {
	int64_t r, t0, t1, slot;
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
	int64_t *j0, *width;
	bool *test;
} tiles_scratch;

typedef struct tiles_work {
	tiles_item *items;
	int64_t nitems, nslots;
	int64_t *split;      /* a tiles that were split, with first slots */
	int64_t *split_slot; /* nsplit + 1 entries */
	int64_t nsplit;
	tiles_state part;    /* nslots * ta rows */
} tiles_work;

static inline int64_t tiles_min(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* Sets the cells outside the element mask to -inf. */
static void tiles_apply_mask(const tiles_pass *p, float *s, int64_t i0, int64_t rows,
			     int64_t j0, int64_t cols)
{
	const mk_attn_layout *l = p->x->mask;

	if (!p->transposed) {
		for (int64_t ii = 0; ii < rows; ii++)
			mk_tiles_mask_row(s + ii * p->tw, l->bits + (size_t)(i0 + ii) * l->stride,
					  l->stride, j0, cols);
		return;
	}
	for (int64_t jj = 0; jj < cols; jj++) { /* b = query j0 + jj, a = key i0 + ii */
		const uint64_t *w = l->bits + (size_t)(j0 + jj) * l->stride;
		for (int64_t ii = 0; ii < rows; ii++) {
			int64_t i = i0 + ii;
			if (!((w[i >> 6] >> (i & 63)) & 1))
				s[ii * p->tw + jj] = -INFINITY;
		}
	}
}

static void tiles_neg_bias(const tiles_pass *p, float *nb, int64_t j0, int64_t cols)
{
	for (int64_t jj = 0; jj < cols; jj++) {
		float b = p->bias ? p->bias[j0 + jj] : 0.0f;
		/* -inf marks a row or column with no entry: its cells give nothing */
		nb[jj] = b == -INFINITY ? -INFINITY : -b;
	}
}

/* Block t of a tile's list: its first b row and whether to test the mask. */
static int64_t tiles_block_at(const tiles_pass *p, int64_t r, int64_t t, bool *test)
{
	if (!p->ptr) {
		*test = p->mask_all;
		return t * p->tb;
	}
	*test = !p->full[p->ptr[r] + t];
	return p->idx[p->ptr[r] + t] * p->tb;
}

/* Collects blocks t .. (at most p->group of them) into w; returns the end
 * and sets *cols to their total width. */
static int64_t tiles_gather(const tiles_pass *p, tiles_scratch *w, int64_t r, int64_t t,
			    int64_t t1, int64_t *cols)
{
	int64_t g = 0, c = 0;

	for (; t < t1 && g < p->group; t++, g++) {
		w->j0[g] = tiles_block_at(p, r, t, &w->test[g]);
		w->width[g] = tiles_min(p->tb, p->nb - w->j0[g]);
		c += w->width[g];
	}
	*cols = c;
	return t;
}

/* Points *b (and *v) at the group's rows: in place when the blocks are
 * adjacent, else copied together so that one sgemm covers the group. */
static void tiles_pack(const tiles_pass *p, tiles_scratch *w, int64_t ng, const float **b,
		       const float **v)
{
	int64_t d = p->x->d, off = 0;
	bool adjacent = true;

	for (int64_t g = 1; g < ng; g++)
		adjacent = adjacent && w->j0[g] == w->j0[g - 1] + w->width[g - 1];
	*b = p->b + w->j0[0] * d;
	*v = p->v ? p->v + w->j0[0] * d : NULL;
	if (adjacent)
		return;
	for (int64_t g = 0; g < ng; off += w->width[g], g++) {
		size_t bytes = (size_t)(w->width[g] * d) * sizeof(float);
		memcpy(w->bp + off * d, p->b + w->j0[g] * d, bytes);
		if (p->v)
			memcpy(w->vp + off * d, p->v + w->j0[g] * d, bytes);
	}
	*b = w->bp;
	*v = p->v ? w->vp : NULL;
}

/* One score block (the group of blocks t ..) into the running state;
 * returns the next block. */
static int64_t tiles_block(const tiles_pass *p, tiles_scratch *w, tiles_state *st, int64_t r,
			   int64_t t, int64_t t1, bool fixed)
{
	const mk_attn_slice *x = p->x;
	int64_t d = x->d, i0 = r * p->ta, rows = tiles_min(p->ta, p->na - i0), cols, off = 0;
	int64_t next = tiles_gather(p, w, r, t, t1, &cols), ng = next - t;
	const float *b, *v;

	tiles_pack(p, w, ng, &b, &v);
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)rows, (int)cols, (int)d,
		    x->scale, p->a + i0 * d, (int)d, b, (int)d, 0.0f, w->s, (int)p->tw);
	for (int64_t g = 0; g < ng; off += w->width[g], g++) {
		tiles_neg_bias(p, w->nb + off, w->j0[g], w->width[g]);
		if (w->test[g])
			tiles_apply_mask(p, w->s + off, i0, rows, w->j0[g], w->width[g]);
	}
	for (int64_t ii = 0; ii < rows; ii++) {
		float alpha;
		if (fixed) { /* m is the row's bound: no max to find, nothing to rescale */
			st->l[ii] += (double)mk_tiles_row_exp(w->s + ii * p->tw, st->m[ii], cols);
			continue;
		}
		alpha = mk_tiles_row_update(w->s + ii * p->tw, w->nb, cols, &st->m[ii], &st->l[ii]);
		if (st->o && alpha != 1.0f)
			mk_tiles_scale(st->o + ii * d, alpha, d);
	}
	if (st->o)
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, (int)d, (int)cols,
			    1.0f, w->s, (int)p->tw, v, (int)d, 1.0f, st->o, (int)d);
	return next;
}

/* lse = m + log l and o /= l, or -inf and a zero row where nothing was seen. */
static void tiles_finish(const tiles_pass *p, const tiles_state *st, int64_t i0, int64_t rows)
{
	int64_t d = p->x->d;

	for (int64_t ii = 0; ii < rows; ii++) {
		bool empty = st->l[ii] <= 0.0;
		p->lse[i0 + ii] = empty ? -INFINITY : (float)((double)st->m[ii] + log(st->l[ii]));
		if (st->o)
			mk_tiles_scale(st->o + ii * d, empty ? 0.0f : (float)(1.0 / st->l[ii]), d);
	}
}

static void tiles_item_pass(const tiles_pass *p, tiles_scratch *w, const tiles_item *it,
			    tiles_state *st, bool fixed)
{
	int64_t i0 = it->r * p->ta, rows = tiles_min(p->ta, p->na - i0);

	for (int64_t ii = 0; ii < rows; ii++) {
		st->m[ii] = fixed ? p->shift[i0 + ii] : -INFINITY;
		st->l[ii] = 0.0;
	}
	if (st->o)
		memset(st->o, 0, (size_t)(rows * p->x->d) * sizeof *st->o);
	for (int64_t t = it->t0; t < it->t1;)
		t = tiles_block(p, w, st, it->r, t, it->t1, fixed);
}

/* Below this a sum taken from the bound may have lost its terms to float32's
 * underflow (the bound is far above the row's scores): the row is redone
 * with its running maximum.  Terms under 2^-126 are then under 2^-26 of it. */
#define TILES_SUM_FLOOR 7.9e-31 /* 2^-100 */

/* Whether a row's sum from the bound is too small while the row has entries,
 * or not finite (a guard: the bound keeps every exponential below e). */
static bool tiles_underflow(const tiles_pass *p, const tiles_state *st, int64_t i0, int64_t rows)
{
	const mk_attn_layout *l = p->x->mask;

	for (int64_t ii = 0; ii < rows; ii++) {
		if (!isfinite(st->l[ii]))
			return true;
		if (st->l[ii] < TILES_SUM_FLOOR && (!l || l->ptr[i0 + ii + 1] > l->ptr[i0 + ii]))
			return true;
	}
	return false;
}

static void tiles_item_run(const tiles_pass *p, tiles_scratch *w, tiles_work *wk,
			   const tiles_item *it)
{
	int64_t i0 = it->r * p->ta, rows = tiles_min(p->ta, p->na - i0), d = p->x->d;
	tiles_state st = { w->m, w->l, p->o ? p->o + i0 * d : NULL };
	bool fixed = p->shift && it->slot < 0;

	if (it->slot >= 0) {
		st.m = wk->part.m + it->slot * p->ta;
		st.l = wk->part.l + it->slot * p->ta;
		st.o = p->o ? wk->part.o + it->slot * p->ta * d : NULL;
	}
	tiles_item_pass(p, w, it, &st, fixed);
	if (fixed && tiles_underflow(p, &st, i0, rows))
		tiles_item_pass(p, w, it, &st, false);
	if (it->slot < 0)
		tiles_finish(p, &st, i0, rows);
}

/* Merges the pieces of split tile k: the (m, l, o) states of each piece are
 * brought to the common max before they are summed. */
static void tiles_merge(const tiles_pass *p, const tiles_work *wk, int64_t k)
{
	int64_t r = wk->split[k], s0 = wk->split_slot[k], s1 = wk->split_slot[k + 1];
	int64_t i0 = r * p->ta, rows = tiles_min(p->ta, p->na - i0), d = p->x->d;

	for (int64_t ii = 0; ii < rows; ii++) {
		float mx = -INFINITY, *o = p->o ? p->o + (i0 + ii) * d : NULL;
		double l = 0.0;

		for (int64_t s = s0; s < s1; s++)
			mx = fmaxf(mx, wk->part.m[s * p->ta + ii]);
		for (int64_t s = s0; s < s1 && mx != -INFINITY; s++) {
			float ms = wk->part.m[s * p->ta + ii];
			if (ms != -INFINITY)
				l += wk->part.l[s * p->ta + ii] * exp((double)ms - mx);
		}
		p->lse[i0 + ii] = l > 0.0 ? (float)((double)mx + log(l)) : -INFINITY;
		if (!o)
			continue;
		memset(o, 0, (size_t)d * sizeof *o);
		for (int64_t s = s0; s < s1 && l > 0.0; s++) {
			float ms = wk->part.m[s * p->ta + ii];
			const float *po = wk->part.o + (s * p->ta + ii) * d;
			float c = ms == -INFINITY ? 0.0f : (float)(exp((double)ms - mx) / l);
			for (int64_t q = 0; q < d; q++)
				o[q] += c * po[q];
		}
	}
}

/* The most tiles one item takes: twice the mean row, so that only rows far
 * longer than the others are split. */
static int64_t tiles_piece(const tiles_pass *p)
{
	int64_t total = p->ptr ? p->ptr[p->nta] : p->nta * p->ntb;
	int64_t mean = (total + p->nta - 1) / p->nta;

	if (!p->ptr)
		return p->ntb > 0 ? p->ntb : 1; /* every row alike: no split */
	return 2 * mean > TILES_MIN_PIECE ? 2 * mean : TILES_MIN_PIECE;
}

static int64_t tiles_count(const tiles_pass *p, int64_t r)
{
	return p->ptr ? p->ptr[r + 1] - p->ptr[r] : p->ntb;
}

/* Fills wk->items (already sized) and the split lists. */
static void tiles_plan(const tiles_pass *p, tiles_work *wk, int64_t piece)
{
	int64_t ni = 0, ns = 0, nsplit = 0;

	for (int64_t r = 0; r < p->nta; r++) {
		int64_t cnt = tiles_count(p, r);
		if (cnt <= piece) {
			wk->items[ni++] = (tiles_item){ r, 0, cnt, -1 };
			continue;
		}
		wk->split[nsplit] = r;
		wk->split_slot[nsplit++] = ns;
		for (int64_t t = 0; t < cnt; t += piece)
			wk->items[ni++] = (tiles_item){ r, t, tiles_min(t + piece, cnt), ns++ };
	}
	wk->split_slot[nsplit] = ns;
	wk->nitems = ni;
	wk->nslots = ns;
	wk->nsplit = nsplit;
}

static void tiles_work_release(tiles_work *wk)
{
	free(wk->items);
	free(wk->split);
	free(wk->split_slot);
	free(wk->part.m);
	free(wk->part.l);
	free(wk->part.o);
}

static int tiles_work_new(const tiles_pass *p, tiles_work *wk)
{
	int64_t piece = tiles_piece(p), nitems = 0, nslots = 0;
	size_t rows;

	memset(wk, 0, sizeof *wk);
	for (int64_t r = 0; r < p->nta; r++) {
		int64_t cnt = tiles_count(p, r), pieces = (cnt + piece - 1) / piece;
		nitems += pieces > 1 ? pieces : 1;
		nslots += pieces > 1 ? pieces : 0;
	}
	rows = (size_t)(nslots * p->ta);
	wk->items = malloc((size_t)nitems * sizeof *wk->items);
	wk->split = malloc((size_t)(p->nta + 1) * sizeof *wk->split);
	wk->split_slot = malloc((size_t)(p->nta + 1) * sizeof *wk->split_slot);
	wk->part.m = malloc((rows ? rows : 1) * sizeof *wk->part.m);
	wk->part.l = malloc((rows ? rows : 1) * sizeof *wk->part.l);
	if (p->o && rows)
		wk->part.o = malloc(rows * (size_t)p->x->d * sizeof *wk->part.o);
	if (!wk->items || !wk->split || !wk->split_slot || !wk->part.m || !wk->part.l ||
	    (p->o && rows && !wk->part.o)) {
		tiles_work_release(wk);
		return mk_error_set(MK_ENOMEM, "out of memory for %lld attention work items",
				    (long long)nitems);
	}
	tiles_plan(p, wk, piece);
	return MK_OK;
}

static void tiles_scratch_release(tiles_scratch *w)
{
	free(w->s);
	free(w->nb);
	free(w->m);
	free(w->l);
	free(w->bp);
	free(w->vp);
	free(w->j0);
	free(w->width);
	free(w->test);
}

static bool tiles_scratch_new(const tiles_pass *p, tiles_scratch *w)
{
	size_t packed = p->group > 1 ? (size_t)(p->tw * p->x->d) : 1;

	memset(w, 0, sizeof *w);
	w->s = malloc((size_t)(p->ta * p->tw) * sizeof *w->s);
	w->nb = malloc((size_t)p->tw * sizeof *w->nb);
	w->m = malloc((size_t)p->ta * sizeof *w->m);
	w->l = malloc((size_t)p->ta * sizeof *w->l);
	w->bp = malloc(packed * sizeof *w->bp);
	w->vp = p->v ? malloc(packed * sizeof *w->vp) : NULL;
	w->j0 = malloc((size_t)p->group * sizeof *w->j0);
	w->width = malloc((size_t)p->group * sizeof *w->width);
	w->test = malloc((size_t)p->group * sizeof *w->test);
	return w->s && w->nb && w->m && w->l && w->bp && (!p->v || w->vp) && w->j0 &&
	       w->width && w->test;
}

static int tiles_run(const tiles_pass *p)
{
	tiles_work wk;
	int ret = tiles_work_new(p, &wk), fail = 0;
#ifdef OPENBLAS_VERSION
	/* inside the backend's parallel loop over slices the caller has set it */
	bool own_blas = !mk_attn_in_parallel();
	int blas_threads = own_blas ? openblas_get_num_threads() : 1;
#endif

	if (ret)
		return ret;
#ifdef OPENBLAS_VERSION
	/* OpenBLAS threads of its own under each of ours oversubscribe the
	 * cores (twice as slow, measured); its count is process-wide, so it is
	 * lowered for the pass and put back after. */
	openblas_set_num_threads(1);
#endif
	/* small slices: waking the other threads costs more than the work (and
	 * on a loaded machine a sleeping thread costs a scheduler tick) */
#pragma omp parallel if (p->na * p->nb * p->x->d >= MK_TILES_PARALLEL_WORK)
	{
		tiles_scratch w;
		bool ok = tiles_scratch_new(p, &w);
		if (!ok) {
#pragma omp atomic write
			fail = 1;
		}
#pragma omp for schedule(dynamic)
		for (int64_t k = 0; k < wk.nitems; k++)
			if (ok)
				tiles_item_run(p, &w, &wk, &wk.items[k]);
		tiles_scratch_release(&w);
	}
#pragma omp parallel for schedule(dynamic) if (wk.nsplit > 1 && \
					      p->na * p->nb * p->x->d >= MK_TILES_PARALLEL_WORK)
	for (int64_t k = 0; k < wk.nsplit; k++)
		tiles_merge(p, &wk, k);
	tiles_work_release(&wk);
#ifdef OPENBLAS_VERSION
	if (own_blas)
		openblas_set_num_threads(blas_threads);
#endif
	if (fail)
		return mk_error_set(MK_ENOMEM, "out of memory for attention tile buffers");
	return MK_OK;
}

/* The tile geometry shared by both passes: na rows reduced against nb. */
static int tiles_setup(const mk_attn_slice *x, bool cols, tiles_pass *p)
{
	const mk_attn_layout *l = x->mask;

	memset(p, 0, sizeof *p);
	p->x = x;
	p->na = cols ? x->kv : x->n;
	p->nb = cols ? x->n : x->kv;
	if (x->n <= 0 || x->kv <= 0 || x->d <= 0 || x->n > INT32_MAX || x->kv > INT32_MAX ||
	    x->d > INT32_MAX)
		return mk_error_set(MK_EINVAL, "attention slice of n = %lld, kv_len = %lld, d = %lld",
				    (long long)x->n, (long long)x->kv, (long long)x->d);
	if (x->kernel != MK_KERNEL_DENSE &&
	    (!l || l->n != x->n || l->kv != x->kv || l->tile <= 0))
		return mk_error_set(MK_EINVAL, "kernel '%s' needs a layout of %lld x %lld",
				    mk_attn_kernel_name(x->kernel), (long long)x->n,
				    (long long)x->kv);
	switch (x->kernel) {
	case MK_KERNEL_DENSE:
	case MK_KERNEL_MASKED:
		p->ta = TILES_QUERY_TILE;
		p->tb = TILES_KEY_BLOCK;
		p->mask_all = x->kernel == MK_KERNEL_MASKED;
		break;
	case MK_KERNEL_BLOCK:
		p->ta = l->tile;
		p->tb = l->tile;
		break;
	default:
		return mk_error_set(MK_EINVAL, "kernel '%s' is not a tiled kernel",
				    mk_attn_kernel_name(x->kernel));
	}
	p->ta = tiles_min(p->ta, p->na);
	/* block tiles go to sgemm a few at a time: one 64 x 64 tile per call
	 * costs half as much again as dense's wider blocks (measured) */
	p->group = p->tb < TILES_GROUP_WIDTH ? TILES_GROUP_WIDTH / p->tb : 1;
	p->tw = p->group * p->tb;
	p->nta = (p->na + p->ta - 1) / p->ta;
	p->ntb = (p->nb + p->tb - 1) / p->tb;
	return MK_OK;
}

int mk_cpu_tiles_row_pass(const mk_attn_slice *x, const float *g, float *f, bool with_v)
{
	tiles_pass p;
	float *bound = NULL;
	bool usable = false;
	int ret = tiles_setup(x, false, &p);

	if (ret)
		return ret;
	/* softmax's scores have a cheap bound: exponentials from it need no
	 * running maximum (a pass over each score block) nor rescaled outputs */
	if (!g && !(bound = mk_tiles_bounds(x, &usable)))
		return mk_error_set(MK_ENOMEM, "out of memory for %lld row bounds", (long long)x->n);
	p.shift = usable ? bound : NULL;
	p.a = x->q;
	p.b = x->k;
	p.bias = g;
	p.lse = f;
	p.v = with_v ? x->v : NULL;
	p.o = with_v ? x->o : NULL;
	if (x->kernel == MK_KERNEL_BLOCK) {
		p.ptr = x->mask->rptr;
		p.idx = x->mask->rcol;
		p.full = x->mask->rfull;
	}
	ret = tiles_run(&p);
	free(bound);
	return ret;
}

int mk_cpu_tiles_col_pass(const mk_attn_slice *x, const float *f, float *g)
{
	tiles_pass p;
	int ret = tiles_setup(x, true, &p);

	if (ret)
		return ret;
	p.a = x->k;
	p.b = x->q;
	p.bias = f;
	p.lse = g;
	p.transposed = true;
	if (x->kernel == MK_KERNEL_BLOCK) {
		p.ptr = x->mask->cptr;
		p.idx = x->mask->crow;
		p.full = x->mask->cfull;
	}
	return tiles_run(&p);
}
