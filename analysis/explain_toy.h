/* Private to the toy models of explaining away (analysis/explain_toy.c,
 * explain_curves.c) and their tests: one attention step, the closed form of
 * the centre distance, and counting clusters. */
#ifndef MK_EXPLAIN_TOY_H
#define MK_EXPLAIN_TOY_H

#include "explain.h"

/* One step x -> y of n points of dim coordinates (y must not overlap x).
 * MK_EINVAL for n < 1 or dim < 1, MK_ENOMEM. */
int mk_toy_step(int dnas, mk_toy_score score, const double *x, int64_t n, int dim, double *y);

#define MK_TOY_DISTANCE_MAX 100000  /* n0 + n1 at most (the step is O(n^2)) */

/*
 * The paper's closed form for the centre distance c0 - c1 after one step,
 * where cluster 0 holds N0 points at +a, cluster 1 holds N1 points at -a,
 * r = N0 / N1 and s = exp(-2a^2):
 *   UNAS: 2r(1 - s^2)a / ((1 + rs)(r + s)),
 *   DNAS: 2qr(1 - s^2)a / ((q + rs)(r + sq)) with q = (r + s) / (rs + 1).
 * Both are unchanged by r -> 1/r and agree at r = 1 (q = 1).  NaN unless
 * r > 0 and r and a are finite.
 */
double mk_toy_distance_closed(int dnas, double r, double a);

/* Simulates that step on the n0 + n1 points themselves and sets *out to
 * the mean of cluster 0's new positions minus cluster 1's.  Both scores
 * give the same step here: with |x_i| = a for every point, x_i . x_j =
 * -|x_i - x_j|^2 / 2 + a^2, and a constant shift of all scores changes
 * neither normalisation.  MK_EINVAL for n0 or n1 below 1 or a not finite,
 * MK_ERANGE above MK_TOY_DISTANCE_MAX points, MK_ENOMEM. */
int mk_toy_distance_step(int dnas, mk_toy_score score, int64_t n0, int64_t n1, double a,
			 double *out);

/* The number of connected components of n points (dim coordinates each)
 * linked when within Euclidean distance tol (single linkage, O(n^2));
 * MK_ENOMEM (negative) when out of memory. */
int64_t mk_toy_clusters(const double *points, int64_t n, int dim, double tol);

/* Fills the result's views for mk_toy_distance_record (explain_toy_out.c). */
int mk_toy_distance_views(const mk_toy_distance_opts *o, mk_toy_distance_result *r);

#endif
