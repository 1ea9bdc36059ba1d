/* Unit tests of pruning importance matrices to masks (analysis/prune.c):
 * hand-made known answers, brute-force rankings written independently here,
 * the closest-sparsity choice checked over every m, and the Gumbel sampler's
 * limits, determinism and thread independence. */
#include "config.h"
#include <check.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "h5testutil.h"

static mk_mask *new_mask(int64_t n)
{
	mk_mask *m;
	ck_assert_int_eq(mk_mask_new(n, 0, &m), MK_OK);
	return m;
}

/* Values from a 64-bit LCG in [0, 1), quantised to `levels` steps when
 * levels > 0 so that many cells tie. */
static float *random_p(int64_t n, uint64_t seed, int levels)
{
	float *p = malloc((size_t)(n * n) * sizeof *p);
	ck_assert_ptr_nonnull(p);
	for (int64_t c = 0; c < n * n; c++) {
		double u;
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		u = (double)(seed >> 11) / 9007199254740992.0;
		p[c] = levels ? (float)(floor(u * levels) / levels) : (float)u;
	}
	return p;
}

/* ---- unstructured ----------------------------------------------------------- */

/* P = [[ 9 1 5 3] [12 0 7 2] [ 4 15 6 11] [ 8 13 10 14]]: at sparsity 0.75 the
 * four largest, 15 14 13 12, are kept: (2,1) (3,3) (3,1) (1,0). */
START_TEST(test_entry_hand_4x4)
{
	static const float p[16] = {9, 1, 5, 3, 12, 0, 7, 2, 4, 15, 6, 11, 8, 13, 10, 14};
	mk_mask *m = new_mask(4);
	mk_prune_result r;
	ck_assert_int_eq(mk_prune(p, 4, 0.75, MK_PRUNE_ENTRY, false, m, &r), MK_OK);
	ck_assert_uint_eq(r.kept, 4);
	ck_assert_double_eq(r.sparsity, 0.75);
	ck_assert_int_eq(r.diagonals, -1);
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++)
			ck_assert_int_eq(mk_mask_test(m, i, j), p[i * 4 + j] >= 12);
	/* 0.5: the eight values 8..15 */
	ck_assert_int_eq(mk_prune(p, 4, 0.5, MK_PRUNE_ENTRY, false, m, &r), MK_OK);
	for (int c = 0; c < 16; c++)
		ck_assert_int_eq(mk_mask_test(m, c / 4, c % 4), p[c] >= 8);
	mk_mask_free(m);
}
END_TEST

/* All equal: the first k cells in row-major order; two tied groups: the
 * larger group first, each in index order; -0 ties with +0. */
START_TEST(test_entry_ties_by_index)
{
	float p[25];
	mk_mask *m = new_mask(5);
	mk_prune_result r;
	for (int c = 0; c < 25; c++)
		p[c] = 0.5f;
	ck_assert_int_eq(mk_prune(p, 5, 0.6, MK_PRUNE_ENTRY, false, m, &r), MK_OK);
	ck_assert_uint_eq(r.kept, 10);
	for (int c = 0; c < 25; c++)
		ck_assert_int_eq(mk_mask_test(m, c / 5, c % 5), c < 10);
	for (int c = 0; c < 25; c++)
		p[c] = c % 3 == 0 ? 2.0f : (c % 2 ? 0.0f : -0.0f);
	/* 9 cells hold 2 (c = 0, 3, ..., 24); 13 kept: those and the 4 lowest others */
	ck_assert_int_eq(mk_prune(p, 5, 1.0 - 13.0 / 25.0, MK_PRUNE_ENTRY, false, m, &r), MK_OK);
	ck_assert_uint_eq(r.kept, 13);
	for (int c = 0; c < 25; c++)
		ck_assert_int_eq(mk_mask_test(m, c / 5, c % 5), c % 3 == 0 || c == 1 || c == 2 ||
				 c == 4 || c == 5);
	mk_mask_free(m);
}
END_TEST

/* k is the integer nearest (1 - s) n^2; an exact half rounds to the sparser,
 * also when the decimal target is inexact in binary ((1 - 0.7) * 25 is
 * 7.500000000000001 in double). */
