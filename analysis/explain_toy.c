/*
 * The two toy models of Ding et al., "Attention that does not Explain
 * Away": one attention step on two 1-D clusters (the centre distance,
 * their Fig. 7) and four steps on two 2-D Gaussian clouds (mode collapse,
 * their Fig. 6).  Both use Q = K = I and scores s_ij = -|x_i - x_j|^2 / 2,
 * so exp(s_ij) is a Gaussian kernel and one step is a mean shift.
 *
 * UNAS normalises each query row over the keys.  DNAS first normalises
 * each key's column over the queries, xi_ij = exp(s_ij) / sum_i exp(s_ij),
 * then the rows: pi_ij = xi_ij / sum_j xi_ij.  In logs that is
 * pi_ij = softmax_j(s_ij - L_j) with L_j = logsumexp_i s_ij, which is how
 * the step computes it: the scores reach -10^4 for points 140 apart, where
 * exp() alone would underflow to 0/0.
 */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include "internal.h"

/* The stream key of the collapse toy's points ("expl"). */
#define EXPLAIN_TAG_COLLAPSE 0x6578706cULL

#define COLLAPSE_BIG 500
#define COLLAPSE_SMALL 50
#define COLLAPSE_VAR 0.1
#define COLLAPSE_TOL 1e-3
/* M_PI is POSIX's, not C11's. */
#define EXPLAIN_TWO_PI 6.28318530717958647692

static double explain_dist2(const double *x, int64_t i, int64_t j, int dim)
{
	double d2 = 0;
	for (int k = 0; k < dim; k++) {
		double d = x[i * dim + k] - x[j * dim + k];
		d2 += d * d;
	}
	return d2;
}

static double explain_score(const double *x, int64_t i, int64_t j, int dim)
{
	return -0.5 * explain_dist2(x, i, j, dim);
}

/* L_j = logsumexp over the queries i of s_ij: DNAS's column normaliser. */
static void explain_col_lse(const double *x, int64_t n, int dim, double *lse)
{
	for (int64_t j = 0; j < n; j++) {
		double m = -INFINITY, sum = 0;
		for (int64_t i = 0; i < n; i++) {
			double s = explain_score(x, i, j, dim);
			if (s > m)
				m = s;
		}
		for (int64_t i = 0; i < n; i++)
			sum += exp(explain_score(x, i, j, dim) - m);
		lse[j] = m + log(sum);
	}
}

/* Query i's new position sum_j pi_ij x_j, with pi_i the softmax of
 * s_ij - lse[j] (lse NULL for UNAS); w holds n logits. */
static void explain_row(const double *x, int64_t n, int dim, const double *lse, int64_t i,
			double *w, double *y)
{
	double m = -INFINITY, sum = 0;
	for (int64_t j = 0; j < n; j++) {
		w[j] = explain_score(x, i, j, dim) - (lse ? lse[j] : 0);
		if (w[j] > m)
			m = w[j];
	}
	for (int k = 0; k < dim; k++)
		y[k] = 0;
	for (int64_t j = 0; j < n; j++) {
		double e = exp(w[j] - m);
		sum += e;
		for (int k = 0; k < dim; k++)
			y[k] += e * x[j * dim + k];
	}
	for (int k = 0; k < dim; k++)
		y[k] /= sum;
}

/* One simultaneous attention step x -> y (n points of dim coordinates);
 * work holds 2n doubles. */
static void explain_step(int dnas, const double *x, int64_t n, int dim, double *y, double *work)
{
	double *lse = dnas ? work + n : NULL;
	if (lse)
		explain_col_lse(x, n, dim, lse);
	for (int64_t i = 0; i < n; i++)
		explain_row(x, n, dim, lse, i, work, y + i * dim);
}

double mk_toy_distance_closed(int dnas, double r, double a)
{
	double s = exp(-2 * a * a), q;
	if (!(r > 0) || !isfinite(r) || !isfinite(a))
		return NAN;
	if (!dnas)
		return 2 * r * (1 - s * s) * a / ((1 + r * s) * (r + s));
	q = (r + s) / (r * s + 1);
	return 2 * q * r * (1 - s * s) * a / ((q + r * s) * (r + s * q));
}

static double explain_mean(const double *y, int64_t from, int64_t to)
{
	double sum = 0;
	for (int64_t i = from; i < to; i++)
		sum += y[i];
	return sum / (double)(to - from);
}

