/*
 * The positional attention term of one layer (Wennberg & Henter, 2021,
 * Eq. 9-12), per head.
 *
 * With the mean word embedding w (the mean of the word-embedding rows)
 * standing in for every token, the query at position i is q_i = a + p_i W_Q
 * and the key at j is k_j = c + p_j W_K, where a = w W_Q + b_Q and
 * c = w W_K + b_K hold everything that does not depend on position.  So
 *   q_i . k_j = a.c + a.(p_j W_K) + (p_i W_Q).c + (p_i W_Q).(p_j W_K)
 * and F_P = (q_i . k_j - a.c) / sqrt(d_k) per head: the paper's three terms
 * E_w W_Q W_K^T E_P^T + E_P W_Q W_K^T E_w^T + E_P W_Q W_K^T E_P^T, with the
 * biases (when present and not turned off) inside a and c.  An embedding
 * projection x -> x W_E + b_E (ALBERT's embedding_hidden_mapping_in) maps
 * p_i to p_i W_E and w to w W_E + b_E: its bias is constant, so it goes with
 * the mean word.  LayerNorm and token-type embeddings are left out, as in
 * the paper.  Each head's F_P is one product (Q_h + 1a_h)(K_h + 1c_h)^T
 * less the constant a_h.c_h.
 */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cblas.h>
#include "internal.h"
#include "positional_find.h"

static const char *const pos_roles[MK_POS_NROLES] = {
	"position", "word", "query", "key", "query-bias", "key-bias", "projection",
	"projection-bias"};

const char *mk_positional_role(int role)
{
	return role >= 0 && role < MK_POS_NROLES ? pos_roles[role] : "?";
}

void mk_positional_release(mk_positional *p)
{
	if (!p)
		return;
	free(p->f);
	free(p->profile);
	free(p->fit);
	for (int r = 0; r < MK_POS_NROLES; r++)
		free(p->used[r]);
	memset(p, 0, sizeof *p);
}

typedef struct pos_ctx {
	mk_weights *w;
	const mk_positional_opts *o;
	mk_positional *out;
	mk_matrix m[MK_POS_NROLES]; /* as read */
	mk_layout layout[MK_POS_NROLES];
	mk_matrix ep, wbar;         /* positions and mean word, projected */
	mk_matrix q, k, a, c;       /* E_P W_Q, E_P W_K, a, c */
} pos_ctx;

static const char *pos_file(const pos_ctx *x)
{
	return mk_weights_file(x->w);
}

/* Rows x cols of the linear map a weight applies, as in x (in) -> out. */
static void pos_in_out(const pos_ctx *x, int role, int64_t *in, int64_t *out)
{
	const mk_matrix *m = &x->m[role];
	bool t = x->layout[role] == MK_LAYOUT_OUT_IN;
	*in = t ? m->cols : m->rows;
	*out = t ? m->rows : m->cols;
}

/* y = x W (+ b), with W stored in x->layout[role]; y is allocated. */
static int pos_apply(const pos_ctx *x, const mk_matrix *in, int role, const mk_matrix *bias,
		     mk_matrix *y)
{
	const mk_matrix *wm = &x->m[role];
	int64_t n_in, n_out;
	bool t = x->layout[role] == MK_LAYOUT_OUT_IN;
	int ret;

	pos_in_out(x, role, &n_in, &n_out);
	if (n_in != in->cols)
		return mk_error_set(MK_EFORMAT, "'%s': %s weights '%s' are %lld x %lld, which does "
				    "not take inputs of size %lld (%s layout)", pos_file(x),
				    pos_roles[role], x->out->used[role], (long long)wm->rows,
				    (long long)wm->cols, (long long)in->cols,
				    t ? "out x in" : "in x out");
	ret = mk_blas_room(1);
	if (ret == MK_OK)
		ret = mk_matrix_new(in->rows, n_out, x->o->max_memory, pos_roles[role], y);
	if (ret)
		return ret;
	cblas_dgemm(CblasRowMajor, CblasNoTrans, t ? CblasTrans : CblasNoTrans, (int)in->rows,
		    (int)n_out, (int)n_in, 1.0, in->data, (int)in->cols, wm->data, (int)wm->cols,
		    0.0, y->data, (int)n_out);
	for (int64_t i = 0; bias && bias->data && i < y->rows; i++)
		for (int64_t j = 0; j < n_out; j++)
			y->data[i * n_out + j] += bias->data[j];
	return MK_OK;
}