START_TEST(test_entry_nearest_count)
{
	float *p = random_p(3, 1, 0);
	mk_mask *m = new_mask(3);
	mk_prune_result r;
	static const struct { double s; uint64_t k; } cases[] = {
		{0.5, 4}, {0.45, 5}, {0.0, 9}, {1.0, 0}, {1.0 - 4.6 / 9.0, 5}, {1.0 - 4.4 / 9.0, 4}};
	for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
		ck_assert_int_eq(mk_prune(p, 3, cases[t].s, MK_PRUNE_ENTRY, false, m, &r), MK_OK);
		ck_assert_uint_eq(r.kept, cases[t].k);
		ck_assert_uint_eq(mk_mask_count(m), cases[t].k);
	}
	free(p);
	p = random_p(5, 2, 0);
	mk_mask_free(m);
	m = new_mask(5);
	ck_assert_int_eq(mk_prune(p, 5, 0.3, MK_PRUNE_ENTRY, false, m, &r), MK_OK);
	ck_assert_uint_eq(r.kept, 17);
	ck_assert_int_eq(mk_prune(p, 5, 0.7, MK_PRUNE_ENTRY, false, m, &r), MK_OK);
	ck_assert_uint_eq(r.kept, 7); /* 7.5 */
	free(p);
	mk_mask_free(m);
}
END_TEST

typedef struct cell { float v; int64_t c; } cell;

static int cell_cmp(const void *a, const void *b)
{
	const cell *x = a, *y = b;
	if (x->v != y->v)
		return x->v > y->v ? -1 : 1;
	return (x->c > y->c) - (x->c < y->c);
}

/* Against a full sort by (value descending, index ascending), with many
 * ties; the sparsity is within half a cell of every target, and the levels
 * are nested. */
START_TEST(test_entry_matches_sort)
{
	int64_t n = 37, cells = n * n;
	float *p = random_p(n, 7, 20);
	cell *order = malloc((size_t)cells * sizeof *order);
	double levels[9];
	mk_mask *m[9];
	mk_prune_result r[9];

	for (int64_t c = 0; c < cells; c++)
		order[c] = (cell){p[c], c};
	qsort(order, (size_t)cells, sizeof *order, cell_cmp);
	for (int l = 0; l < 9; l++) {
		levels[l] = 0.1 * (l + 1);
		m[l] = new_mask(n);
	}
	ck_assert_int_eq(mk_prune_levels(p, n, levels, 9, MK_PRUNE_ENTRY, false, m, r), MK_OK);
	for (int l = 0; l < 9; l++) {
		double want = (1.0 - levels[l]) * (double)cells;
		ck_assert_double_le(fabs((double)r[l].kept - want), 0.5);
		ck_assert_double_le(fabs(r[l].sparsity - levels[l]), 0.5 / (double)cells);
		for (int64_t k = 0; k < cells; k++)
			ck_assert_int_eq(mk_mask_test(m[l], order[k].c / n, order[k].c % n),
					 (uint64_t)k < r[l].kept);
		if (l > 0) {
			mk_mask *x;
			ck_assert_int_eq(mk_mask_clone(m[l], &x), MK_OK);
			ck_assert_int_eq(mk_mask_andnot(x, m[l - 1]), MK_OK);
			ck_assert_uint_eq(mk_mask_count(x), 0); /* sparser inside denser */
			mk_mask_free(x);
		}
	}
	for (int l = 0; l < 9; l++)
		mk_mask_free(m[l]);
	free(order);
	free(p);
}
END_TEST

/* Many targets on a larger P: always within one entry (half a cell). */
START_TEST(test_entry_within_one)
{
	int64_t n = 301;
	float *p = random_p(n, 3, 0);
	mk_mask *m = new_mask(n);
	mk_prune_result r;
	for (int t = 0; t <= 40; t++) {
		double s = t / 40.0 + (t % 3) * 1e-4;
		s = s > 1.0 ? 1.0 : s;
		ck_assert_int_eq(mk_prune(p, n, s, MK_PRUNE_ENTRY, false, m, &r), MK_OK);
		ck_assert_double_le(fabs((double)r.kept - (1.0 - s) * (double)(n * n)), 0.5);
	}
	free(p);
	mk_mask_free(m);
}
END_TEST

/* ---- structured (DAM_s) --------------------------------------------------------- */

/* Offset d is kept iff its first cell is (no border here). */
static bool diag_kept(const mk_mask *m, int64_t d)
{
	int64_t i = d >= 0 ? 0 : -d;
	return mk_mask_test(m, i, i + d);
}

