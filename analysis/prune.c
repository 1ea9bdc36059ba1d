/*
 * From importance to masks (SparseBERT, Shi et al. 2021): P pruned to a
 * target sparsity per entry (DAM_u) or per diagonal (DAM_s), and masks
 * sampled from logits with the Gumbel-sigmoid.
 *
 * Unstructured pruning is a selection, not a sort: each cell gets a 32-bit
 * key that orders floats from the largest down, and the k-th key is found by
 * two histogram passes over the top and bottom 16 bits (a radix select); only
 * when the cut splits a group of equal values is the cell among them found
 * by a scan in index order.  A cell is then kept iff (key, index) <= (k-th
 * key, its index): O(n^2) per level, no n^2 scratch, and levels are nested
 * because they threshold one total order.
 *
 * Diagonal scores are summed in double along each diagonal in row order,
 * whatever the threads, so the ranking does not depend on the thread count
 * and diagonals holding the same values in the same order get bit-equal
 * scores (the tie rule decides, not rounding).  n equal float32 values sum
 * exactly in double, so a diagonal of one value v scores exactly v.
 */
#include "config.h"
#include <math.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "structure.h"

#define PRUNE_BINS 65536
#define PRUNE_TAG_GUMBEL 0x67756d62656cULL /* "gumbel": streams apart from patterns' */
#define PRUNE_PARALLEL_CELLS 65536         /* below this, threads cost more than they save */

/* ---- checks ---------------------------------------------------------------- */

static int prune_check(const float *p, int64_t n, mk_mask *const *out, size_t levels)
{
	int ret;
	if ((ret = mk_check_n(n, "n")))
		return ret;
	if (n > 65535)
		return mk_error_set(MK_ERANGE, "n = %lld is too large to prune: at most 65535 "
				    "(n^2 must fit in 32 bits)", (long long)n);
	for (size_t l = 0; l < levels; l++)
		if (!out[l] || mk_mask_n(out[l]) != n)
			return mk_error_set(MK_EINVAL, "the mask for level %zu is not %lld x %lld",
					    l, (long long)n, (long long)n);
	for (int64_t c = 0; c < n * n; c++)
		if (!isfinite(p[c]))
			return mk_error_set(MK_EINVAL, "element [%lld, %lld] is %s; importance "
					    "must be finite", (long long)(c / n),
					    (long long)(c % n), isnan(p[c]) ? "NaN" : "Inf");
	return MK_OK;
}

/* ---- keys ------------------------------------------------------------------ */

/* Ascending keys list the values from the largest down; -0 keys as +0. */
static inline uint32_t prune_key(float f)
{
	uint32_t u, flip;
	f += 0.0f; /* -0 + 0 = +0; every other value is unchanged */
	memcpy(&u, &f, sizeof u);
	/* negative: all bits flipped, else the sign bit: ascending in f */
	flip = (uint32_t)((int32_t)u >> 31) | 0x80000000u;
	return ~(u ^ flip);
}

/* Cells wanted for a target sparsity, and the slack within which two
 * counts are equally near it: a decimal target such as 0.3 is not exact in
 * binary, and (1 - 0.7) * 25 comes out as 7.500000000000001, which must
 * still count as a tie (so the rule, not rounding, picks the sparser mask).
 * The slack is far below a cell and far above the error of the product. */
static double prune_want(double sparsity, int64_t n, double *slack)
{
	double cells = (double)n * (double)n;
	*slack = 1e-9 + 1e-12 * cells;
	return (1.0 - sparsity) * cells;
}

/* The nearest count to want, a half (within slack) going down. */
static uint64_t prune_nearest(double want, double slack)
{
	double fl = floor(want);
	return (uint64_t)(want - fl > 0.5 + slack ? fl + 1.0 : fl);
}

/* ---- entry mode: a radix select --------------------------------------------- */

typedef struct prune_cut {
	uint64_t k;     /* cells kept */
	uint32_t key;   /* the k-th cell's key and index (k > 0) */
	uint64_t index;
} prune_cut;

/* hist[b] counts the keys whose top 16 bits are b (shift 16), or whose low
 * 16 bits are b among those whose top 16 bits are `top` (shift 0). */