static int pos_check_bias(const pos_ctx *x, int role, int64_t size)
{
	const mk_matrix *b = &x->m[role];
	if (!b->data || b->cols == size)
		return MK_OK;
	return mk_error_set(MK_EFORMAT, "'%s': %s '%s' has %lld entries, expected %lld",
			    pos_file(x), pos_roles[role], x->out->used[role], (long long)b->cols,
			    (long long)size);
}

/* The mean of the word-embedding rows, as a 1 x e matrix. */
static int pos_mean_word(pos_ctx *x, mk_matrix *wbar)
{
	const mk_matrix *w = &x->m[MK_POS_WORD];
	int ret;

	if (w->cols != x->m[MK_POS_POSITION].cols)
		return mk_error_set(MK_EFORMAT, "'%s': word embeddings '%s' have size %lld but "
				    "position embeddings '%s' have %lld", pos_file(x),
				    x->out->used[MK_POS_WORD], (long long)w->cols,
				    x->out->used[MK_POS_POSITION],
				    (long long)x->m[MK_POS_POSITION].cols);
	if ((ret = mk_matrix_new(1, w->cols, 0, "the mean word embedding", wbar)))
		return ret;
	for (int64_t v = 0; v < w->rows; v++)
		for (int64_t j = 0; j < w->cols; j++)
			wbar->data[j] += w->data[v * w->cols + j];
	for (int64_t j = 0; j < w->cols; j++)
		wbar->data[j] /= (double)w->rows;
	return MK_OK;
}

/* ep = E_P W_E and wbar = w W_E + b_E, or E_P and w without a projection. */
static int pos_embed(pos_ctx *x)
{
	mk_matrix wbar = {0};
	int64_t in, out;
	int ret;

	if ((ret = pos_mean_word(x, &wbar)))
		return ret;
	if (!x->m[MK_POS_PROJ].data) {
		x->ep = x->m[MK_POS_POSITION];
		x->m[MK_POS_POSITION] = (mk_matrix){0};
		x->wbar = wbar;
		return MK_OK;
	}
	pos_in_out(x, MK_POS_PROJ, &in, &out);
	if ((ret = pos_check_bias(x, MK_POS_PROJ_BIAS, out)) ||
	    (ret = pos_apply(x, &x->m[MK_POS_POSITION], MK_POS_PROJ, NULL, &x->ep)) ||
	    (ret = pos_apply(x, &wbar, MK_POS_PROJ, &x->m[MK_POS_PROJ_BIAS], &x->wbar)))
		goto out;
out:
	mk_matrix_release(&wbar);
	return ret;
}

/* A config.json that disagrees with the tensors describes another model:
 * its heads would be a guess too. */
static int pos_check_config(const pos_ctx *x)
{
	const mk_model_config *c = mk_weights_config(x->w);
	const mk_positional *p = x->out;
	int64_t emb = c && c->embedding_size ? c->embedding_size : c ? c->hidden : 0;
	bool shared = c && !strcmp(c->model_type, "albert"); /* layers share weights */

	if (!c)
		return MK_OK;
	if (c->hidden && c->hidden != p->hidden)
		return mk_error_set(MK_EFORMAT, "'%s': config.json has hidden_size %lld but query "
				    "'%s' has %lld outputs", pos_file(x), (long long)c->hidden,
				    p->used[MK_POS_QUERY], (long long)p->hidden);
	if (emb && emb != p->e)
		return mk_error_set(MK_EFORMAT, "'%s': config.json has %s %lld but position "
				    "embeddings '%s' have size %lld", pos_file(x),
				    c->embedding_size ? "embedding_size" : "hidden_size",
				    (long long)emb, p->used[MK_POS_POSITION], (long long)p->e);
	if (c->max_positions && c->max_positions != p->n)
		return mk_error_set(MK_EFORMAT, "'%s': config.json has max_position_embeddings %lld "
				    "but position embeddings '%s' have %lld rows", pos_file(x),
				    (long long)c->max_positions, p->used[MK_POS_POSITION],
				    (long long)p->n);
	if (c->layers && p->layers && (shared ? p->layers > c->layers : p->layers != c->layers))
		return mk_error_set(MK_EFORMAT, "'%s': config.json has num_hidden_layers %lld but "
				    "the weights have query weights for %lld layer%s", pos_file(x),
				    (long long)c->layers, (long long)p->layers, p->layers == 1 ? "" : "s");
	return MK_OK;
}