/* P[i][j] = f(j - i) with distinct f: every m keeps the m largest f. */
START_TEST(test_diagonal_score_order)
{
	int64_t n = 9, nd = 2 * n - 1;
	float p[81], f[17];
	int64_t by_f[17];
	mk_mask *m = new_mask(n);
	mk_prune_result r;

	for (int64_t x = 0; x < nd; x++) {
		f[x] = (float)((x * 7) % nd); /* a permutation of 0..16 */
		by_f[nd - 1 - (x * 7) % nd] = x - (n - 1);
	}
	for (int64_t i = 0; i < n; i++)
		for (int64_t j = 0; j < n; j++)
			p[i * n + j] = f[j - i + n - 1];
	for (int64_t want = 0; want <= nd; want++) {
		uint64_t kept = 0;
		for (int64_t k = 0; k < want; k++)
			kept += (uint64_t)(n - llabs(by_f[k]));
		/* a target hit exactly by the mask of m = want diagonals */
		ck_assert_int_eq(mk_prune(p, n, 1.0 - (double)kept / (double)(n * n),
					  MK_PRUNE_DIAGONAL, false, m, &r), MK_OK);
		ck_assert_uint_eq(r.kept, kept);
		ck_assert(r.toeplitz);
		ck_assert_int_eq(r.diagonals, want); /* each diagonal adds cells: m is unique */
		for (int64_t k = 0; k < nd; k++)
			ck_assert_int_eq(diag_kept(m, by_f[k]), k < want);
	}
	mk_mask_free(m);
}
END_TEST

/* Equal scores: the smaller |d| first, then the negative d. */
START_TEST(test_diagonal_ties)
{
	int64_t n = 6;
	float p[36];
	mk_mask *m = new_mask(n);
	mk_prune_result r;
	for (int c = 0; c < 36; c++)
		p[c] = 1.0f;
	/* keeping 0, -1, +1, -2 is 6 + 5 + 5 + 4 = 20 cells */
	ck_assert_int_eq(mk_prune(p, n, 1.0 - 20.0 / 36.0, MK_PRUNE_DIAGONAL, false, m, &r), MK_OK);
	ck_assert_int_eq(r.diagonals, 4);
	ck_assert_uint_eq(r.kept, 20);
	for (int64_t d = -5; d <= 5; d++)
		ck_assert_int_eq(diag_kept(m, d), d == 0 || d == -1 || d == 1 || d == -2);
	mk_mask_free(m);
}
END_TEST

/* Mean along diagonal d, summed here independently (diagonal by diagonal). */
static double diag_mean(const float *p, int64_t n, int64_t d)
{
	double s = 0.0;
	int64_t len = 0;
	for (int64_t i = 0; i < n; i++)
		if (i + d >= 0 && i + d < n) {
			s += p[i * n + i + d];
			len++;
		}
	return s / (double)len;
}

/* The achieved sparsity is the nearest over every m, by brute force: the
 * mask of each m is built cell by cell here and counted. */
static void check_closest(const float *p, int64_t n, bool border, double target)
{
	int64_t nd = 2 * n - 1, *rank = malloc((size_t)nd * sizeof *rank);
	double *score = malloc((size_t)nd * sizeof *score), best = INFINITY;
	double want = (1.0 - target) * (double)(n * n);
	int64_t best_m = -1;
	mk_mask *m = new_mask(n);
	mk_prune_result r;
	bool *keep = calloc((size_t)nd, sizeof *keep);

	for (int64_t x = 0; x < nd; x++)
		score[x] = diag_mean(p, n, x - (n - 1));
	for (int64_t k = 0; k < nd; k++) { /* selection sort: the best remaining */
		int64_t b = -1;
		for (int64_t x = 0; x < nd; x++) {
			int64_t d = x - (n - 1);
			bool used = false;
			for (int64_t q = 0; q < k; q++)
				used |= rank[q] == d;
			if (!used && (b < 0 || score[x] > score[b] ||
				      (score[x] == score[b] && llabs(d) < llabs(b - (n - 1)))))
				b = x;
		}
		rank[k] = b - (n - 1);
	}
	for (int64_t mm = 0; mm <= nd; mm++) {
		uint64_t kept = 0;
		for (int64_t i = 0; i < n; i++)
			for (int64_t j = 0; j < n; j++) {
				bool on = border && (i == 0 || j == 0 || i == n - 1 || j == n - 1);
				for (int64_t q = 0; q < mm && !on; q++)
					on = rank[q] == j - i;
				kept += on;
			}
		if (fabs((double)kept - want) < best - 1e-6) { /* a tie keeps the smaller m */
			best = fabs((double)kept - want);
			best_m = mm;
		}
	}
	ck_assert_int_eq(mk_prune(p, n, target, MK_PRUNE_DIAGONAL, border, m, &r), MK_OK);
	ck_assert_double_le(fabs(fabs((double)r.kept - want) - best), 1e-6);
	ck_assert_int_eq(r.diagonals, best_m);
	for (int64_t q = 0; q < r.diagonals; q++)
		keep[rank[q] + n - 1] = true;
	for (int64_t i = 0; i < n; i++)
		for (int64_t j = 0; j < n; j++)
			ck_assert_int_eq(mk_mask_test(m, i, j),
					 keep[j - i + n - 1] || (border && (i == 0 || j == 0 ||
									    i == n - 1 || j == n - 1)));
	mk_mask_free(m);
	free(keep);
	free(score);
	free(rank);
}

