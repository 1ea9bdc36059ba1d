/*
 * Sparsity over a data set, the Adaptive Axis Attention paper's Eq. 9:
 * rho = mean over samples i, layers l and heads a of 1 - |B_ila| / N_i^2,
 * with B restricted to the sample's real N_i x N_i tokens, next to the
 * classic figure that counts the whole stored N x N as if every sample were
 * N long.  Data sets are read one (sample, layer) block at a time; patterns
 * are measured once per distinct (expression, length).
 */
#include "config.h"
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "core.h"
#include "expr.h"
#include "measure.h"
#include "data.h"
#include "par.h"
#ifdef _OPENMP
#include <omp.h>
#endif

/* ---- keep rules ---------------------------------------------------------- */

/* Partitions s[lo..hi) around pivot into [> pivot | == pivot | < pivot];
 * *gt and *eq get the ends of the first two parts. */
static void keep_split(float *s, int64_t lo, int64_t hi, float pivot, int64_t *gt, int64_t *eq)
{
	int64_t a = lo, b = lo, c = hi;

	while (b < c) {
		float x = s[b];
		if (x > pivot) {
			s[b++] = s[a];
			s[a++] = x;
		} else if (x < pivot) {
			s[b] = s[--c];
			s[c] = x;
		} else {
			b++;
		}
	}
	*gt = a;
	*eq = b;
}

static float keep_median3(float a, float b, float c)
{
	return a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
}

/* The fewest keys whose mass reaches value times the row's mass, found by
 * selection in O(len) expected time rather than a sort: the count does not
 * depend on how ties are ordered.  A relative slack of 1e-12 keeps rounding
 * from adding keys of zero mass (value 1 keeps exactly the nonzero keys). */
static int64_t keep_top_p(double value, const float *p, int64_t len, float *s)
{
	double total = 0, need;
	int64_t lo = 0, hi = len, kept = 0;

	for (int64_t j = 0; j < len; j++)
		total += p[j];
	if (!(total > 0))
		return 0;
	need = value * total * (1 - 1e-12);
	memcpy(s, p, (size_t)len * sizeof *s);
	while (hi > lo && need > 0) {
		int64_t gt, eq;
		double sum = 0;
		float pivot = keep_median3(s[lo], s[lo + (hi - lo) / 2], s[hi - 1]);
		keep_split(s, lo, hi, pivot, &gt, &eq);
		for (int64_t j = lo; j < gt; j++)
			sum += s[j];
		if (sum >= need && gt > lo) { /* the answer lies among the larger keys */
			hi = gt;
			continue;
		}
		kept += gt - lo;
		need -= sum;
		if (pivot > 0 && (double)pivot * (double)(eq - gt) >= need) {
			double m = ceil(need / (double)pivot); /* <= eq - gt up to rounding */
			return kept + (m < 1 ? 1 : m > (double)(eq - gt) ? eq - gt : (int64_t)m);
		}
		kept += eq - gt;
		need -= (double)pivot * (double)(eq - gt);
		lo = eq;
		if (pivot <= 0)
			break;
	}
	return kept;
}

int64_t mk_keep_count(const mk_keep *k, const float *p, int64_t len, float *scratch)
{
	int64_t c = 0;

	switch (k->rule) {
	case MK_KEEP_TOP_P:
		return keep_top_p(k->value, p, len, scratch);
	case MK_KEEP_THRESHOLD: {
		float t = (float)k->value;
		for (int64_t j = 0; j < len; j++)
			c += p[j] >= t;
		return c;
	}
	default:
		for (int64_t j = 0; j < len; j++)
			c += p[j] != 0;
		return c;
	}
}

static int64_t keep_count_u8(const uint8_t *m, int64_t len)
{
	int64_t c = 0;
	for (int64_t j = 0; j < len; j++)
		c += m[j];
	return c;
}

/* ---- results --------------------------------------------------------------- */

static int dm_alloc(mk_ds_measure *r, int64_t samples, int64_t layers, int64_t heads, int64_t n)
{
	size_t lh = (size_t)(layers * heads);

	memset(r, 0, sizeof *r);
	r->samples = samples;
	r->layers = layers;
	r->heads = heads;
	r->n = n;
	r->by_sample = calloc((size_t)samples, sizeof *r->by_sample);
	r->by_layer = calloc((size_t)layers, sizeof *r->by_layer);
	r->by_head = calloc(lh, sizeof *r->by_head);
	r->lengths = calloc((size_t)samples, sizeof *r->lengths);
	r->toeplitz = malloc(lh);
	if (!r->by_sample || !r->by_layer || !r->by_head || !r->lengths || !r->toeplitz) {
		mk_ds_measure_release(r);
		return mk_error_set(MK_ENOMEM, "out of memory");
	}
	memset(r->toeplitz, MK_TOEPLITZ_YES, lh);
	return MK_OK;
}