static int pos_heads(pos_ctx *x)
{
	const mk_model_config *cfg = mk_weights_config(x->w);
	mk_positional *p = x->out;
	int64_t in, out, kin, kout;
	int ret;

	pos_in_out(x, MK_POS_QUERY, &in, &out);
	pos_in_out(x, MK_POS_KEY, &kin, &kout);
	if (kin != in || kout != out)
		return mk_error_set(MK_EFORMAT, "'%s': query '%s' maps %lld to %lld but key '%s' "
				    "maps %lld to %lld", pos_file(x), p->used[MK_POS_QUERY],
				    (long long)in, (long long)out, p->used[MK_POS_KEY],
				    (long long)kin, (long long)kout);
	p->hidden = out;
	if ((ret = pos_check_config(x)))
		return ret;
	p->heads = x->o->heads ? x->o->heads : cfg ? cfg->heads : 0;
	/* the shape never decides: 768 dimensions are 12 heads of 64 or 6 of 128 */
	if (!p->heads) {
		mk_error_set(MK_EINVAL, "'%s': the number of heads is not known (no config.json with "
			     "num_attention_heads); give it", pos_file(x));
		return mk_error_param("heads");
	}
	if (out % p->heads)
		return mk_error_set(MK_EINVAL, "'%s': %lld heads do not divide the %lld query "
				    "dimensions", pos_file(x), (long long)p->heads, (long long)out);
	p->dk = out / p->heads;
	return MK_OK;
}

/* Adds row vector v (1 x cols) to every row of m. */
static void pos_add_row(mk_matrix *m, const mk_matrix *v)
{
	for (int64_t i = 0; i < m->rows; i++)
		for (int64_t j = 0; j < m->cols; j++)
			m->data[i * m->cols + j] += v->data[j];
}

static int pos_project(pos_ctx *x)
{
	const mk_matrix *bq = x->o->no_bias ? NULL : &x->m[MK_POS_QUERY_BIAS];
	const mk_matrix *bk = x->o->no_bias ? NULL : &x->m[MK_POS_KEY_BIAS];
	int ret;

	/* shapes first: a wrong layout shows as a wrong input size, not a bias */
	if ((ret = pos_heads(x)) ||
	    (ret = pos_apply(x, &x->ep, MK_POS_QUERY, NULL, &x->q)) ||
	    (ret = pos_apply(x, &x->ep, MK_POS_KEY, NULL, &x->k)) ||
	    (ret = pos_check_bias(x, MK_POS_QUERY_BIAS, x->out->hidden)) ||
	    (ret = pos_check_bias(x, MK_POS_KEY_BIAS, x->out->hidden)) ||
	    (ret = pos_apply(x, &x->wbar, MK_POS_QUERY, bq, &x->a)) ||
	    (ret = pos_apply(x, &x->wbar, MK_POS_KEY, bk, &x->c)))
		return ret;
	pos_add_row(&x->q, &x->a);
	pos_add_row(&x->k, &x->c);
	return MK_OK;
}

