/*
 * What each head does: the per-head numbers of `maskkit heads` over a data
 * set, read once, and the role they give.
 *
 * attn-stats' accumulator (attn_stats.c) already sums what its profile and
 * summary hold -- the mass at each offset j - i with its cell counts, on
 * [CLS] and [SEP], the row entropy -- so prev, next, diag, band, cls, sep
 * and entropy come from it.  The rest needs each row on its own or the
 * sample's tokens: the mass on punctuation, the entropy over ln len, the
 * top-p count (measure's mk_keep_count, so the sparsity is measure's), and
 * the mean map (attn_derive.c's sum).  Each head of a block is summed by one
 * thread into its own slots, in a fixed order: the result does not depend
 * on the number of threads.
 */
#include "config.h"
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "internal.h"
#include "core.h"
#include "attn_maps.h"
#include "weights.h"
#include "heads.h"
#include "attn_stats.h"
#include "head_roles.h"

/* Real cells per block below which the heads are summed on one thread (see
 * attn_stats.c). */
#define HR_PARALLEL_CELLS ((int64_t)1 << 17)

static const char *const hr_names[MK_ROLE_COUNT] = {
	"previous-token", "next-token", "local-band", "cls-sep-sink", "broad", "mixed"};
static const char *const hr_short[MK_ROLE_COUNT] = {"prev", "next", "band", "sink", "broad",
						    "mixed"};

const char *mk_head_role_name(mk_head_role r)
{
	return r >= 0 && r < MK_ROLE_COUNT ? hr_names[r] : "?";
}

const char *mk_head_role_short(mk_head_role r)
{
	return r >= 0 && r < MK_ROLE_COUNT ? hr_short[r] : "?";
}

mk_head_role mk_head_classify(const mk_head_row *r, const mk_head_thresholds *t)
{
	/* written as x >= t so that NaN passes no test */
	if (r->prev >= t->prev)
		return MK_ROLE_PREV;
	if (r->next >= t->next)
		return MK_ROLE_NEXT;
	if (r->band >= t->band)
		return MK_ROLE_LOCAL;
	if (r->cls + r->sep >= t->sink)
		return MK_ROLE_SINK;
	if (r->entropy_norm >= t->broad)
		return MK_ROLE_BROAD;
	return MK_ROLE_MIXED;
}

void mk_head_acc_free(mk_head_acc *a)
{
	if (!a)
		return;
	mk_attn_acc_free(a->stats);
	free(a->punct);
	free(a->hnorm);
	free(a->rho);
	free(a->map);
	free(a->norm_rows);
	free(a->scratch);
	free(a->key_punct);
	free(a);
}

int mk_head_acc_new(int64_t layers, int64_t heads, int64_t n, int64_t m, double top_p,
	       uint64_t max_memory, mk_head_acc **out)
{
	uint64_t lh = (uint64_t)layers * (uint64_t)heads, cells, bytes;
	int threads = 1, ret;
	mk_head_acc *a;

#ifdef _OPENMP
	threads = omp_get_max_threads();
#endif
	*out = NULL;
	/* the mean maps dominate: layers x heads x m x m doubles */
	if ((ret = mk_mul_u64(lh, (uint64_t)m * (uint64_t)m + 3, &cells)) ||
	    (ret = mk_mul_u64(cells, sizeof(double), &bytes)) ||
	    (ret = mk_check_memory(bytes, max_memory ? max_memory : MK_DEFAULT_MAX_MEMORY,
				   "the heads' mean maps and sums")))
		return ret;
	if (!(a = calloc(1, sizeof *a)))
		return mk_error_set(MK_ENOMEM, "out of memory");
	*a = (mk_head_acc){.layers = layers, .heads = heads, .n = n, .m = m,
		      .keep = {.rule = MK_KEEP_TOP_P, .value = top_p}};
	if ((ret = mk_attn_acc_new(layers, heads, n, max_memory, &a->stats))) {
		mk_head_acc_free(a);
		return ret;
	}
	a->punct = calloc(lh, sizeof *a->punct);
	a->hnorm = calloc(lh, sizeof *a->hnorm);
	a->rho = calloc(lh, sizeof *a->rho);
	a->map = calloc(lh * (uint64_t)(m * m), sizeof *a->map);
	a->norm_rows = calloc((size_t)layers, sizeof *a->norm_rows);
	a->scratch = malloc((size_t)threads * (size_t)n * sizeof *a->scratch);
	a->key_punct = calloc((size_t)n, sizeof *a->key_punct);
	if (!a->punct || !a->hnorm || !a->rho || !a->map || !a->norm_rows || !a->scratch ||
	    !a->key_punct) {
		mk_head_acc_free(a);
		return mk_error_set(MK_ENOMEM, "out of memory for the heads' sums");
	}
	*out = a;
	return MK_OK;
}