void mk_ds_measure_release(mk_ds_measure *m)
{
	if (!m)
		return;
	free(m->by_sample);
	free(m->by_layer);
	free(m->by_head);
	free(m->lengths);
	free(m->toeplitz);
	memset(m, 0, sizeof *m);
}

/* by_head and by_sample hold sums of 1 - |B|/N_i^2 until here. */
static void dm_finish(mk_ds_measure *r, double classic_sum)
{
	double total = 0;
	int64_t s = r->samples, l = r->layers, h = r->heads;

	for (int64_t a = 0; a < l * h; a++) {
		total += r->by_head[a];
		r->by_layer[a / h] += r->by_head[a] / (double)(s * h);
		r->by_head[a] /= (double)s;
	}
	for (int64_t i = 0; i < s; i++)
		r->by_sample[i] /= (double)(l * h);
	r->rho = total / (double)(s * l * h);
	r->rho_classic = classic_sum / (double)(s * l * h);
}

/* ---- data sets ------------------------------------------------------------- */

typedef struct dm_head {
	uint64_t real, full, empty; /* cells kept among the real tokens, in the whole n x n */
	uint8_t toeplitz;           /* MK_TOEPLITZ_* */
} dm_head;

static bool dm_cell(const mk_keep *k, const uint8_t *m, const float *p, int64_t c)
{
	return m ? m[c] != 0 : k->rule == MK_KEEP_THRESHOLD ? p[c] >= (float)k->value : p[c] != 0;
}

/* Whether M[i][j] = M[i-1][j-1] over the real block (MK_TOEPLITZ_YES), or
 * only away from its first and last rows and columns (INTERIOR: DAM_s masks
 * keep those whole); cell rules only (top-p keeps per row: not checked). */
static uint8_t dm_toeplitz(const mk_dataset_block *b, const mk_keep *k, int64_t head)
{
	int64_t n = b->n, len = b->len;
	const uint8_t *m = b->m ? b->m + (uint64_t)head * (uint64_t)(n * n) : NULL;
	const float *p = b->p ? b->p + (uint64_t)head * (uint64_t)(n * n) : NULL;
	uint8_t level = MK_TOEPLITZ_YES;

	if (!m && k->rule == MK_KEEP_TOP_P)
		return MK_TOEPLITZ_NO;
	for (int64_t i = 1; i < len; i++)
		for (int64_t j = 1; j < len; j++) {
			bool inner = i >= 2 && j >= 2 && i <= len - 2 && j <= len - 2;
			if (dm_cell(k, m, p, i * n + j) == dm_cell(k, m, p, (i - 1) * n + j - 1))
				continue;
			if (inner)
				return MK_TOEPLITZ_NO;
			level = MK_TOEPLITZ_INTERIOR;
		}
	return level;
}

/* Cells kept in row p[lo..hi) under a cell rule (threshold or nonzero). */
static int64_t dm_cells(const mk_keep *k, const uint8_t *m, const float *p, int64_t lo, int64_t hi)
{
	if (m)
		return keep_count_u8(m + lo, hi - lo);
	return mk_keep_count(k, p + lo, hi - lo, NULL);
}

static void dm_head_count(const mk_dataset_block *b, const mk_keep *k, int64_t head, float *scratch,
			  dm_head *out)
{
	int64_t n = b->n, len = b->len;
	uint64_t base = (uint64_t)head * (uint64_t)n * (uint64_t)n;
	bool per_row = !b->m && k->rule == MK_KEEP_TOP_P;

	memset(out, 0, sizeof *out);
	for (int64_t i = 0; i < n; i++) {
		const uint64_t off = base + (uint64_t)(i * n);
		const uint8_t *m = b->m ? b->m + off : NULL;
		const float *p = b->p ? b->p + off : NULL;
		int64_t real = 0, full;
		if (per_row) { /* the real row has a mass of its own */
			real = i < len ? mk_keep_count(k, p, len, scratch) : 0;
			full = len == n && i < len ? real : mk_keep_count(k, p, n, scratch);
		} else if (i < len) { /* one pass: the real part, then the padding */
			real = dm_cells(k, m, p, 0, len);
			full = real + dm_cells(k, m, p, len, n);
		} else {
			full = dm_cells(k, m, p, 0, n);
		}
		out->real += (uint64_t)real;
		out->full += (uint64_t)full;
		out->empty += i < len && real == 0;
	}
	out->toeplitz = dm_toeplitz(b, k, head);
}