static int pos_alloc_out(pos_ctx *x)
{
	mk_positional *p = x->out;
	int64_t n = p->n, h = p->heads;
	uint64_t cells, bytes;
	int ret;

	if (mk_mul_u64((uint64_t)h, (uint64_t)n, &cells) || mk_mul_u64(cells, (uint64_t)n, &cells) ||
	    mk_mul_u64(cells, sizeof(double), &bytes) || bytes > SIZE_MAX)
		return mk_error_set(MK_ERANGE, "'%s': %lld heads of %lld x %lld overflow",
				    pos_file(x), (long long)h, (long long)n, (long long)n);
	if ((ret = mk_check_memory(bytes, x->o->max_memory, "the positional terms"))) {
		mk_error_prefix("'%s': ", pos_file(x));
		return ret;
	}
	p->f = malloc((size_t)bytes);
	p->profile = malloc((size_t)(h * (2 * n - 1)) * sizeof *p->profile);
	p->fit = calloc((size_t)h, sizeof *p->fit);
	if (!p->f || !p->profile || !p->fit)
		return mk_error_set(MK_ENOMEM, "out of memory for %lld heads of %lld x %lld",
				    (long long)h, (long long)n, (long long)n);
	return MK_OK;
}

static int pos_terms(pos_ctx *x)
{
	mk_positional *p = x->out;
	int64_t n = p->n, dk = p->dk, hid = p->hidden;
	double scale = 1.0 / sqrt((double)dk);
	int ret;

	if ((ret = pos_alloc_out(x)))
		return ret;
	for (int64_t h = 0; h < p->heads; h++) {
		double *f = p->f + h * n * n, ac = 0.0;
		for (int64_t j = 0; j < dk; j++)
			ac += x->a.data[h * dk + j] * x->c.data[h * dk + j];
		cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, (int)n, (int)dk, scale,
			    x->q.data + h * dk, (int)hid, x->k.data + h * dk, (int)hid, 0.0, f,
			    (int)n);
		for (int64_t i = 0; i < n * n; i++)
			f[i] -= scale * ac;
		ret = mk_toeplitz_fit(f, n, n, false, p->profile + h * (2 * n - 1), &p->fit[h]);
		if (ret)
			return ret;
	}
	return MK_OK;
}

/* BLAS takes int sizes. */
static int pos_check_blas(const pos_ctx *x)
{
	for (int r = 0; r < MK_POS_NROLES; r++)
		if (x->m[r].rows > INT32_MAX || x->m[r].cols > INT32_MAX)
			return mk_error_set(MK_ERANGE, "'%s': %s '%s' is too large for BLAS "
					    "(%lld x %lld)", pos_file(x), pos_roles[r],
					    x->out->used[r], (long long)x->m[r].rows,
					    (long long)x->m[r].cols);
	return MK_OK;
}

static void pos_release_ctx(pos_ctx *x)
{
	for (int r = 0; r < MK_POS_NROLES; r++)
		mk_matrix_release(&x->m[r]);
	mk_matrix_release(&x->ep);
	mk_matrix_release(&x->wbar);
	mk_matrix_release(&x->q);
	mk_matrix_release(&x->k);
	mk_matrix_release(&x->a);
	mk_matrix_release(&x->c);
	mk_weights_close(x->w);
}

int mk_positional_compute(const char *file, const mk_positional_opts *o, mk_positional *out)
{
	pos_ctx x = {.o = o, .out = out};
	int ret;

	memset(out, 0, sizeof *out);
	if (o->layer < 0)
		return mk_error_set(MK_EINVAL, "layer must be >= 0, got %lld", (long long)o->layer);
	if ((ret = mk_weights_open(file, &x.w)) || (ret = mk_pos_find_all(x.w, o, out)) ||
	    (ret = mk_pos_read_all(x.w, o, out, x.m, x.layout)))
		goto out;
	if ((ret = pos_check_blas(&x)))
		goto out;
	out->n = x.m[MK_POS_POSITION].rows;
	out->e = x.m[MK_POS_POSITION].cols;
	if (out->n < 2) {
		ret = mk_error_set(MK_EFORMAT, "'%s': position embeddings '%s' have n = %lld; "
				   "need at least 2", file, out->used[MK_POS_POSITION],
				   (long long)out->n);
		goto out;
	}
	if ((ret = pos_embed(&x)) || (ret = pos_project(&x)) || (ret = pos_terms(&x)))
		goto out;
out:
	pos_release_ctx(&x);
	if (ret)
		mk_positional_release(out);
	return ret;
}
