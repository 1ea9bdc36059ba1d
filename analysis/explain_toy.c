/*
 * The two toy models of Ding et al., "Attention that does not Explain
 * Away": the attention step they share, the mode-collapse run (their Fig.
 * 6) and the one-step centre distance it is simulated against
 * (explain_curves.c has the closed forms and the Fig. 7 grid).  Q = K = I,
 * so the scores are the points' own products x_i . x_j, or with the
 * Gaussian-kernel reading -|x_i - x_j|^2 / 2 (a mean shift).
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
#include <string.h>
#include "explain_toy.h"
#include "internal.h"

/* The stream key of the collapse toy's points ("expl"). */
#define EXPLAIN_TAG_COLLAPSE 0x6578706cULL

/* M_PI is POSIX's, not C11's. */
#define EXPLAIN_TWO_PI 6.28318530717958647692

typedef struct explain_pts {
	const double *x;
	int64_t n;
	int dim;
	mk_toy_score score;
} explain_pts;

static double explain_dist2(const double *x, int64_t i, int64_t j, int dim)
{
	double d2 = 0;
	for (int k = 0; k < dim; k++) {
		double d = x[i * dim + k] - x[j * dim + k];
		d2 += d * d;
	}
	return d2;
}

static double explain_score(const explain_pts *p, int64_t i, int64_t j)
{
	const double *xi = p->x + i * p->dim, *xj = p->x + j * p->dim;
	double dot = 0;

	if (p->score == MK_TOY_SCORE_DIST)
		return -0.5 * explain_dist2(p->x, i, j, p->dim);
	for (int k = 0; k < p->dim; k++)
		dot += xi[k] * xj[k];
	return dot;
}

/* L_j = logsumexp over the queries i of s_ij: DNAS's column normaliser.
 * w holds n scores. */
static void explain_col_lse(const explain_pts *p, double *w, double *lse)
{
	for (int64_t j = 0; j < p->n; j++) {
		double m = -INFINITY, sum = 0;
		for (int64_t i = 0; i < p->n; i++) {
			w[i] = explain_score(p, i, j);
			if (w[i] > m)
				m = w[i];
		}
		for (int64_t i = 0; i < p->n; i++)
			sum += exp(w[i] - m);
		lse[j] = m + log(sum);
	}
}

/* Query i's new position sum_j pi_ij x_j, with pi_i the softmax of
 * s_ij - lse[j] (lse NULL for UNAS); w holds n logits. */
static void explain_row(const explain_pts *p, const double *lse, int64_t i, double *w,
			double *y)
{
	double m = -INFINITY, sum = 0;
	int dim = p->dim;

	for (int64_t j = 0; j < p->n; j++) {
		w[j] = explain_score(p, i, j) - (lse ? lse[j] : 0);
		if (w[j] > m)
			m = w[j];
	}
	for (int k = 0; k < dim; k++)
		y[k] = 0;
	for (int64_t j = 0; j < p->n; j++) {
		double e = exp(w[j] - m);
		sum += e;
		for (int k = 0; k < dim; k++)
			y[k] += e * p->x[j * dim + k];
	}
	for (int k = 0; k < dim; k++)
		y[k] /= sum;
}

const char *mk_toy_score_name(mk_toy_score score)
{
	switch (score) {
	case MK_TOY_SCORE_DOT:
		return "dot";
	case MK_TOY_SCORE_DIST:
		return "dist";
	}
	return NULL;
}

int mk_toy_score_parse(const char *s, mk_toy_score *out)
{
	if (!strcmp(s, "dot"))
		*out = MK_TOY_SCORE_DOT;
	else if (!strcmp(s, "dist"))
		*out = MK_TOY_SCORE_DIST;
	else
		return mk_error_set(MK_EINVAL, "unknown score '%s' (known: dot, dist)", s);
	return MK_OK;
}

int mk_toy_step(int dnas, mk_toy_score score, const double *x, int64_t n, int dim, double *y)
{
	explain_pts p = {.x = x, .n = n, .dim = dim, .score = score};
	double *work;

	if (n < 1 || dim < 1)
		return mk_error_set(MK_EINVAL, "a step needs points, got %lld of dimension %d",
				    (long long)n, dim);
	if (!mk_toy_score_name(score))
		return mk_error_set(MK_EINVAL, "unknown score %d", (int)score);
	if ((uint64_t)n > SIZE_MAX / (2 * sizeof *work))
		return mk_error_set(MK_ERANGE, "%lld points are too many", (long long)n);
	work = malloc((size_t)n * 2 * sizeof *work);
	if (!work)
		return mk_error_set(MK_ENOMEM, "out of memory for %lld points", (long long)n);
	if (dnas)
		explain_col_lse(&p, work, work + n);
	for (int64_t i = 0; i < n; i++)
		explain_row(&p, dnas ? work + n : NULL, i, work, y + i * dim);
	free(work);
	return MK_OK;
}