START_TEST(test_diagonal_closest)
{
	static const int64_t sizes[] = {1, 2, 3, 4, 7, 16};
	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
		float *p = random_p(sizes[s], 11 + s, s % 2 ? 4 : 0);
		for (int t = 0; t <= 20; t++) {
			check_closest(p, sizes[s], false, t / 20.0);
			check_closest(p, sizes[s], true, t / 20.0);
		}
		free(p);
	}
}
END_TEST

/* With the border: all of rows and columns 0 and n-1, Toeplitz inside. */
START_TEST(test_diagonal_border_interior)
{
	int64_t n = 40;
	float *p = random_p(n, 5, 0);
	mk_mask *m = new_mask(n);
	mk_prune_result r;
	for (int t = 1; t < 10; t++) {
		ck_assert_int_eq(mk_prune(p, n, t / 10.0, MK_PRUNE_DIAGONAL, true, m, &r), MK_OK);
		ck_assert(r.toeplitz_interior);
		for (int64_t k = 0; k < n; k++)
			ck_assert(mk_mask_test(m, 0, k) && mk_mask_test(m, n - 1, k) &&
				  mk_mask_test(m, k, 0) && mk_mask_test(m, k, n - 1));
		for (int64_t i = 1; i + 2 < n; i++)
			for (int64_t j = 1; j + 2 < n; j++)
				ck_assert_int_eq(mk_mask_test(m, i, j), mk_mask_test(m, i + 1, j + 1));
	}
	/* s = 1: the border alone, m = 0 */
	ck_assert_int_eq(mk_prune(p, n, 1.0, MK_PRUNE_DIAGONAL, true, m, &r), MK_OK);
	ck_assert_int_eq(r.diagonals, 0);
	ck_assert_uint_eq(r.kept, (uint64_t)(4 * n - 4));
	ck_assert(!r.toeplitz);
	/* without it, whole diagonals: Toeplitz everywhere */
	ck_assert_int_eq(mk_prune(p, n, 0.7, MK_PRUNE_DIAGONAL, false, m, &r), MK_OK);
	ck_assert(r.toeplitz && r.toeplitz_interior);
	for (int64_t i = 0; i + 1 < n; i++)
		for (int64_t j = 0; j + 1 < n; j++)
			ck_assert_int_eq(mk_mask_test(m, i, j), mk_mask_test(m, i + 1, j + 1));
	free(p);
	mk_mask_free(m);
}
END_TEST

/* ---- threads ---------------------------------------------------------------- */

START_TEST(test_threads_do_not_matter)
{
	int64_t n = 300;
	float *p = random_p(n, 9, 50);
	mk_mask *a = new_mask(n), *b = new_mask(n);
	mk_prune_result ra, rb;
	int saved = omp_get_max_threads();
	for (int mode = 0; mode < 3; mode++) {
		omp_set_num_threads(1);
		if (mode == 2)
			ck_assert_int_eq(mk_gumbel_mask(p, n, 1.0, 42, 3, a, &ra), MK_OK);
		else
			ck_assert_int_eq(mk_prune(p, n, 0.37, (mk_prune_mode)mode, mode == 1, a, &ra),
					 MK_OK);
		omp_set_num_threads(5);
		if (mode == 2)
			ck_assert_int_eq(mk_gumbel_mask(p, n, 1.0, 42, 3, b, &rb), MK_OK);
		else
			ck_assert_int_eq(mk_prune(p, n, 0.37, (mk_prune_mode)mode, mode == 1, b, &rb),
					 MK_OK);
		ck_assert(mk_mask_equal(a, b));
		ck_assert_uint_eq(ra.kept, rb.kept);
		ck_assert(mode != 2 || ra.expected == rb.expected);
	}
	omp_set_num_threads(saved);
	free(p);
	mk_mask_free(a);
	mk_mask_free(b);
}
END_TEST