/* cells of one (sample, layer) block worth a team of threads */
#define DM_PARALLEL_CELLS ((int64_t)1 << 18)

static int dm_block(mk_dataset *d, int64_t s, int64_t l, const mk_keep *k, float *scratch,
		    dm_head *heads)
{
	mk_dataset_block b;
	int ret = mk_dataset_read(d, s, l, &b);

	if (ret)
		return ret;
	if (k->rule == MK_KEEP_TOP_P && b.min < 0) {
		mk_error_set(MK_EFORMAT, "sample %" PRId64 ", layer %" PRId64 " holds %g: the top-p rule "
			     "needs probabilities, no negative values", s, l, (double)b.min);
		return mk_error_param("top_p");
	}
	/* a team per block only where the block is worth one (see measure.c) */
#pragma omp parallel for schedule(dynamic, 1) if (b.heads > 1 && b.heads * b.n * b.n >= DM_PARALLEL_CELLS)
	for (int64_t a = 0; a < b.heads; a++) {
		int t = 0;
#ifdef _OPENMP
		t = omp_get_thread_num();
#endif
		dm_head_count(&b, k, a, scratch + (size_t)t * (size_t)b.n, &heads[a]);
	}
	return MK_OK;
}

/* Errors name the rule as a parameter: "threshold" or "top_p". */
static int dm_check_rule(const mk_dataset_info *in, const mk_keep *k)
{
	const char *rule = k->rule == MK_KEEP_TOP_P ? "top_p" : "threshold";

	if (in->is_float && k->rule == MK_KEEP_NONZERO)
		mk_error_set(MK_EINVAL, "'%s': dataset '%s' holds attention probabilities (%s): give "
			     "a threshold or a top-p rule", in->path, in->name,
			     mk_dtype_name(in->dtype));
	else if (!in->is_float && k->rule != MK_KEEP_NONZERO)
		mk_error_set(MK_EINVAL, "'%s': dataset '%s' holds masks (%s), not attention "
			     "probabilities", in->path, in->name, mk_dtype_name(in->dtype));
	else if (k->rule == MK_KEEP_TOP_P && !(k->value > 0 && k->value <= 1))
		mk_error_set(MK_EINVAL, "the top-p mass must be in (0, 1], got %g", k->value);
	else if (k->rule == MK_KEEP_THRESHOLD && !isfinite(k->value))
		mk_error_set(MK_EINVAL, "the threshold must be a number, got %g", k->value);
	else
		return MK_OK;
	return mk_error_param(rule);
}

/* One (sample, layer) block is one item of mk_par_ordered: counted on the
 * rank that reads it, folded on rank 0 in block order, so the sums are
 * formed in the same order whatever the number of ranks. */
typedef struct dm_job {
	mk_dataset *d;
	const mk_keep *k;
	const mk_dataset_info *in;
	const int64_t *len;
	float *scratch;
	mk_ds_measure *out;
	double classic;
	mk_progress_fn progress;
	void *parg;
} dm_job;

static int dm_work(int64_t item, void *buf, void *arg)
{
	dm_job *j = arg;
	return dm_block(j->d, item / j->in->layers, item % j->in->layers, j->k, j->scratch, buf);
}

static int dm_idle(void *arg)
{
	return mk_dataset_read_none(((dm_job *)arg)->d);
}

static int dm_fold(int64_t item, const void *buf, void *arg)
{
	dm_job *j = arg;
	const dm_head *heads = buf;
	int64_t s = item / j->in->layers, l = item % j->in->layers, h = j->in->heads;
	double ni2 = (double)j->len[s] * (double)j->len[s], n2 = (double)j->in->n * (double)j->in->n;
	mk_ds_measure *out = j->out;

	for (int64_t a = 0; a < h; a++) {
		double rho = 1.0 - (double)heads[a].real / ni2;
		out->by_head[l * h + a] += rho;
		out->by_sample[s] += rho;
		j->classic += 1.0 - (double)heads[a].full / n2;
		out->empty_rows += heads[a].empty;
		if (heads[a].toeplitz < out->toeplitz[l * h + a])
			out->toeplitz[l * h + a] = heads[a].toeplitz;
	}
	if (j->progress && l == j->in->layers - 1)
		j->progress(s + 1, j->in->samples, j->parg);
	return MK_OK;
}

