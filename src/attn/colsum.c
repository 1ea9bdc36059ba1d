/*
 * Column sums of the attention matrix pi, sum_i pi_ij, for "explaining
 * away" (Ding et al.): a key whose column sum is tiny passes almost nothing
 * on.  pi is never formed.  Every normalisation leaves pi_ij = exp(s_ij -
 * f_i - g_j) (attn.h), so log sum_i pi_ij = LSE_i (s_ij - f_i) - g_j
 * is one more column pass of the CPU kernels after the scalings themselves:
 * O(n) memory beyond Q and K, the mask restricting every pass.
 */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include "attn_internal.h"

typedef struct colsum_ws {
	mk_attn_slice x;
	float *f, *g, *c, *fnew; /* n each */
} colsum_ws;

/* |exp(a - b) - 1| over the entries where both are finite (rows and
 * columns with no entry are left out): the marginal error of rows (a = new
 * f, b = old f) or columns (a = column pass, b = g). */
static void colsum_residual(const float *a, const float *b, int64_t n, double *mx, double *mean)
{
	double sum = 0, top = 0;
	int64_t cnt = 0;

	for (int64_t i = 0; i < n; i++) {
		double r;
		if (!isfinite(a[i]) || !isfinite(b[i]))
			continue;
		r = fabs(expm1((double)a[i] - (double)b[i]));
		top = r > top ? r : top;
		sum += r;
		cnt++;
	}
	*mx = top;
	*mean = cnt ? sum / (double)cnt : 0.0;
}

/* rounds of (column, row) scaling from f = 0, then c = LSE_i (s - f):
 * after it, log column sum = c - g.  trace (rounds entries) may be NULL. */
static int colsum_sinkhorn(colsum_ws *w, int rounds, mk_sinkhorn_step *trace)
{
	const mk_attn_slice *x = &w->x;
	int ret;

	for (int64_t i = 0; i < x->n; i++)
		w->f[i] = 0.0f;
	ret = mk_cpu_tiles_col_pass(x, w->f, w->g);
	for (int r = 0; r < rounds && ret == MK_OK; r++) {
		float *t;
		if (r > 0) { /* the last column pass is this round's scaling */
			t = w->g;
			w->g = w->c;
			w->c = t;
		}
		if ((ret = mk_cpu_tiles_row_pass(x, w->g, w->fnew, false)))
			break;
		if (trace)
			colsum_residual(w->fnew, w->f, x->n, &trace[r].row_max, &trace[r].row_mean);
		t = w->f;
		w->f = w->fnew;
		w->fnew = t;
		if ((ret = mk_cpu_tiles_col_pass(x, w->f, w->c)))
			break;
		if (trace)
			colsum_residual(w->c, w->g, x->n, &trace[r].col_max, &trace[r].col_mean);
	}
	return ret;
}

/* out_j = c_j - g_j (g NULL: 0); -inf for a column with no entry. */
static int colsum_finish(const colsum_ws *w, const float *g, double *out)
{
	for (int64_t j = 0; j < w->x.n; j++) {
		double c = w->c[j], gj = g ? g[j] : 0.0;
		if (isinf(c) && c < 0) {
			out[j] = -INFINITY;
			continue;
		}
		out[j] = c - gj;
		if (!isfinite(out[j]))
			return mk_error_set(MK_ERANGE, "attention scores overflow float32 (the inputs "
					    "are too large)");
	}
	return MK_OK;
}

static int colsum_softmax(colsum_ws *w, double *out)
{
	int ret = mk_cpu_tiles_row_pass(&w->x, NULL, w->f, false);
	if (ret == MK_OK)
		ret = mk_cpu_tiles_col_pass(&w->x, w->f, w->c);
	return ret ? ret : colsum_finish(w, NULL, out);
}

/* hnas: pi = u pi^D + (1 - u) pi^U, so its column sums mix linearly. */
static int colsum_hnas(colsum_ws *w, double u, double *out)
{
	double *soft = malloc((size_t)w->x.n * sizeof *soft);
	int ret;

	if (!soft)
		return mk_error_set(MK_ENOMEM, "out of memory for hnas column sums");
	ret = colsum_softmax(w, soft);
	if (ret == MK_OK && (ret = colsum_sinkhorn(w, 1, NULL)) == MK_OK)
		ret = colsum_finish(w, w->g, out);
	for (int64_t j = 0; ret == MK_OK && j < w->x.n; j++) {
		double a = log(u) + out[j], b = log1p(-u) + soft[j];
		double m = a > b ? a : b;
		out[j] = isinf(m) && m < 0 ? -INFINITY : m + log(exp(a - m) + exp(b - m));
	}
	free(soft);
	return ret;
}

int mk_attn_colsums(const mk_norm *norm, int64_t n, int64_t d, const float *q, const float *k,
		    const mk_attn_layout *mask, double *logcol, mk_sinkhorn_step *trace)
{
	colsum_ws w = {.x = {.n = n, .kv = n, .d = d, .scale = (float)(1.0 / sqrt((double)d)), .q = q,
			     .k = k, .mask = mask,
			     .kernel = mask ? MK_KERNEL_BLOCK : MK_KERNEL_DENSE}};
	float *buf;
	int ret;

	if ((ret = mk_norm_check(norm)))
		return ret;
	if (n < 1 || d < 1)
		return mk_error_set(MK_EINVAL, "column sums need n >= 1 and d >= 1, got n = %lld, "
				    "d = %lld", (long long)n, (long long)d);
	if (mask && (mk_attn_layout_n(mask) != n || mk_attn_layout_kv_len(mask) != n))
		return mk_error_set(MK_EINVAL, "the mask has n = %lld but the tensors n = %lld",
				    (long long)mk_attn_layout_n(mask), (long long)n);
	if ((ret = mk_attn_check_scores(&(mk_attn_shape){.batch = 1, .heads = 1, .n = n, .d = d}, q, k)))
		return ret;
	if (!(buf = malloc((size_t)n * 4 * sizeof *buf)))
		return mk_error_set(MK_ENOMEM, "out of memory for column sums (n = %lld)",
				    (long long)n);
	w.f = buf;
	w.g = buf + n;
	w.c = buf + 2 * n;
	w.fnew = buf + 3 * n;
	switch (norm->kind) {
	case MK_NORM_SOFTMAX:
		ret = colsum_softmax(&w, logcol);
		break;
	case MK_NORM_HNAS:
		ret = colsum_hnas(&w, norm->u, logcol);
		break;
	default: { /* dnas, sinkhorn: checked above */
		int rounds = norm->kind == MK_NORM_DNAS ? 1 : norm->iters;
		if ((ret = colsum_sinkhorn(&w, rounds, trace)) == MK_OK)
			ret = colsum_finish(&w, w.g, logcol);
	}
	}
	free(buf);
	return ret;
}
