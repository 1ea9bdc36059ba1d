/*
 * The centre-distance toy (Ding et al., Fig. 7): the paper's closed forms
 * for c0 - c1 after one attention step on two 1-D clusters, drawn against
 * r = N0 / N1 for several half distances a, and checked against the step
 * itself (mk_toy_distance_step) on every pair of a grid of cluster sizes.
 */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include "explain_toy.h"
#include "internal.h"

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

static int explain_check_lists(const mk_toy_distance_opts *o)
{
	if (o->na < 1 || o->na > MK_TOY_DISTANCE_LIST_MAX)
		return mk_error_set(MK_EINVAL, "between 1 and %d half distances a, got %d",
				    MK_TOY_DISTANCE_LIST_MAX, o->na);
	for (int k = 0; k < o->na; k++)
		if (!(o->a[k] > 0) || !isfinite(o->a[k]))
			return mk_error_set(MK_EINVAL, "a half distance must be positive and "
					    "finite, got %g", o->a[k]);
	if (o->nsizes < 1 || o->nsizes > MK_TOY_DISTANCE_LIST_MAX)
		return mk_error_set(MK_EINVAL, "between 1 and %d check sizes, got %d",
				    MK_TOY_DISTANCE_LIST_MAX, o->nsizes);
	for (int k = 0; k < o->nsizes; k++)
		if (o->sizes[k] < 1 || o->sizes[k] > MK_TOY_DISTANCE_SIZE_MAX)
			return mk_error_set(MK_EINVAL, "a check size must be in [1, %d], got %lld",
					    MK_TOY_DISTANCE_SIZE_MAX, (long long)o->sizes[k]);
	return MK_OK;
}

static int explain_check_opts(const mk_toy_distance_opts *o)
{
	int ret = explain_check_lists(o);
	if (ret)
		return ret;
	if (!(o->r_min > 0) || !(o->r_min < o->r_max) || !isfinite(o->r_max))
		return mk_error_set(MK_EINVAL, "the ratios need 0 < r_min < r_max, finite, "
				    "got %g and %g", o->r_min, o->r_max);
	if (o->nr < 2 || o->nr > MK_TOY_DISTANCE_CURVE_MAX)
		return mk_error_set(MK_EINVAL, "a curve needs 2 to %d points, got %lld",
				    MK_TOY_DISTANCE_CURVE_MAX, (long long)o->nr);
	if (!mk_toy_score_name(o->score))
		return mk_error_set(MK_EINVAL, "unknown score %d", (int)o->score);
	return MK_OK;
}

static void explain_curves(const mk_toy_distance_opts *o, mk_toy_distance_result *out)
{
	double l0 = log10(o->r_min), l1 = log10(o->r_max);

	/* powers of 10, so the decades of 0.01..100:201 come out exact */
	for (int64_t k = 0; k < o->nr; k++)
		out->r[k] = pow(10, l0 + (l1 - l0) * (double)k / (double)(o->nr - 1));
	/* the ends exactly as given, not exp(log(r)) */
	out->r[0] = o->r_min;
	out->r[o->nr - 1] = o->r_max;
	for (int d = 0; d < 2; d++)
		for (int i = 0; i < o->na; i++)
			for (int64_t k = 0; k < o->nr; k++)
				out->curve[d][i * o->nr + k] =
					mk_toy_distance_closed(d, out->r[k], o->a[i]);
}

static int explain_simulate(const mk_toy_distance_opts *o, mk_toy_check *c, double *max_error)
{
	c->r = (double)c->n0 / (double)c->n1;
	for (int d = 0; d < 2; d++) {
		int ret = mk_toy_distance_step(d, o->score, c->n0, c->n1, c->a, &c->simulated[d]);
		if (ret)
			return ret;
		c->closed[d] = mk_toy_distance_closed(d, c->r, c->a);
		if (fabs(c->closed[d] - c->simulated[d]) > max_error[d])
			max_error[d] = fabs(c->closed[d] - c->simulated[d]);
	}
	return MK_OK;
}

int mk_toy_distance(const mk_toy_distance_opts *o, mk_toy_distance_result *out)
{
	int64_t ns = o->nsizes, k = 0;
	int ret;

	*out = (mk_toy_distance_result){.nr = o->nr};
	if ((ret = explain_check_opts(o)))
		return ret;
	out->ncheck = o->na * ns * ns;
	out->r = malloc((size_t)o->nr * sizeof *out->r);
	out->curve[0] = malloc((size_t)(o->na * o->nr) * sizeof *out->curve[0]);
	out->curve[1] = malloc((size_t)(o->na * o->nr) * sizeof *out->curve[1]);
	out->check = malloc((size_t)out->ncheck * sizeof *out->check);
	if (!out->r || !out->curve[0] || !out->curve[1] || !out->check)
		return mk_error_set(MK_ENOMEM, "out of memory for the distance curves");
	explain_curves(o, out);
	for (int i = 0; i < o->na; i++)
		for (int64_t p = 0; p < ns; p++)
			for (int64_t q = 0; q < ns; q++, k++) {
				mk_toy_check *c = &out->check[k];
				*c = (mk_toy_check){.n0 = o->sizes[p], .n1 = o->sizes[q], .a = o->a[i]};
				if ((ret = explain_simulate(o, c, out->max_error)))
					return ret;
			}
	return mk_toy_distance_views(o, out);
}

void mk_toy_distance_release(mk_toy_distance_result *r)
{
	if (!r)
		return;
	free(r->r);
	free(r->curve[0]);
	free(r->curve[1]);
	free(r->check);
	free(r->curves[0]);
	free(r->curves[1]);
	free(r->shown);
	*r = (mk_toy_distance_result){0};
}