int mk_dataset_measure(mk_dataset *d, const mk_keep *k, mk_progress_fn progress, void *parg,
		       mk_ds_measure *out)
{
	const mk_dataset_info *in = mk_dataset_get_info(d);
	dm_job j = {.d = d, .k = k, .in = in, .len = mk_dataset_lengths(d), .out = out,
		    .progress = progress, .parg = parg};
	int threads = 1, ret;

#ifdef _OPENMP
	threads = omp_get_max_threads();
#endif
	memset(out, 0, sizeof *out);
	if (!(ret = dm_check_rule(in, k)) &&
	    !(ret = dm_alloc(out, in->samples, in->layers, in->heads, in->n)) &&
	    !(j.scratch = malloc((size_t)threads * (size_t)in->n * sizeof *j.scratch)))
		ret = mk_error_set(MK_ENOMEM, "out of memory");
	if (ret == MK_OK)
		memcpy(out->lengths, j.len, (size_t)in->samples * sizeof *j.len);
	if ((ret = mk_par_agree(ret, NULL)) == MK_OK)
		ret = mk_par_ordered(in->samples * in->layers, (size_t)in->heads * sizeof(dm_head),
				     dm_work, dm_idle, dm_fold, &j);
	if (ret == MK_OK) {
		out->bytes = in->bytes;
		dm_finish(out, j.classic);
	} else {
		mk_ds_measure_release(out);
	}
	free(j.scratch);
	return ret;
}

/* ---- patterns at each sample's length ------------------------------------- */

/* *seeded: whether the expression draws from a seed (its masks then differ
 * from head to head, which gets seed + its index, as `gen --heads-file`). */
static int dm_pattern(const char *text, int64_t n, uint64_t seed, uint64_t *count, bool *toeplitz,
		      bool *seeded)
{
	mk_bind_opts bo = {.n = n, .seed = seed};
	mk_expr *e = NULL;
	mk_measure m;
	int ret = mk_expr_parse(text, &e);

	if (ret == MK_OK)
		ret = mk_expr_bind(e, &bo);
	if (ret == MK_OK)
		ret = mk_measure_expr(e, NULL, 0, NULL, NULL, &m);
	if (ret == MK_OK) {
		*count = m.count;
		*toeplitz = m.toeplitz;
		*seeded |= strstr(mk_expr_params(e), "seed=") != NULL;
	}
	mk_expr_free(e);
	return ret;
}

static int dm_cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Index of the first unseeded expression with the same text, so each such
 * text is measured once per length. */
static int64_t dm_first(const char *const *exprs, const bool *seeded, int64_t k)
{
	for (int64_t q = 0; q < k; q++)
		if (!seeded[q] && !strcmp(exprs[q], exprs[k]))
			return q;
	return k;
}