static int prune_hist(const float *p, uint64_t cells, int shift, uint32_t top, uint64_t *hist)
{
	bool failed = false;
	memset(hist, 0, PRUNE_BINS * sizeof *hist);
#pragma omp parallel if (cells >= PRUNE_PARALLEL_CELLS)
	{
		uint32_t *h = calloc(PRUNE_BINS, sizeof *h);
		if (!h) {
#pragma omp atomic write
			failed = true;
		}
		if (h && shift) {
#pragma omp for schedule(static) nowait
			for (uint64_t c = 0; c < cells; c++)
				h[prune_key(p[c]) >> 16]++;
		} else if (h) {
#pragma omp for schedule(static) nowait
			for (uint64_t c = 0; c < cells; c++) {
				uint32_t key = prune_key(p[c]);
				if (key >> 16 == top)
					h[key & 0xffff]++;
			}
		}
#pragma omp critical
		for (size_t b = 0; h && b < PRUNE_BINS; b++)
			hist[b] += h[b];
		free(h);
	}
	return failed ? mk_error_set(MK_ENOMEM, "out of memory for pruning histograms") : MK_OK;
}

/* The bin holding the rank-th key (1-based); *rank becomes the rank in it. */
static uint32_t prune_bin(const uint64_t *hist, uint64_t *rank)
{
	uint32_t b = 0;
	while (hist[b] < *rank)
		*rank -= hist[b++];
	return b;
}

/* The index of the rank-th cell (1-based) whose key is `key`: cells are
 * counted in blocks in parallel, then the block that holds it is scanned. */
static uint64_t prune_nth_equal(const float *p, uint64_t cells, uint32_t key, uint64_t rank)
{
	enum { BLOCKS = 64 };
	uint64_t count[BLOCKS], per = (cells + BLOCKS - 1) / BLOCKS, b = 0, c;
#pragma omp parallel for schedule(static) if (cells >= PRUNE_PARALLEL_CELLS)
	for (int k = 0; k < BLOCKS; k++) {
		uint64_t lo = (uint64_t)k * per, hi = lo + per < cells ? lo + per : cells, m = 0;
		for (uint64_t x = lo; x < hi; x++)
			m += prune_key(p[x]) == key;
		count[k] = m;
	}
	while (count[b] < rank)
		rank -= count[b++];
	for (c = b * per;; c++)
		if (prune_key(p[c]) == key && --rank == 0)
			return c;
}

/* The k-th cell in (key, index) order, 0 < k < cells. */
static int prune_select(const float *p, uint64_t cells, const uint64_t *top_hist,
			uint64_t *low_hist, prune_cut *cut)
{
	uint64_t rank = cut->k;
	uint32_t top = prune_bin(top_hist, &rank), low;
	int ret;
	if ((ret = prune_hist(p, cells, 0, top, low_hist)))
		return ret;
	low = prune_bin(low_hist, &rank);
	cut->key = top << 16 | low;
	/* the scan is needed only when the cut splits a group of equal values */
	cut->index = rank == low_hist[low] ? cells : prune_nth_equal(p, cells, cut->key, rank);
	return MK_OK;
}

/* Row i of every level's mask: a cell is kept iff it comes no later than
 * the level's cut in (key, index) order.  Words are built without branches:
 * near a cut, kept and dropped cells alternate unpredictably. */
static void prune_entry_row(const float *p, int64_t n, int64_t i, const prune_cut *cuts,
			    size_t levels, mk_mask *const *out)
{
	const float *row = p + i * n;
	uint64_t c0 = (uint64_t)(i * n);
	for (int64_t w = 0; w * 64 < n; w++) {
		int64_t j0 = w * 64, j1 = j0 + 64 < n ? j0 + 64 : n;
		uint32_t keys[64];
		for (int64_t j = j0; j < j1; j++)
			keys[j - j0] = prune_key(row[j]);
		for (size_t l = 0; l < levels; l++) {
			const prune_cut *t = &cuts[l];
			uint64_t bits = 0;
			for (int64_t j = j0; t->k && j < j1; j++) {
				uint32_t key = keys[j - j0];
				uint64_t keep = (key < t->key) | ((key == t->key) &
								  (c0 + (uint64_t)j <= t->index));
				bits |= keep << (j & 63);
			}
			mk_mask_row(out[l], i)[w] = bits;
		}
	}
}

