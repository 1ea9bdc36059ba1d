/*
 * The forward pass of a BERT-family encoder in float32.  A batch's
 * sentences are concatenated, token after token with no padding; each
 * projection is an sgemm per sentence (per block of ENC_LINEAR_ROWS rows of
 * a long one), so that a sentence gets the same bits whatever its batch and
 * the thread count, and attention runs per sentence and head at the
 * sentence's own length, the (sentence, head) pairs shared between OpenMP
 * threads.
 *
 * Why not the attention engine (src/attn): its kernels are fused and tiled
 * with an online softmax, so the probabilities P never exist in memory, and
 * P is what this pass is for.  P is therefore computed here: S = Q K^T /
 * sqrt(dk) with one sgemm, a stable softmax over each row (under the mask,
 * if any), then O = P V with a second sgemm on the P already formed.  Using
 * the engine's masked kernel for O would compute Q K^T and the
 * exponentials a second time for the same result, so it could only be
 * slower.
 */
#include "config.h"
#include <cblas.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "model.h"
#include "encoder_internal.h"

#define ENC_PAR_CELLS (1 << 15) /* elementwise work worth sharing between threads */
#define ENC_LINEAR_ROWS 64      /* the most rows of one sentence in one projection sgemm */

static double enc_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void enc_work_release(enc_work *w)
{
	free(w->x);
	free(w->qkv);
	free(w->ctx);
	free(w->tmp);
	free(w->inter);
	free(w->p);
	free(w->off);
	free(w->poff);
	free(w->boff);
}

void mk_encoder_free(mk_encoder *e)
{
	if (!e)
		return;
	free(e->word);
	free(e->pos);
	free(e->type0);
	free(e->ln_g);
	free(e->ln_b);
	for (int64_t l = 0; e->layer && l < e->c.layers; l++) {
		enc_layer *y = &e->layer[l];
		float *all[] = {y->wqkv, y->bqkv, y->wo, y->bo, y->ln1_g, y->ln1_b, y->wi, y->bi,
				y->wf, y->bf, y->ln2_g, y->ln2_b};
		for (size_t k = 0; k < sizeof all / sizeof *all; k++)
			free(all[k]);
	}
	free(e->layer);
	enc_work_release(&e->w);
	for (int64_t n = 0; e->masks && n <= e->c.max_positions; n++)
		mk_mask_free(e->masks[n]);
	free(e->masks);
	free(e->mask_spec);
	free(e);
}

void mk_encoder_get_times(const mk_encoder *e, mk_encoder_times *out)
{
	*out = e->t;
}

/* ---- the mask ---------------------------------------------------------------- */

int mk_encoder_set_mask(mk_encoder *e, const char *spec, uint64_t seed)
{
	mk_expr *x = NULL;
	int ret;

	for (int64_t n = 0; e->masks && n <= e->c.max_positions; n++)
		mk_mask_free(e->masks[n]);
	free(e->masks);
	free(e->mask_spec);
	e->masks = NULL;
	e->mask_spec = NULL;
	if (!spec)
		return MK_OK;
	if ((ret = mk_expr_parse(spec, &x)))
		return mk_error_param("mask");
	mk_expr_free(x);
	e->mask_seed = seed;
	if (!(e->mask_spec = strdup(spec)) ||
	    !(e->masks = calloc((size_t)e->c.max_positions + 1, sizeof *e->masks)))
		return mk_error_set(MK_ENOMEM, "out of memory");
	return MK_OK;
}

/* The mask at length n, materialised once. */
static int enc_mask_at(mk_encoder *e, int64_t n)
{
	mk_expr *x = NULL;
	const char *param;
	int ret;

	if (e->masks[n])
		return MK_OK;
	if ((ret = mk_expr_parse(e->mask_spec, &x)) == MK_OK &&
	    (ret = mk_expr_bind(x, &(mk_bind_opts){.n = n, .seed = e->mask_seed,
						   .max_memory = e->w.max_memory})) == MK_OK)
		ret = mk_expr_to_mask(x, &e->masks[n]);
	if (ret == MK_OK && mk_mask_n(e->masks[n]) != n)
		ret = mk_error_set(MK_EINVAL, "the mask has n = %" PRId64,
				   mk_mask_n(e->masks[n]));
	mk_expr_free(x);
	if (ret) {
		mk_mask_free(e->masks[n]);
		e->masks[n] = NULL;
		param = mk_error_get()->param;
		mk_error_prefix("the mask '%s' at a sentence of %" PRId64 " tokens: ", e->mask_spec,
				n);
		if (!param || !strcmp(param, "n")) /* n is the sentence's: the mask is at fault */
			mk_error_param("mask");
	}
	return ret;
}