static int64_t dm_find(const int64_t *v, int64_t count, int64_t x)
{
	int64_t lo = 0, hi = count - 1;
	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2;
		if (v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The distinct lengths, ascending; *count of them. */
static int dm_distinct(const int64_t *lengths, int64_t samples, int64_t **out, int64_t *count)
{
	int64_t *v = malloc((size_t)samples * sizeof *v), c = 0;

	if (!v)
		return mk_error_set(MK_ENOMEM, "out of memory");
	memcpy(v, lengths, (size_t)samples * sizeof *v);
	qsort(v, (size_t)samples, sizeof *v, dm_cmp_i64);
	for (int64_t i = 0; i < samples; i++)
		if (c == 0 || v[c - 1] != v[i])
			v[c++] = v[i];
	*out = v;
	*count = c;
	return MK_OK;
}

/* rho[q] = 1 - |M|/n^2 at each distinct length, and at the classic n last. */
static int dm_expr_rhos(const char *text, const int64_t *ns, int64_t count, int64_t n_classic,
			uint64_t seed, double *rho, bool *toeplitz, bool *seeded)
{
	int ret = MK_OK;

	*toeplitz = true;
	*seeded = false;
	for (int64_t q = 0; q <= count && ret == MK_OK; q++) {
		int64_t n = q < count ? ns[q] : n_classic;
		uint64_t c = 0;
		bool toe = false;
		ret = dm_pattern(text, n, seed, &c, &toe, seeded);
		if (ret && q < count) {
			const char *param = mk_error_get()->param;
			mk_error_prefix("'%s' at a sample's length %" PRId64 ": ", text, n);
			if (param && !strcmp(param, "n")) /* the length is the data's, not n */
				mk_error_param(NULL);
		}
		rho[q] = 1.0 - (double)c / ((double)n * (double)n);
		if (q < count)
			*toeplitz &= toe;
	}
	return ret;
}

static int dm_patterns(const char *const *exprs, const int64_t *lengths, const int64_t *ns,
		       int64_t count, uint64_t seed, mk_ds_measure *r, double *classic)
{
	int64_t lh = r->layers * r->heads;
	double *rho = malloc((size_t)lh * (size_t)(count + 1) * sizeof *rho);
	bool *seeded = calloc((size_t)lh, sizeof *seeded);
	int ret = rho && seeded ? MK_OK : mk_error_set(MK_ENOMEM, "out of memory");

	for (int64_t k = 0; k < lh && ret == MK_OK; k++) {
		int64_t q = dm_first(exprs, seeded, k);
		bool toe = true;
		double *row = rho + (size_t)k * (size_t)(count + 1);
		if (q < k)
			memcpy(row, rho + (size_t)q * (size_t)(count + 1),
			       (size_t)(count + 1) * sizeof *row);
		else
			ret = dm_expr_rhos(exprs[k], ns, count, r->n, seed + (uint64_t)k, row, &toe,
					   &seeded[k]);
		r->toeplitz[k] = q < k ? r->toeplitz[q] : toe ? MK_TOEPLITZ_YES : MK_TOEPLITZ_NO;
		*classic += row[count] * (double)r->samples;
		for (int64_t i = 0; ret == MK_OK && i < r->samples; i++) {
			double x = row[dm_find(ns, count, lengths[i])];
			r->by_head[k] += x;
			r->by_sample[i] += x;
		}
	}
	free(rho);
	free(seeded);
	return ret;
}

/* What mk_lengths_measure keeps: per sample its length, rho and a sorted
 * copy; per (layer, head) a rho at each of the count distinct lengths and
 * the classic n, and its results. */
static int dm_lengths_memory(int64_t samples, int64_t lh, int64_t count, uint64_t max_memory)
{
	uint64_t per_sample, rhos, total;
	int ret;

	if ((ret = mk_mul_u64((uint64_t)samples, 3 * sizeof(int64_t), &per_sample)) ||
	    (ret = mk_mul_u64((uint64_t)lh, (uint64_t)(count + 1) * sizeof(double) + 10, &rhos)))
		return ret;
	total = per_sample + rhos;
	if (total < per_sample)
		return mk_error_set(MK_ERANGE, "the measurement's sizes overflow");
	return mk_check_memory(total, max_memory, "measuring the patterns at each sample's length "
			       "(per sample, and per head at each distinct length)");
}

int mk_lengths_measure(const char *const *exprs, int64_t layers, int64_t heads,
		       const int64_t *lengths, int64_t samples, int64_t n_classic, uint64_t seed,
		       uint64_t max_memory, mk_ds_measure *out)
{
	int64_t *ns = NULL, count = 0;
	double classic = 0;
	int ret;

	if (samples < 1 || layers < 1 || heads < 1)
		return mk_error_set(MK_EINVAL, "no samples, layers or heads to measure");
	/* the distinct lengths are not known yet: at most one per sample */
	if ((ret = dm_lengths_memory(samples, layers * heads, 0, max_memory)) ||
	    (ret = dm_alloc(out, samples, layers, heads, 0)))
		return ret;
	memcpy(out->lengths, lengths, (size_t)samples * sizeof *lengths);
	ret = dm_distinct(lengths, samples, &ns, &count);
	if (ret == MK_OK)
		ret = dm_lengths_memory(samples, layers * heads, count, max_memory);
	if (ret == MK_OK) {
		out->n = n_classic ? n_classic : ns[count - 1];
		if (out->n < ns[count - 1])
			ret = mk_error_set(MK_EINVAL, "a sample is %" PRId64 " long, longer than N = "
					   "%" PRId64, ns[count - 1], out->n);
	}
	if (ret == MK_OK)
		ret = dm_patterns(exprs, lengths, ns, count, seed, out, &classic);
	free(ns);
	if (ret) {
		mk_ds_measure_release(out);
		return ret;
	}
	dm_finish(out, classic);
	return MK_OK;
}