static int prune_entry(const float *p, int64_t n, const double *sparsity, size_t levels,
		       mk_mask *const *out)
{
	uint64_t cells = (uint64_t)(n * n), *hist = malloc(2 * PRUNE_BINS * sizeof *hist);
	prune_cut *cuts = calloc(levels, sizeof *cuts);
	int ret = MK_OK;

	if (!hist || !cuts) {
		ret = mk_error_set(MK_ENOMEM, "out of memory for pruning");
		goto out;
	}
	if ((ret = prune_hist(p, cells, 16, 0, hist)))
		goto out;
	for (size_t l = 0; l < levels && !ret; l++) {
		double slack, want = prune_want(sparsity[l], n, &slack);
		cuts[l].k = prune_nearest(want, slack);
		if (cuts[l].k >= cells) {
			cuts[l].k = cells;
			cuts[l].key = UINT32_MAX;
			cuts[l].index = cells;
		} else if (cuts[l].k) {
			ret = prune_select(p, cells, hist, hist + PRUNE_BINS, &cuts[l]);
		}
	}
	if (ret)
		goto out;
#pragma omp parallel for schedule(static) if (cells >= PRUNE_PARALLEL_CELLS)
	for (int64_t i = 0; i < n; i++)
		prune_entry_row(p, n, i, cuts, levels, out);
out:
	free(hist);
	free(cuts);
	return ret;
}

/* ---- diagonal mode (DAM_s) ---------------------------------------------------- */

typedef struct prune_diag {
	int64_t d;    /* offset j - i */
	double score; /* mean of P along it */
} prune_diag;

/* Each thread owns a range of diagonals and walks the band of P they cross
 * row by row, so every diagonal is summed in row order. */
static void prune_scores(const float *p, int64_t n, prune_diag *diag)
{
	int64_t nd = 2 * n - 1;
#pragma omp parallel if (n * n >= PRUNE_PARALLEL_CELLS)
	{
		int64_t t = 0, nt = 1;
#ifdef _OPENMP
		t = omp_get_thread_num();
		nt = omp_get_num_threads();
#endif
		int64_t lo = nd * t / nt, hi = nd * (t + 1) / nt;
		for (int64_t x = lo; x < hi; x++)
			diag[x] = (prune_diag){.d = x - (n - 1), .score = 0.0};
		for (int64_t i = 0; i < n; i++) {
			/* x = j - i + n - 1 in [lo, hi) and j in [0, n) */
			int64_t j0 = lo - (n - 1) + i, j1 = hi - (n - 1) + i;
			j0 = j0 < 0 ? 0 : j0;
			j1 = j1 > n ? n : j1;
			for (int64_t j = j0; j < j1; j++)
				diag[j - i + n - 1].score += (double)p[i * n + j];
		}
		for (int64_t x = lo; x < hi; x++)
			diag[x].score /= (double)(n - llabs(diag[x].d));
	}
}

static int prune_diag_cmp(const void *a, const void *b)
{
	const prune_diag *x = a, *y = b;
	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	if (llabs(x->d) != llabs(y->d))
		return llabs(x->d) < llabs(y->d) ? -1 : 1;
	return (x->d > y->d) - (x->d < y->d);
}

/* Cells that diagonal d adds beyond the border (all of it without one). */
static uint64_t prune_diag_cells(int64_t n, int64_t d, bool border)
{
	int64_t len = n - llabs(d) - (border ? 2 : 0);
	return len > 0 ? (uint64_t)len : 0;
}

static uint64_t prune_border_cells(int64_t n)
{
	return n == 1 ? 1 : (uint64_t)(4 * n - 4);
}

/* The number m of best diagonals whose mask is nearest the target. */
static int64_t prune_choose_m(const prune_diag *rank, int64_t n, bool border, double target)
{
	double slack, want = prune_want(target, n, &slack);
	uint64_t kept = border ? prune_border_cells(n) : 0;
	double best = fabs((double)kept - want);
	int64_t m_best = 0;
	for (int64_t m = 1; m <= 2 * n - 1; m++) {
		kept += prune_diag_cells(n, rank[m - 1].d, border);
		if (fabs((double)kept - want) < best - slack) { /* a tie keeps the sparser */
			best = fabs((double)kept - want);
			m_best = m;
		}
	}
	return m_best;
}