/* ---- buffers ------------------------------------------------------------------- */

/* Room for a batch of count sentences, tokens in all, cells probabilities. */
static int enc_reserve(mk_encoder *e, int64_t count, int64_t tokens, int64_t cells)
{
	enc_work *w = &e->w;
	int64_t h = e->c.hidden, in = e->c.intermediate;
	uint64_t need = enc_mul(4, enc_add(enc_mul((uint64_t)tokens, (uint64_t)(6 * h + in)),
					   (uint64_t)cells));
	char a[32], b[32];

	if (need > w->max_memory) {
		mk_format_bytes(need, a, sizeof a);
		mk_format_bytes(w->max_memory, b, sizeof b);
		mk_error_set(MK_ERANGE, "a batch of %" PRId64 " sentences (%" PRId64 " tokens) needs "
			     "%s, more than the memory limit of %s: use a smaller batch", count,
			     tokens, a, b);
		return mk_error_param("batch");
	}
	if (tokens > w->tokens) {
		float **buf[] = {&w->x, &w->qkv, &w->ctx, &w->tmp, &w->inter};
		int64_t per[] = {h, 3 * h, h, h, in};
		w->tokens = 0;
		for (size_t k = 0; k < sizeof buf / sizeof *buf; k++) {
			free(*buf[k]);
			if (!(*buf[k] = malloc((size_t)tokens * (size_t)per[k] * sizeof(float))))
				return mk_error_set(MK_ENOMEM, "out of memory for a batch of %" PRId64
						    " tokens", tokens);
		}
		w->tokens = tokens;
	}
	if (cells > w->cells) {
		free(w->p);
		w->cells = 0;
		if (!(w->p = malloc((size_t)cells * sizeof *w->p)))
			return mk_error_set(MK_ENOMEM, "out of memory for the probabilities");
		w->cells = cells;
	}
	if (count > w->count) {
		free(w->off);
		free(w->poff);
		free(w->boff);
		w->count = 0;
		if (!(w->off = malloc((size_t)count * sizeof *w->off)) ||
		    !(w->poff = malloc((size_t)count * sizeof *w->poff)) ||
		    !(w->boff = malloc((size_t)(count + 1) * sizeof *w->boff)))
			return mk_error_set(MK_ENOMEM, "out of memory");
		w->count = count;
	}
	return MK_OK;
}

/* ---- the steps ---------------------------------------------------------------- */

/* Sentence s's blocks of rows for enc_linear: ceil(n / ENC_LINEAR_ROWS),
 * even, a function of the sentence's length alone. */
static int64_t enc_blocks(int64_t n)
{
	return (n + ENC_LINEAR_ROWS - 1) / ENC_LINEAR_ROWS;
}

/* y [rows, out] = x [rows, in] W^T + b, W [out, in], the rows those of the
 * batch's sentences.  Each sentence's rows are cut into blocks that depend
 * on its length alone (enc_blocks), each a single-threaded sgemm from the
 * block's first row: BLAS gives a row different bits by where it falls in
 * its call (OpenBLAS's Haswell/Zen sgemm computes the rows of a partial
 * tile of 12 differently from those of a full one), so a block that ran
 * across sentences, or a cut that followed the thread count, would make a
 * sentence's numbers depend on its batch and on OMP_NUM_THREADS.  The
 * blocks are shared between OpenMP threads: one pool of threads for the
 * whole pass, where OpenBLAS's own threads would spin beside OpenMP's and
 * take cores from them. */