/* ---- Gumbel ------------------------------------------------------------------- */

START_TEST(test_gumbel_limits)
{
	int64_t n = 50;
	float *a = malloc((size_t)(n * n) * sizeof *a);
	mk_mask *m = new_mask(n);
	mk_prune_result r;
	/* |G1 - G2| < 42 for any U in (0, 1) drawn with 53 bits */
	for (int64_t c = 0; c < n * n; c++)
		a[c] = 1000.0f;
	ck_assert_int_eq(mk_gumbel_mask(a, n, 1.0, 1, 0, m, &r), MK_OK);
	ck_assert_uint_eq(r.kept, (uint64_t)(n * n));
	ck_assert_double_eq(r.expected, 0.0);
	for (int64_t c = 0; c < n * n; c++)
		a[c] = -1000.0f;
	ck_assert_int_eq(mk_gumbel_mask(a, n, 1.0, 1, 0, m, &r), MK_OK);
	ck_assert_uint_eq(r.kept, 0);
	ck_assert_double_eq(r.sparsity, 1.0);
	free(a);
	mk_mask_free(m);
}
END_TEST

/* P(kept) = sigmoid(alpha): for alpha = 0.7 over 90000 cells the fraction is
 * within 6 standard deviations (0.0015 each); the same seed gives the same
 * mask, another seed or head another; tau does not change the mask. */
START_TEST(test_gumbel_sampling)
{
	int64_t n = 300;
	float *a = malloc((size_t)(n * n) * sizeof *a);
	mk_mask *m = new_mask(n), *m2 = new_mask(n);
	mk_prune_result r, r2;
	double q = 1.0 / (1.0 + exp(-0.7));
	for (int64_t c = 0; c < n * n; c++)
		a[c] = 0.7f;
	ck_assert_int_eq(mk_gumbel_mask(a, n, 1.0, 7, 0, m, &r), MK_OK);
	ck_assert_double_le(fabs((1.0 - r.sparsity) - q), 6 * sqrt(q * (1 - q) / (double)(n * n)));
	ck_assert_double_le(fabs(r.expected - (1.0 - 1.0 / (1.0 + exp(-(double)0.7f)))), 1e-10);
	ck_assert(isnan(r.target));
	ck_assert_int_eq(mk_gumbel_mask(a, n, 1.0, 7, 0, m2, &r2), MK_OK);
	ck_assert(mk_mask_equal(m, m2));
	ck_assert_int_eq(mk_gumbel_mask(a, n, 0.01, 7, 0, m2, &r2), MK_OK);
	ck_assert(mk_mask_equal(m, m2));
	ck_assert_int_eq(mk_gumbel_mask(a, n, 100.0, 7, 0, m2, &r2), MK_OK);
	ck_assert(mk_mask_equal(m, m2));
	ck_assert_int_eq(mk_gumbel_mask(a, n, 1.0, 8, 0, m2, &r2), MK_OK);
	ck_assert(!mk_mask_equal(m, m2));
	ck_assert_int_eq(mk_gumbel_mask(a, n, 1.0, 7, 1, m2, &r2), MK_OK);
	ck_assert(!mk_mask_equal(m, m2));
	free(a);
	mk_mask_free(m);
	mk_mask_free(m2);
}
END_TEST

/* ---- errors ---------------------------------------------------------------------- */