static double explain_mean(const double *y, int64_t from, int64_t to)
{
	double sum = 0;
	for (int64_t i = from; i < to; i++)
		sum += y[i];
	return sum / (double)(to - from);
}

int mk_toy_distance_step(int dnas, mk_toy_score score, int64_t n0, int64_t n1, double a,
			 double *out)
{
	double *x;
	int64_t n;
	int ret;

	if (n0 < 1 || n1 < 1)
		return mk_error_set(MK_EINVAL, "both clusters need a point, got n0 = %lld, n1 = %lld",
				    (long long)n0, (long long)n1);
	if (n0 > MK_TOY_DISTANCE_MAX || n1 > MK_TOY_DISTANCE_MAX - n0)
		return mk_error_set(MK_ERANGE, "n0 + n1 = %lld + %lld is more than %d points",
				    (long long)n0, (long long)n1, MK_TOY_DISTANCE_MAX);
	if (!isfinite(a))
		return mk_error_set(MK_EINVAL, "the half distance a must be finite, got %g", a);
	n = n0 + n1;
	x = malloc((size_t)n * 2 * sizeof *x);
	if (!x)
		return mk_error_set(MK_ENOMEM, "out of memory for %lld points", (long long)n);
	for (int64_t i = 0; i < n; i++)
		x[i] = i < n0 ? a : -a;
	ret = mk_toy_step(dnas, score, x, n, 1, x + n);
	/* The cluster means, not one point each: the test then also sees a
	 * step that moved a cluster's points apart. */
	if (ret == MK_OK)
		*out = explain_mean(x + n, 0, n0) - explain_mean(x + n, n0, n);
	free(x);
	return ret;
}

/* ---- mode collapse ---------------------------------------------------------- */

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

static void explain_collapse_points(uint64_t seed, double sd, double *p)
{
	static const double centre[2][2] = {{1.8, 0.7}, {-1, -1}};
	double z[2];
	mk_rng g;

	mk_rng_seed(&g, seed, EXPLAIN_TAG_COLLAPSE, 0);
	for (int64_t i = 0; i < MK_TOY_COLLAPSE_POINTS; i++) {
		const double *c = centre[i >= MK_TOY_COLLAPSE_BIG];
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

void mk_toy_collapse_opts_init(mk_toy_collapse_opts *o)
{
	*o = (mk_toy_collapse_opts){.seed = MK_TOY_COLLAPSE_SEED, .steps = 4,
				    .score = MK_TOY_SCORE_DOT, .sd = MK_TOY_COLLAPSE_SD};
}

int mk_toy_collapse(int dnas, const mk_toy_collapse_opts *o, double *points, int64_t *clusters)
{
	const int64_t n = MK_TOY_COLLAPSE_POINTS;
	int ret = MK_OK;

	if (o->steps < 0 || o->steps > MK_TOY_COLLAPSE_STEPS_MAX)
		return mk_error_set(MK_EINVAL, "steps must be in [0, %d], got %d",
				    MK_TOY_COLLAPSE_STEPS_MAX, o->steps);
	if (!(o->sd >= 0 && o->sd <= MK_TOY_COLLAPSE_SD_MAX))
		return mk_error_set(MK_EINVAL, "the standard deviation must be in [0, %d], got %g",
				    MK_TOY_COLLAPSE_SD_MAX, o->sd);
	explain_collapse_points(o->seed, o->sd, points);
	for (int t = 0; t <= o->steps && ret == MK_OK; t++) {
		double *x = points + (size_t)t * n * 2;
		if (t > 0 && (ret = mk_toy_step(dnas, o->score, x - n * 2, n, 2, x)))
			break;
		clusters[t] = mk_toy_clusters(x, n, 2, MK_TOY_COLLAPSE_TOL);
		if (clusters[t] < 0)
			ret = (int)clusters[t];
	}
	return ret;
}