static void enc_linear(const enc_work *wk, int64_t count, const int64_t *len, const float *x,
		       int64_t in, const float *w, const float *b, int64_t out, float *y)
{
	int64_t blocks = wk->boff[count];

#pragma omp parallel for schedule(dynamic) if (blocks > 1)
	for (int64_t k = 0; k < blocks; k++) {
		int64_t s = 0, lo = 0, hi = count - 1;
		while (lo <= hi) { /* the last sentence whose first block is at most k */
			int64_t mid = lo + (hi - lo) / 2;
			if (wk->boff[mid] <= k)
				s = mid, lo = mid + 1;
			else
				hi = mid - 1;
		}
		int64_t n = len[s], nb = wk->boff[s + 1] - wk->boff[s], c = k - wk->boff[s];
		int64_t r0 = wk->off[s] + n * c / nb, r1 = wk->off[s] + n * (c + 1) / nb;
		for (int64_t i = r0; i < r1; i++)
			memcpy(y + i * out, b, (size_t)out * sizeof *y);
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)(r1 - r0), (int)out,
			    (int)in, 1.0f, x + r0 * in, (int)in, w, (int)in, 1.0f, y + r0 * out,
			    (int)out);
	}
}

/* x[i] = LayerNorm(x[i] + y[i]) (y NULL: of x[i]), statistics in double. */
void mk_enc_layernorm(float *x, const float *y, int64_t rows, int64_t h, const float *g,
			  const float *b, double eps)
{
#pragma omp parallel for schedule(static) if (rows * h >= ENC_PAR_CELLS)
	for (int64_t i = 0; i < rows; i++) {
		float *r = x + i * h;
		double mean = 0, var = 0;
		if (y)
			for (int64_t j = 0; j < h; j++)
				r[j] += y[i * h + j];
		for (int64_t j = 0; j < h; j++)
			mean += r[j];
		mean /= (double)h;
		for (int64_t j = 0; j < h; j++)
			var += ((double)r[j] - mean) * ((double)r[j] - mean);
		float inv = (float)(1.0 / sqrt(var / (double)h + eps)), m = (float)mean;
		for (int64_t j = 0; j < h; j++)
			r[j] = (r[j] - m) * inv * g[j] + b[j];
	}
}

/* HF's "gelu" is the erf form; "gelu_new" the tanh approximation. */
void mk_enc_activate(float *x, int64_t count, enc_act act)
{
#pragma omp parallel for schedule(static) if (count >= ENC_PAR_CELLS)
	for (int64_t k = 0; k < count; k++) {
		float v = x[k];
		if (act == ENC_GELU)
			x[k] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
		else if (act == ENC_GELU_TANH)
			x[k] = 0.5f * v * (1.0f + tanhf(0.79788456080286536f *
							(v + 0.044715f * v * v * v)));
		else
			x[k] = v > 0.0f ? v : 0.0f;
	}
}

static int enc_embed(mk_encoder *e, const mk_encoder_batch *b)
{
	int64_t h = e->c.hidden;
	float *x = e->w.x;

	for (int64_t s = 0; s < b->count; s++) {
		const int32_t *ids = b->ids + s * b->stride;
		for (int64_t i = 0; i < b->len[s]; i++) {
			float *r = x + (e->w.off[s] + i) * h;
			const float *wd, *ps = e->pos + (i + e->pos_offset) * h;
			if (ids[i] < 0 || ids[i] >= e->c.vocab)
				return mk_error_set(MK_EINVAL, "sentence %" PRId64 ", token %" PRId64
						    ": id %" PRId32 " is outside the vocabulary of %"
						    PRId64, s, i, ids[i], e->c.vocab);
			wd = e->word + (int64_t)ids[i] * h;
			for (int64_t j = 0; j < h; j++)
				r[j] = wd[j] + ps[j] + e->type0[j];
		}
	}
	mk_enc_layernorm(x, NULL, e->w.off[b->count - 1] + b->len[b->count - 1], h, e->ln_g, e->ln_b,
		      e->c.layer_norm_eps);
	return MK_OK;
}