int mk_toy_distance_step(int dnas, int64_t n0, int64_t n1, double a, double *out)
{
	double *x, *y, *work;
	int64_t n;

	if (n0 < 1 || n1 < 1)
		return mk_error_set(MK_EINVAL, "both clusters need a point, got n0 = %lld, n1 = %lld",
				    (long long)n0, (long long)n1);
	if (n0 > MK_TOY_DISTANCE_MAX || n1 > MK_TOY_DISTANCE_MAX - n0)
		return mk_error_set(MK_ERANGE, "n0 + n1 = %lld + %lld is more than %d points",
				    (long long)n0, (long long)n1, MK_TOY_DISTANCE_MAX);
	if (!isfinite(a))
		return mk_error_set(MK_EINVAL, "the half distance a must be finite, got %g", a);
	n = n0 + n1;
	x = malloc((size_t)n * 4 * sizeof *x);
	if (!x)
		return mk_error_set(MK_ENOMEM, "out of memory for %lld points", (long long)n);
	y = x + n;
	work = y + n;
	for (int64_t i = 0; i < n; i++)
		x[i] = i < n0 ? a : -a;
	explain_step(dnas, x, n, 1, y, work);
	/* The cluster means, not one point each: the test then also sees a
	 * step that moved a cluster's points apart. */
	*out = explain_mean(y, 0, n0) - explain_mean(y, n0, n);
	free(x);
	return MK_OK;
}

/* A standard normal pair by Box-Muller; the uniforms lie in (0, 1), never
 * 0, so log(u1) is finite. */
static void explain_normal2(mk_rng *g, double *z)
{
	double u1 = ((double)(mk_rng_next(g) >> 11) + 0.5) * 0x1p-53;
	double u2 = ((double)(mk_rng_next(g) >> 11) + 0.5) * 0x1p-53;
	double rad = sqrt(-2 * log(u1));
	z[0] = rad * cos(EXPLAIN_TWO_PI * u2);
	z[1] = rad * sin(EXPLAIN_TWO_PI * u2);
}

static void explain_collapse_points(uint64_t seed, double *p)
{
	static const double centre[2][2] = {{1.8, 0.7}, {-1, -1}};
	double sd = sqrt(COLLAPSE_VAR), z[2];
	mk_rng g;

	mk_rng_seed(&g, seed, EXPLAIN_TAG_COLLAPSE, 0);
	for (int64_t i = 0; i < MK_TOY_COLLAPSE_POINTS; i++) {
		const double *c = centre[i >= COLLAPSE_BIG];
		explain_normal2(&g, z);
		p[2 * i] = c[0] + sd * z[0];
		p[2 * i + 1] = c[1] + sd * z[1];
	}
}

static int64_t explain_find(int64_t *parent, int64_t i)
{
	while (parent[i] != i) {
		parent[i] = parent[parent[i]];
		i = parent[i];
	}
	return i;
}

int64_t mk_toy_clusters(const double *points, int64_t n, int dim, double tol)
{
	int64_t *parent = malloc((size_t)(n > 0 ? n : 1) * sizeof *parent), count = n;

	if (!parent)
		return mk_error_set(MK_ENOMEM, "out of memory for %lld points", (long long)n);
	for (int64_t i = 0; i < n; i++)
		parent[i] = i;
	for (int64_t i = 0; i < n; i++)
		for (int64_t j = i + 1; j < n; j++) {
			int64_t ri, rj;
			if (explain_dist2(points, i, j, dim) > tol * tol)
				continue;
			ri = explain_find(parent, i);
			rj = explain_find(parent, j);
			if (ri != rj) {
				parent[ri] = rj;
				count--;
			}
		}
	free(parent);
	return count;
}

int mk_toy_collapse(int dnas, uint64_t seed, int steps, double *points, int64_t *clusters)
{
	const int64_t n = MK_TOY_COLLAPSE_POINTS;
	double *work;

	if (steps < 0 || steps > MK_TOY_COLLAPSE_STEPS_MAX)
		return mk_error_set(MK_EINVAL, "steps must be in [0, %d], got %d",
				    MK_TOY_COLLAPSE_STEPS_MAX, steps);
	work = malloc(2 * (size_t)n * sizeof *work);
	if (!work)
		return mk_error_set(MK_ENOMEM, "out of memory for the collapse toy");
	explain_collapse_points(seed, points);
	for (int t = 0; t <= steps; t++) {
		double *x = points + (size_t)t * n * 2;
		if (t > 0)
			explain_step(dnas, x - n * 2, n, 2, x, work);
		clusters[t] = mk_toy_clusters(x, n, 2, COLLAPSE_TOL);
		if (clusters[t] < 0) {
			int ret = (int)clusters[t];
			free(work);
			return ret;
		}
	}
	free(work);
	return MK_OK;
}
