/* The CPU backend's tiled kernels: dense, masked and block.
 *
 * Both passes are one computation, lse_a = LSE_b (scale a.b - bias_b) over
 * the cells a kernel visits: the row pass reduces queries against keys (bias
 * g, optionally accumulating P V as flash attention does), the column pass
 * reduces keys against queries (bias f) through the layout's column view.
 * Work is a list of items, each a tile of reduced rows and a run of blocks
 * of the other side; score blocks come from the micro-kernels of
 * cpu_ukernel.c (or sgemm, MASKKIT_CPU_KERNEL=blas), the online softmax keeps
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
#include "cpu_tiles.h"

#define TILES_MAX_MR 32 /* the most rows of any micro-kernel's register block */

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

/* Rows ii0 .. ii0+nrows-1 of the tile, whose scores are s (row stride tw),
 * into the running state; each row becomes the weights that multiply V. */
static void tiles_rows_update(const tiles_pass *p, const tiles_scratch *w, tiles_state *st,
			      float *s, int64_t ii0, int64_t nrows, int64_t cols, bool fixed)
{
	for (int64_t r = 0; r < nrows; r++) {
		int64_t ii = ii0 + r;
		float alpha;
		if (fixed) { /* m is the row's bound: no max to find, nothing to rescale */
			st->l[ii] += (double)mk_tiles_row_exp(s + r * p->tw, st->m[ii], cols);
			continue;
		}
		alpha = mk_tiles_row_update(s + r * p->tw, w->nb, cols, &st->m[ii], &st->l[ii]);
		if (st->o && alpha != 1.0f)
			mk_tiles_scale(st->o + ii * p->x->d, alpha, p->x->d);
	}
}

/* The key panels of block g (uk->nr keys each, bit k for panel k) in which
 * rows i .. i + sr - 1 have an entry: 0 for none; MK_UK_ALL where every
 * cell counts (no mask to test) or where not known panel by panel.  A block kernel's partial tile can be
 * empty for a whole strip (the rows of a global row's tile other than that
 * row, in every block it visits) and a band's corners empty panels: at
 * n = 2048, local256 + global1, tile 64, 14.4 % of the (12-row strip,
 * 32-key panel) pairs (counted), whose products were computed and then
 * masked.  The masked kernel computes every block by definition, and dense
 * has no mask. */
static uint64_t tiles_strip_live(const tiles_pass *p, const tiles_scratch *w, int64_t i,
				 int64_t sr, int64_t g)
{
	const mk_attn_layout *l = p->x->mask;
	int64_t j0 = w->j0[g], width = w->width[g], nr = p->uk->nr;
	uint64_t live = 0;

	if (!w->test[g] || p->mask_all)
		return MK_UK_ALL;
	if (!p->transposed && (j0 & 63) + width <= 64) { /* one word a row: tiles of 64 */
		const uint64_t *b = l->bits + (size_t)i * l->stride + (j0 >> 6);
		uint64_t any = 0;
		for (int64_t r = 0; r < sr; r++)
			any |= b[(size_t)r * l->stride];
		any >>= j0 & 63;
		if (width < 64)
			any &= (1ULL << width) - 1;
		for (int64_t k = 0; k * nr < width; k++)
			if (any >> (k * nr) & ((1ULL << nr) - 1))
				live |= 1ULL << k;
		return live;
	}
	if (!p->transposed && width <= 64 * nr) {
		for (int64_t k = 0; k * nr < width; k++) {
			int64_t c0 = j0 + k * nr, c1 = tiles_min(c0 + nr, j0 + width);
			for (int64_t r = i; r < i + sr && !(live >> k & 1); r++)
				if (mk_bits_any_range(l->bits + (size_t)r * l->stride, c0, c1))
					live |= 1ULL << k;
		}
		return live;
	}
	for (int64_t r = i; r < i + sr && !p->transposed; r++)
		if (mk_bits_any_range(l->bits + (size_t)r * l->stride, j0, j0 + width))
			return MK_UK_ALL;
	for (int64_t j = j0; j < j0 + width && p->transposed; j++) /* b = query j, a = key i */
		if (mk_bits_any_range(l->bits + (size_t)j * l->stride, i, i + sr))
			return MK_UK_ALL;
	return 0;
}

/* A strip's scores with their exponentials from the rows' bounds fused in
 * (the micro-kernels' qk_exp), the mask too: the scores are stored once,
 * as the weights that multiply V, and not read again before P V. */