static void prune_diag_row(int64_t n, int64_t i, const uint8_t *keep, bool border, uint64_t *dst)
{
	mk_bits_zero(dst, mk_words(n));
	if (border && (i == 0 || i == n - 1)) {
		mk_bits_set_range(dst, 0, n);
		return;
	}
	for (int64_t j = 0; j < n; j++)
		if (keep[j - i + n - 1])
			mk_bit_set(dst, j);
	if (border) {
		mk_bit_set(dst, 0);
		mk_bit_set(dst, n - 1);
	}
}

static int prune_diagonal(const float *p, int64_t n, const double *sparsity, size_t levels,
			  bool border, mk_mask *const *out, mk_prune_result *r)
{
	int64_t nd = 2 * n - 1;
	prune_diag *diag = malloc((size_t)nd * sizeof *diag);
	uint8_t *keep = malloc((size_t)nd);

	if (!diag || !keep) {
		free(diag);
		free(keep);
		return mk_error_set(MK_ENOMEM, "out of memory for diagonal scores");
	}
	prune_scores(p, n, diag);
	qsort(diag, (size_t)nd, sizeof *diag, prune_diag_cmp);
	for (size_t l = 0; l < levels; l++) {
		r[l].diagonals = prune_choose_m(diag, n, border, sparsity[l]);
		memset(keep, 0, (size_t)nd);
		for (int64_t m = 0; m < r[l].diagonals; m++)
			keep[diag[m].d + n - 1] = 1;
#pragma omp parallel for schedule(static) if (n * n >= PRUNE_PARALLEL_CELLS)
		for (int64_t i = 0; i < n; i++)
			prune_diag_row(n, i, keep, border, mk_mask_row(out[l], i));
	}
	free(diag);
	free(keep);
	return MK_OK;
}

/* ---- results ----------------------------------------------------------------- */

/* Rows 1..n-2 and columns 1..n-2 only: the border is masked off both rows. */
static bool prune_toeplitz_interior(const mk_mask *m, uint64_t *a, uint64_t *b)
{
	int64_t n = mk_mask_n(m);
	size_t nw = mk_words(n);
	for (int64_t i = 1; i + 2 < n; i++) {
		memcpy(a, mk_mask_crow(m, i), nw * sizeof *a);
		memcpy(b, mk_mask_crow(m, i + 1), nw * sizeof *b);
		/* a's columns 1..n-3 meet b's columns 2..n-2 */
		a[0] &= ~(uint64_t)1;
		a[(n - 2) >> 6] &= ~((uint64_t)1 << ((n - 2) & 63));
		a[(n - 1) >> 6] &= ~((uint64_t)1 << ((n - 1) & 63));
		b[0] &= ~(uint64_t)3;
		b[(n - 1) >> 6] &= ~((uint64_t)1 << ((n - 1) & 63));
		if (!mk_rows_toeplitz(a, b, n))
			return false;
	}
	return true;
}

static int prune_measure(const mk_mask *m, double target, mk_prune_result *r)
{
	int64_t n = mk_mask_n(m);
	size_t nw = mk_words(n);
	uint64_t *a = malloc(nw * sizeof *a), *b = malloc(nw * sizeof *b);

	if (!a || !b) {
		free(a);
		free(b);
		return mk_error_set(MK_ENOMEM, "out of memory");
	}
	r->n = n;
	r->target = target;
	r->kept = mk_mask_count(m);
	r->sparsity = 1.0 - (double)r->kept / ((double)n * (double)n);
	r->toeplitz = true;
	for (int64_t i = 0; i + 1 < n && r->toeplitz; i++)
		r->toeplitz = mk_rows_toeplitz(mk_mask_crow(m, i), mk_mask_crow(m, i + 1), n);
	r->toeplitz_interior = r->toeplitz || prune_toeplitz_interior(m, a, b);
	free(a);
	free(b);
	return MK_OK;
}