START_TEST(test_errors)
{
	float p[16] = {0};
	mk_mask *m = new_mask(4), *m5 = new_mask(5);
	mk_prune_result r;
	ck_assert_int_eq(mk_prune(p, 4, 1.5, MK_PRUNE_ENTRY, false, m, &r), MK_EINVAL);
	ck_assert_ptr_nonnull(strstr(mk_error(), "sparsity"));
	ck_assert_int_eq(mk_prune(p, 4, -0.1, MK_PRUNE_ENTRY, false, m, &r), MK_EINVAL);
	ck_assert_int_eq(mk_prune(p, 4, NAN, MK_PRUNE_DIAGONAL, false, m, &r), MK_EINVAL);
	ck_assert_int_eq(mk_prune(p, 4, 0.5, MK_PRUNE_ENTRY, true, m, &r), MK_EINVAL);
	ck_assert_int_eq(mk_prune(p, 4, 0.5, MK_PRUNE_ENTRY, false, m5, &r), MK_EINVAL);
	ck_assert_int_eq(mk_prune(p, 70000, 0.5, MK_PRUNE_ENTRY, false, m, &r), MK_ERANGE);
	ck_assert_int_eq(mk_prune(p, 0, 0.5, MK_PRUNE_ENTRY, false, m, &r), MK_EINVAL);
	p[6] = NAN;
	ck_assert_int_eq(mk_prune(p, 4, 0.5, MK_PRUNE_ENTRY, false, m, &r), MK_EINVAL);
	ck_assert_str_eq(mk_error(), "element [1, 2] is NaN; importance must be finite");
	p[6] = INFINITY;
	ck_assert_int_eq(mk_gumbel_mask(p, 4, 1.0, 0, 0, m, &r), MK_EINVAL);
	p[6] = 0;
	ck_assert_int_eq(mk_gumbel_mask(p, 4, 0.0, 0, 0, m, &r), MK_EINVAL);
	ck_assert_int_eq(mk_gumbel_mask(p, 4, -1.0, 0, 0, m, &r), MK_EINVAL);
	ck_assert_int_eq(mk_gumbel_mask(p, 4, INFINITY, 0, 0, m, &r), MK_EINVAL);
	mk_mask_free(m);
	mk_mask_free(m5);
}
END_TEST

/* ---- files ------------------------------------------------------------------------ */

static void copy_row(void *ctx, int64_t k, int64_t i, uint64_t *dst)
{
	const mk_mask *m = ctx;
	(void)k;
	memcpy(dst, mk_mask_crow(m, i), mk_mask_stride(m) * sizeof *dst);
}

/* P from HDF5 through the tensor reader, the mask back through the mask
 * reader: a 2-D stack is a plain mask file. */
START_TEST(test_h5_round_trip)
{
	char tmp[256], in[300], out[300];
	int64_t n = 12;
	double data[144];
	hsize_t dims[2] = {12, 12};
	mk_tensor t;
	mk_mask *m = new_mask(n), *back;
	mk_prune_result r;
	hid_t f;

	for (int c = 0; c < 144; c++)
		data[c] = (double)((c * 37) % 144) / 144.0;
	h5t_tmpname(tmp, sizeof tmp, "prune_in"); /* the reader wants .h5: a name beside it */
	snprintf(in, sizeof in, "%s.h5", tmp);
	f = h5t_create(in);
	h5t_write(f, "importance", 2, dims, H5T_IEEE_F32LE, data);
	H5Fclose(f);
	snprintf(out, sizeof out, "%s.mask.h5", tmp);
	ck_assert_int_eq(mk_tensor_read(in, 0, &t), MK_OK);
	ck_assert_int_eq(mk_prune(t.data, n, 0.8, MK_PRUNE_DIAGONAL, false, m, &r), MK_OK);
	ck_assert_int_eq(mk_write_stack_h5(out, &(mk_stack){.n = n, .row = copy_row, .ctx = m}),
			 MK_OK);
	ck_assert_int_eq(mk_mask_load(out, 0, &back), MK_OK);
	ck_assert(mk_mask_equal(m, back));
	mk_mask_free(back);
	mk_mask_free(m);
	mk_tensor_release(&t);
	remove(in);
	remove(out);
	remove(tmp);
}
END_TEST

static Suite *prune_suite(void)
{
	Suite *s = suite_create("prune");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_entry_hand_4x4);
	tcase_add_test(tc, test_entry_ties_by_index);
	tcase_add_test(tc, test_entry_nearest_count);
	tcase_add_test(tc, test_entry_matches_sort);
	tcase_add_test(tc, test_entry_within_one);
	tcase_add_test(tc, test_diagonal_score_order);
	tcase_add_test(tc, test_diagonal_ties);
	tcase_add_test(tc, test_diagonal_closest);
	tcase_add_test(tc, test_diagonal_border_interior);
	tcase_add_test(tc, test_threads_do_not_matter);
	tcase_add_test(tc, test_gumbel_limits);
	tcase_add_test(tc, test_gumbel_sampling);
	tcase_add_test(tc, test_errors);
	tcase_add_test(tc, test_h5_round_trip);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return mk_test_main(prune_suite());
}