static void tiles_strip_exp(const tiles_pass *p, tiles_scratch *w, tiles_state *st, int64_t i0,
			    int64_t ii, int64_t sr, int64_t ng)
{
	const mk_attn_layout *l = p->x->mask;
	int64_t d = p->x->d, off = 0;
	float sums[TILES_MAX_MR] = {0};

	for (int64_t g = 0; g < ng; off += w->width[g], g++) {
		const uint64_t *bits = w->test[g] ? l->bits + (size_t)(i0 + ii) * l->stride : NULL;
		if (!w->live[g])
			continue; /* no weight there: nothing to sum, and P V skips it */
		p->uk->qk_exp(p->a + (i0 + ii) * d, sr, p->packed + w->j0[g] / p->tb * p->pstride,
			      w->width[g], w->live[g], d, w->zero, st->m + ii, bits,
			      bits ? l->stride : 0, w->j0[g], w->s + off, p->tw, sums);
	}
	for (int64_t r = 0; r < sr; r++)
		st->l[ii + r] += (double)sums[r];
}

/* A strip's scores, masked, then into the running state (the other way,
 * without qk_exp or a bound): the scores become the weights of P V. */
static void tiles_strip_scores(const tiles_pass *p, tiles_scratch *w, tiles_state *st,
			       int64_t i0, int64_t ii, int64_t sr, int64_t ng, bool fixed)
{
	const mk_uk *uk = p->uk;
	int64_t d = p->x->d, off = 0;

	for (int64_t g = 0; g < ng; off += w->width[g], g++) {
		/* the bf16 levels take the rows already rounded (one pass
		 * rounding them was 9 % of the kernel once per key block) */
		const float *a = uk->bf16 ? (const float *)(p->abf + (i0 + ii) * p->apairs)
					  : p->a + (i0 + ii) * d;
		if (!w->live[g]) { /* what the mask would make of its scores */
			for (int64_t r = 0; r < sr; r++)
				for (int64_t c = 0; c < w->width[g]; c++)
					w->s[r * p->tw + off + c] = -INFINITY;
			continue;
		}
		uk->qk(a, sr, p->packed + w->j0[g] / p->tb * p->pstride, w->width[g], d, w->zero,
		       w->s + off, p->tw);
		if (w->test[g])
			tiles_apply_mask(p, w->s + off, i0 + ii, sr, w->j0[g], w->width[g]);
	}
	tiles_rows_update(p, w, st, w->s, ii, sr, off, fixed);
}

/* The micro-kernels' score block: a strip of mr rows at a time goes through
 * its scores, mask, exponentials and P V while its scores are in L1; the
 * packed b blocks and V stay in L2 for the tile's other strips. */
static void tiles_block_uk(const tiles_pass *p, tiles_scratch *w, tiles_state *st, int64_t i0,
			   int64_t rows, int64_t ng, bool fixed)
{
	const mk_uk *uk = p->uk;
	int64_t d = p->x->d;

	for (int64_t ii = 0; ii < rows; ii += uk->mr) {
		int64_t sr = tiles_min(uk->mr, rows - ii), off = 0;
		for (int64_t g = 0; g < ng; g++)
			w->live[g] = tiles_strip_live(p, w, i0 + ii, sr, g);
		if (fixed && uk->qk_exp)
			tiles_strip_exp(p, w, st, i0, ii, sr, ng);
		else
			tiles_strip_scores(p, w, st, i0, ii, sr, ng, fixed);
		for (int64_t g = 0; st->o && g < ng; off += w->width[g], g++)
			if (w->live[g]) /* a dead block's weights are all 0, and a dead panel's */
				uk->pv(w->s + off, p->tw, sr, p->vpacked + w->j0[g] / p->tb * p->pstride,
				       w->width[g], w->live[g], d, w->zero, w->sink, st->o + ii * d);
	}
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

	if (p->uk) {
		/* fixed (no bias): the exponentials take the bound, not nb */
		for (int64_t g = 0; !fixed && g < ng; off += w->width[g], g++)
			tiles_neg_bias(p, w->nb + off, w->j0[g], w->width[g]);
		tiles_block_uk(p, w, st, i0, rows, ng, fixed);
		return next;
	}
	tiles_pack(p, w, ng, &b, &v);
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)rows, (int)cols, (int)d,
		    x->scale, p->a + i0 * d, (int)d, b, (int)d, 0.0f, w->s, (int)p->tw);
	for (int64_t g = 0; g < ng; off += w->width[g], g++) {
		tiles_neg_bias(p, w->nb + off, w->j0[g], w->width[g]);
		if (w->test[g])
			tiles_apply_mask(p, w->s + off, i0, rows, w->j0[g], w->width[g]);
	}
	tiles_rows_update(p, w, st, w->s, 0, rows, cols, fixed);
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

void mk_tiles_item_run(const tiles_pass *p, tiles_scratch *w, tiles_work *wk,
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
void mk_tiles_merge(const tiles_pass *p, const tiles_work *wk, int64_t k)
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