/* One head's real len x len block p (row stride n): its sums of the mass on
 * punctuation keys (kp: 1 for a punctuation key, or NULL), of each row's
 * entropy over ln len, and the keys top-p keeps. */
static void hr_head(const mk_head_acc *a, const float *p, int64_t len, const uint8_t *kp,
		    float *scratch, double *punct, double *hnorm, uint64_t *kept)
{
	double log_len = log((double)len), ps = 0.0, hs = 0.0;
	uint64_t k = 0;

	for (int64_t i = 0; i < len; i++) {
		const float *row = p + i * a->n;
		double h = 0.0, q = 0.0;
		for (int64_t j = 0; j < len; j++) {
			double v = row[j];
			if (v > 0.0)
				h -= v * log(v);
			if (kp && kp[j])
				q += v;
		}
		ps += q;
		if (len >= 2)
			hs += h / log_len;
		k += (uint64_t)mk_keep_count(&a->keep, row, len, scratch);
	}
	*punct = ps;
	*hnorm = hs;
	*kept = k;
}

int mk_head_acc_add(mk_head_acc *a, const mk_dataset_block *b, const uint8_t *kp)
{
	int64_t len = b->len, heads = a->heads, n = a->n, h;
	double *punct = a->punct + b->layer * heads, *hnorm = a->hnorm + b->layer * heads,
	       *rho = a->rho + b->layer * heads;
	int ret;

	/* attn-stats' sums first: they check every real cell */
	if ((ret = mk_attn_acc_add(a->stats, b)))
		return ret;
#pragma omp parallel for schedule(dynamic, 1) \
	if (heads > 1 && heads * len * len >= HR_PARALLEL_CELLS)
	for (h = 0; h < heads; h++) {
		int t = 0;
		double ps, hs;
		uint64_t kept;
#ifdef _OPENMP
		t = omp_get_thread_num();
#endif
		hr_head(a, b->p + h * n * n, len, kp, a->scratch + (size_t)t * (size_t)n, &ps, &hs,
			&kept);
		punct[h] += ps;
		hnorm[h] += hs;
		/* Eq. 9 per sample, as mk_dataset_measure sums it */
		rho[h] += 1.0 - (double)kept / ((double)len * (double)len);
	}
	if (len >= 2)
		a->norm_rows[b->layer] += (uint64_t)len;
	if (len >= a->m)
		mk_attn_mean_add(b, a->m, a->map + b->layer * heads * a->m * a->m);
	return MK_OK;
}

static double hr_div(double sum, uint64_t count)
{
	return count ? sum / (double)count : NAN;
}

/* The mass within w of the diagonal, from the offset sums: each offset's
 * mean times its cells. */
static double hr_band(const mk_attn_summary *s, int64_t l, int64_t lh, int64_t w)
{
	const double *prof = s->profile + lh * s->width + (s->n - 1);
	const uint64_t *count = s->count + l * s->width + (s->n - 1);
	double sum = 0.0;

	for (int64_t k = -w; k <= w; k++)
		if (k > -s->n && k < s->n && count[k])
			sum += prof[k] * (double)count[k];
	return hr_div(sum, s->rows[l]);
}

int mk_head_acc_finish(mk_head_acc *a, int64_t samples, int64_t map_samples, int64_t w,
		  bool punct, mk_head_row *rows)
{
	mk_attn_summary s;
	int64_t m = a->m, mm = m * m;
	int ret = mk_attn_acc_finish(a->stats, &s);

	for (int64_t l = 0; ret == MK_OK && l < a->layers; l++)
		for (int64_t h = 0; ret == MK_OK && h < a->heads; h++) {
			int64_t lh = l * a->heads + h;
			const mk_attn_head_summary *t = &s.head[lh];
			const double *prof = s.profile + lh * s.width + (s.n - 1);
			double *map = a->map + lh * mm;
			mk_toeplitz fit;
			rows[lh] = (mk_head_row){
				.layer = l, .head = h, .diag = t->diag, .cls = t->first,
				.sep = t->last, .entropy = t->entropy,
				.prev = s.n > 1 ? prof[-1] : NAN, .next = s.n > 1 ? prof[1] : NAN,
				.band = hr_band(&s, l, lh, w),
				.punct = punct ? hr_div(a->punct[lh], s.rows[l]) : NAN,
				.entropy_norm = hr_div(a->hnorm[lh], a->norm_rows[l]),
				.sparsity = hr_div(a->rho[lh], (uint64_t)samples)};
			for (int64_t c = 0; c < mm; c++)
				map[c] /= (double)map_samples;
			if ((ret = mk_toeplitz_fit(map, m, m, false, NULL, &fit)) == MK_OK)
				rows[lh].toeplitz_r2 = fit.r2;
		}
	mk_attn_summary_release(&s);
	return ret;
}