/* Row r (n scores) into probabilities, over the keys the mask row m allows
 * (NULL: all).  A row with no key, all zeros.  False when a score is not
 * finite (the scores left float32). */
static bool enc_softmax(float *r, int64_t n, const uint64_t *m)
{
	float top = -INFINITY;
	double sum = 0;

	for (int64_t j = 0; j < n; j++)
		if (!m || mk_bit_test(m, j)) {
			if (!isfinite(r[j]))
				return false; /* NaN compares false: it would hide */
			top = r[j] > top ? r[j] : top;
		}
	if (top == -INFINITY) {
		memset(r, 0, (size_t)n * sizeof *r);
		return true;
	}
	if (!isfinite(top))
		return false;
	for (int64_t j = 0; j < n; j++) {
		float v = !m || mk_bit_test(m, j) ? expf(r[j] - top) : 0.0f;
		r[j] = v;
		sum += v;
	}
	float inv = (float)(1.0 / sum);
	for (int64_t j = 0; j < n; j++)
		r[j] *= inv;
	return true;
}

/* Attention of every (sentence, head): P into w->p, P V into w->ctx. */
static int enc_attention(mk_encoder *e, const mk_encoder_batch *b, int64_t l)
{
	const enc_work *w = &e->w;
	int64_t h = e->c.hidden, heads = e->c.heads, dk = e->dk, pairs = b->count * heads;
	float scale = (float)(1.0 / sqrt((double)dk));
	int bad = 0;

#pragma omp parallel for schedule(dynamic) reduction(| : bad) if (pairs > 1)
	for (int64_t k = 0; k < pairs; k++) {
		int64_t s = k / heads, hd = k % heads, n = b->len[s];
		const float *q = w->qkv + w->off[s] * 3 * h + hd * dk, *kk = q + h, *v = q + 2 * h;
		float *p = w->p + w->poff[s] + hd * n * n;
		const mk_mask *m = e->masks ? e->masks[n] : NULL;

		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, (int)n, (int)dk, scale, q,
			    (int)(3 * h), kk, (int)(3 * h), 0.0f, p, (int)n);
		for (int64_t i = 0; i < n; i++)
			if (!enc_softmax(p + i * n, n, m ? mk_mask_crow(m, i) : NULL))
				bad = 1;
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)dk, (int)n, 1.0f, p,
			    (int)n, v, (int)(3 * h), 0.0f, w->ctx + w->off[s] * h + hd * dk, (int)h);
	}
	if (bad)
		return mk_error_set(MK_ERANGE, "layer %" PRId64 ": attention scores beyond float32 "
				    "(NaN or infinite)", l);
	return MK_OK;
}

/* ---- the pass ------------------------------------------------------------------- */

/* Offsets of the sentences' tokens and probabilities; checks the lengths. */
static int enc_plan(mk_encoder *e, const mk_encoder_batch *b, int64_t *tokens, int64_t *cells)
{
	int64_t top = mk_encoder_max_len(e);
	int ret;

	*tokens = *cells = 0;
	if (b->count < 1 || !b->ids || !b->len || b->stride < 1)
		return mk_error_set(MK_EINVAL, "an empty batch");
	for (int64_t s = 0; s < b->count; s++) {
		if (b->len[s] < 1 || b->len[s] > top || b->len[s] > b->stride)
			return mk_error_set(MK_EINVAL, "sentence %" PRId64 " has %" PRId64 " tokens; "
					    "the model takes 1 to %" PRId64, s, b->len[s], top);
		*tokens += b->len[s];
		*cells += e->c.heads * b->len[s] * b->len[s];
	}
	if ((ret = enc_reserve(e, b->count, *tokens, *cells)))
		return ret;
	for (int64_t s = 0, t = 0, c = 0, k = 0; s < b->count; s++) {
		e->w.off[s] = t;
		e->w.poff[s] = c;
		e->w.boff[s] = k;
		t += b->len[s];
		c += e->c.heads * b->len[s] * b->len[s];
		k += enc_blocks(b->len[s]);
		e->w.boff[s + 1] = k;
	}
	for (int64_t s = 0; e->masks && s < b->count; s++)
		if ((ret = enc_mask_at(e, b->len[s])))
			return ret;
	return MK_OK;
}