int mk_prune_levels(const float *p, int64_t n, const double *sparsity, size_t levels,
		    mk_prune_mode mode, bool border, mk_mask *const *out, mk_prune_result *r)
{
	int ret;

	if (levels == 0)
		return MK_OK;
	if ((ret = prune_check(p, n, out, levels)))
		return ret;
	if (mode != MK_PRUNE_ENTRY && mode != MK_PRUNE_DIAGONAL)
		return mk_error_set(MK_EINVAL, "unknown prune mode %d", (int)mode);
	if (border && mode != MK_PRUNE_DIAGONAL)
		return mk_error_set(MK_EINVAL, "the border is kept in diagonal mode only");
	for (size_t l = 0; l < levels; l++) {
		if (!(sparsity[l] >= 0.0 && sparsity[l] <= 1.0))
			return mk_error_set(MK_EINVAL, "sparsity must be in [0, 1], got %g",
					    sparsity[l]);
		r[l] = (mk_prune_result){.diagonals = -1, .expected = NAN};
	}
	ret = mode == MK_PRUNE_ENTRY ? prune_entry(p, n, sparsity, levels, out)
				     : prune_diagonal(p, n, sparsity, levels, border, out, r);
	for (size_t l = 0; l < levels && !ret; l++)
		ret = prune_measure(out[l], sparsity[l], &r[l]);
	return ret;
}

int mk_prune(const float *p, int64_t n, double sparsity, mk_prune_mode mode, bool border,
	     mk_mask *out, mk_prune_result *r)
{
	mk_prune_result tmp;
	return mk_prune_levels(p, n, &sparsity, 1, mode, border, &out, r ? r : &tmp);
}

/* ---- Gumbel-sigmoid (SparseBERT Eq. 6) ------------------------------------------ */

/* Uniform in the open interval (0, 1): 53 random bits and a half step. */
static inline double prune_uniform(mk_rng *g)
{
	return ((double)(mk_rng_next(g) >> 11) + 0.5) * 0x1p-53;
}

static inline double prune_gumbel(mk_rng *g)
{
	return -log(-log(prune_uniform(g)));
}

/* Row i; returns the sum over the row of sigmoid(alpha), for the expectation. */
static double prune_gumbel_row(const float *a, int64_t n, double tau, mk_rng *g, uint64_t *dst)
{
	double expect = 0.0;
	mk_bits_zero(dst, mk_words(n));
	for (int64_t j = 0; j < n; j++) {
		double g1 = prune_gumbel(g), g2 = prune_gumbel(g);
		/* sigmoid(z) > 0.5 iff z > 0; comparing z avoids sigmoid rounding to 0.5 */
		if (((double)a[j] + g1 - g2) / tau > 0.0)
			mk_bit_set(dst, j);
		expect += 1.0 / (1.0 + exp(-(double)a[j]));
	}
	return expect;
}

int mk_gumbel_mask(const float *logits, int64_t n, double tau, uint64_t seed, uint64_t head,
		   mk_mask *out, mk_prune_result *r)
{
	mk_prune_result tmp;
	double *expect, sum = 0.0;
	int ret;

	if (!(tau > 0.0) || !isfinite(tau))
		return mk_error_set(MK_EINVAL, "tau must be a positive number, got %g", tau);
	if ((ret = prune_check(logits, n, &out, 1)))
		return ret;
	/* per-row sums added in row order: the expectation is the same bits on
	 * any number of threads, like the mask */
	if (!(expect = malloc((size_t)n * sizeof *expect)))
		return mk_error_set(MK_ENOMEM, "out of memory");
#pragma omp parallel for schedule(static) if (n * n >= PRUNE_PARALLEL_CELLS)
	for (int64_t i = 0; i < n; i++) {
		mk_rng g;
		mk_rng_seed(&g, seed, PRUNE_TAG_GUMBEL, head * (uint64_t)n + (uint64_t)i);
		expect[i] = prune_gumbel_row(logits + i * n, n, tau, &g, mk_mask_row(out, i));
	}
	for (int64_t i = 0; i < n; i++)
		sum += expect[i];
	free(expect);
	r = r ? r : &tmp;
	*r = (mk_prune_result){.diagonals = -1};
	if ((ret = prune_measure(out, NAN, r)))
		return ret;
	r->expected = 1.0 - sum / ((double)n * (double)n);
	return MK_OK;
}