/* One layer; *t0 the time its steps started.  attention_only: the layer's
 * output is not needed (the last layer, when only its attention is
 * wanted), so the output projection and the FFN are skipped. */
static int enc_layer_run(mk_encoder *e, const mk_encoder_batch *b, int64_t l, int64_t tokens,
			 bool attention_only, double *t0)
{
	const enc_layer *y = &e->layer[l];
	enc_work *w = &e->w;
	int64_t h = e->c.hidden, in = e->c.intermediate;
	double eps = e->c.layer_norm_eps, t;
	int ret;

	enc_linear(w, b->count, b->len, w->x, h, y->wqkv, y->bqkv, 3 * h, w->qkv);
	e->t.linear += (t = enc_now()) - *t0;
	if ((ret = enc_attention(e, b, l)))
		return ret;
	e->t.attention += (*t0 = enc_now()) - t;
	if (b->layer) {
		mk_encoder_layer x = {.layer = l, .count = b->count, .heads = e->c.heads, .dk = e->dk,
				      .hidden = h, .len = b->len, .off = w->off, .poff = w->poff,
				      .p = w->p, .qkv = w->qkv};
		if ((ret = b->layer(b->arg, &x)))
			return ret;
		e->t.callback += (t = enc_now()) - *t0;
		*t0 = t;
	}
	if (attention_only)
		return MK_OK;
	enc_linear(w, b->count, b->len, w->ctx, h, y->wo, y->bo, h, w->tmp);
	e->t.linear += (t = enc_now()) - *t0;
	mk_enc_layernorm(w->x, w->tmp, tokens, h, y->ln1_g, y->ln1_b, eps);
	e->t.norm += (*t0 = enc_now()) - t;
	enc_linear(w, b->count, b->len, w->x, h, y->wi, y->bi, in, w->inter);
	e->t.linear += (t = enc_now()) - *t0;
	mk_enc_activate(w->inter, tokens * in, e->act);
	e->t.norm += (*t0 = enc_now()) - t;
	enc_linear(w, b->count, b->len, w->inter, in, y->wf, y->bf, h, w->tmp);
	e->t.linear += (t = enc_now()) - *t0;
	mk_enc_layernorm(w->x, w->tmp, tokens, h, y->ln2_g, y->ln2_b, eps);
	e->t.norm += (*t0 = enc_now()) - t;
	return MK_OK;
}

int mk_encoder_forward(mk_encoder *e, const mk_encoder_batch *b)
{
	int64_t tokens, cells;
	double t0 = enc_now(), t;
#ifdef _OPENMP
	int threads = omp_get_max_threads();
#else
	int threads = 1;
#endif
	int ret;

	if ((ret = enc_plan(e, b, &tokens, &cells)))
		return ret;
	if (tokens > INT32_MAX / (3 * e->c.hidden) || tokens * e->c.intermediate > INT32_MAX) {
		mk_error_set(MK_ERANGE, "a batch of %" PRId64 " tokens is too large for BLAS: use a "
			     "smaller batch", tokens);
		return mk_error_param("batch");
	}
	if ((ret = mk_blas_room(threads)) || (ret = enc_embed(e, b)))
		return ret;
	e->t.embed += (t = enc_now()) - t0;
	t0 = t;
#ifdef OPENBLAS_VERSION
	/* every sgemm runs on one OpenMP thread (see enc_linear) */
	int blas_threads = openblas_get_num_threads();
	openblas_set_num_threads(1);
#endif
	for (int64_t l = 0; l < e->c.layers && ret == MK_OK; l++)
		ret = enc_layer_run(e, b, l, tokens, l + 1 == e->c.layers && !b->hidden, &t0);
#ifdef OPENBLAS_VERSION
	openblas_set_num_threads(blas_threads);
#endif
	if (ret == MK_OK && b->hidden)
		memcpy(b->hidden, e->w.x, (size_t)(tokens * e->c.hidden) * sizeof *b->hidden);
	return ret;
}
