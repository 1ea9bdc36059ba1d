/*
 * Fits the TISA positional scoring function f(d) = sum_s a_s exp(-|b_s| (d - c_s)^2)
 * (Wennberg & Henter 2021) to a Toeplitz profile by weighted nonlinear least
 * squares: GSL's Levenberg-Marquardt trust region with an analytic Jacobian,
 * residuals scaled by sqrt(w).
 *
 * The fit runs in scaled units so that one set of tolerances serves every
 * profile: d is mapped to x in [-1, 1], the profile is divided by a power of
 * two near max |t| (exactly undone) and the weights by their sum.  Each kernel
 * is (A, c, u) with b = exp(u) / h^2, h the half-range in d: the log keeps b
 * positive without the kink of |b| at 0 and lets a step cross the orders of
 * magnitude between a spike on one diagonal (b ~ 1) and a kernel spanning 8k
 * diagonals (b ~ 1e-8).  u is clamped where it is used, so exp() never
 * overflows and 0 * inf never occurs.
 *
 * Sums of Gaussians have many local minima, so the fit tries deterministic
 * starting points built from the profile's shape: forward selection (fit
 * one kernel, add the kernel of a small dictionary that best explains what
 * is left, fit two, ...), greedy peeling of the largest values with widths
 * from their half-maxima, the same after a broad kernel for the offset, and
 * centres spread evenly at two widths.  Each start gets TISA_PROBE_ITER
 * iterations; only the best goes on, to TISA_MAX_ITER in all, which bounds
 * the worst case.  Kernels come out ordered by centre.
 *
 * b = 0 is beyond the log's reach, so flat kernels are handled apart: a
 * profile constant on its weighted points is fitted exactly by one, without
 * a search (starts = 0), and a search that ends worse than the weighted mean
 * gives way to the mean as one flat kernel, so r2 >= 0.  A kernel may also
 * run off towards c -> +-inf, b -> 0 with b c fixed: the limit is an
 * exponential trend, which that kernel then approximates.
 */
#include "config.h"
#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "gsl_lazy.h" /* GSL, loaded on first use */
#include "core.h"
#include "weights.h"

#define TISA_STARTS 5
#define TISA_PROBE_ITER 30  /* per start, before the best goes on alone */
#define TISA_MAX_ITER 200   /* for the best start in all */
#define TISA_STALL 5        /* iterations over which ... */
#define TISA_FTOL 1e-8     /* ... the cost must fall by this much (relative) */
/* exp(+-40) spans spikes far narrower than one diagonal to kernels flat over
 * any profile, and keeps beta * (x - c)^2 finite */
#define TISA_U_MAX 40.0
#define TISA_XTOL 1e-10
#define TISA_GTOL 1e-12
/* a kernel whose |a| is below this fraction of max |t| (about) is unused */
#define TISA_A_VISIBLE 1e-6

/* The profile as the fit sees it. */
struct tisa_data {
	const double *t;  /* the profile, unscaled */
	const double *w;  /* the weights, NULL: all 1 */
	const double *sw; /* sqrt(w_i / sum w), the residual scale */
	size_t m;
	int kernels;
	double tscale;    /* a power of 2 that brings max |t| into [0.5, 1) */
	double dx;        /* x_i = -1 + i dx */
	double wmean;     /* weighted mean of t, scaled */
	double wsum;      /* sum w */
	double wtss;      /* sum (w / wsum) (t - weighted mean)^2, scaled */
	bool flat;        /* the points of positive weight all hold t[flat_at] */
	size_t flat_at;
};

static double tisa_beta(double u, bool *clamped)
{
	double v = fmin(fmax(u, -TISA_U_MAX), TISA_U_MAX);
	if (clamped)
		*clamped = v != u;
	return exp(v);
}

/* exp(-z) for z >= 0, 0 where it would be below 1e-304: libm's underflow
 * path is slow, and such terms are nothing next to the profile. */
static double tisa_gauss(double z)
{
	return z > 700 ? 0 : exp(-z);
}

static double tisa_x(const struct tisa_data *dd, size_t i)
{
	return -1.0 + (double)i * dd->dx;
}

/* ||f||^2 at the workspace's point: the scaled wRSS. */
static double tisa_cost(const gsl_multifit_nlinear_workspace *ws)
{
	const gsl_vector *f = gsl_multifit_nlinear_residual(ws);
	double c = 0;
	for (size_t i = 0; i < f->size; i++)
		c += gsl_vector_get(f, i) * gsl_vector_get(f, i);
	return c;
}

static int tisa_f(const gsl_vector *p, void *params, gsl_vector *f)
{
	const struct tisa_data *dd = params;
	double A[MK_TISA_MAX_KERNELS], c[MK_TISA_MAX_KERNELS], beta[MK_TISA_MAX_KERNELS];
	for (int s = 0; s < dd->kernels; s++) {
		A[s] = gsl_vector_get(p, 3 * (size_t)s);
		c[s] = gsl_vector_get(p, 3 * (size_t)s + 1);
		beta[s] = tisa_beta(gsl_vector_get(p, 3 * (size_t)s + 2), NULL);
	}
	for (size_t i = 0; i < dd->m; i++) {
		double x = tisa_x(dd, i), y = 0;
		for (int s = 0; s < dd->kernels; s++)
			y += A[s] * tisa_gauss(beta[s] * (x - c[s]) * (x - c[s]));
		gsl_vector_set(f, i, dd->sw[i] * (y - dd->t[i] * dd->tscale));
	}
	return GSL_SUCCESS;
}

static int tisa_df(const gsl_vector *p, void *params, gsl_matrix *J)
{
	const struct tisa_data *dd = params;
	double A[MK_TISA_MAX_KERNELS], c[MK_TISA_MAX_KERNELS], beta[MK_TISA_MAX_KERNELS];
	bool clamped[MK_TISA_MAX_KERNELS];
	for (int s = 0; s < dd->kernels; s++) {
		A[s] = gsl_vector_get(p, 3 * (size_t)s);
		c[s] = gsl_vector_get(p, 3 * (size_t)s + 1);
		beta[s] = tisa_beta(gsl_vector_get(p, 3 * (size_t)s + 2), &clamped[s]);
	}
	for (size_t i = 0; i < dd->m; i++) {
		double x = tisa_x(dd, i), *row = gsl_matrix_ptr(J, i, 0);
		for (int s = 0; s < dd->kernels; s++) {
			double e = x - c[s], g = dd->sw[i] * tisa_gauss(beta[s] * e * e);
			row[3 * s] = g;
			/* g underflows long before beta * e could overflow */
			row[3 * s + 1] = g == 0 ? 0 : 2 * A[s] * g * beta[s] * e;
			row[3 * s + 2] = g == 0 || clamped[s] ? 0 : -A[s] * g * beta[s] * e * e;
		}
	}
	return GSL_SUCCESS;
}

/* sum_s A_s exp(-beta_s (x - c_s)^2) over the first S kernels of p (scaled). */
static double tisa_model(const double *p, int S, double x)
{
	double y = 0;
	for (int s = 0; s < S; s++) {
		double e = x - p[3 * s + 1];
		y += p[3 * s] * tisa_gauss(tisa_beta(p[3 * s + 2], NULL) * e * e);
	}
	return y;
}

/* r = the scaled profile minus the first S kernels of p. */
static void tisa_residual(const struct tisa_data *dd, const double *p, int S, double *r)
{
	for (size_t i = 0; i < dd->m; i++)
		r[i] = dd->t[i] * dd->tscale - tisa_model(p, S, tisa_x(dd, i));
}

/* Levenberg-Marquardt from p (dd->kernels kernels) for at most maxiter
 * iterations; p becomes the last accepted point, *cost its scaled wRSS and
 * *done whether it stopped by converging rather than by the cap.  GSL_ENOMEM
 * and a failed start are errors; a step that fails midway just ends the run,
 * the last accepted point being as good a result as any. */
static int tisa_lm(const struct tisa_data *dd, double *p, int maxiter, double *cost,
		   int *iters, bool *done)
{
	size_t np = 3 * (size_t)dd->kernels;
	gsl_multifit_nlinear_parameters par = gsl_multifit_nlinear_default_parameters();
	gsl_multifit_nlinear_fdf fdf = {.f = tisa_f, .df = tisa_df, .n = dd->m, .p = np,
					.params = (void *)dd};
	gsl_vector_view v = gsl_vector_view_array(p, np);
	double hist[TISA_STALL] = {0};
	int info, status;
	gsl_multifit_nlinear_workspace *ws;

	par.trs = gsl_multifit_nlinear_trs_lm;
	par.solver = gsl_multifit_nlinear_solver_cholesky;
	ws = gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &par, dd->m, np);
	if (!ws)
		return GSL_ENOMEM;
	status = gsl_multifit_nlinear_init(&v.vector, &fdf, ws);
	*iters = 0;
	*done = false;
	while (status == GSL_SUCCESS && *iters < maxiter && !*done) {
		status = gsl_multifit_nlinear_iterate(ws);
		if (status != GSL_SUCCESS) {
			*done = true;
			status = status == GSL_ENOMEM ? status : GSL_SUCCESS;
			break;
		}
		*cost = tisa_cost(ws);
		/* GSL's test on ||f|| changes is disabled, so stalls are caught here */
		*done = gsl_multifit_nlinear_test(TISA_XTOL, TISA_GTOL, 0, &info, ws) ==
				GSL_SUCCESS ||
			(*iters >= TISA_STALL &&
			 hist[*iters % TISA_STALL] - *cost <= TISA_FTOL * *cost);
		hist[(*iters)++ % TISA_STALL] = *cost;
	}
	if (status == GSL_SUCCESS) {
		gsl_vector_memcpy(&v.vector, gsl_multifit_nlinear_position(ws));
		*cost = tisa_cost(ws);
		status = isfinite(*cost) ? GSL_SUCCESS : GSL_EDOM;
	}
	gsl_multifit_nlinear_free(ws);
	return status;
}

/* Index of the largest |r_i| among points of positive weight. */
static size_t tisa_argmax(const struct tisa_data *dd, const double *r)
{
	size_t best = 0;
	double v = -1;
	for (size_t i = 0; i < dd->m; i++)
		if (dd->sw[i] > 0 && fabs(r[i]) > v) {
			v = fabs(r[i]);
			best = i;
		}
	return best;
}

/* <g, r> and <g, g> in the weighted inner product for g = exp(-beta (x - c)^2),
 * over the points where g is not negligible. */
static void tisa_atom(const struct tisa_data *dd, const double *r, double c, double beta,
		      double *gr, double *gg)
{
	double reach = sqrt(TISA_U_MAX / beta);
	double lo = fmax(ceil((c - reach + 1) / dd->dx), 0);
	double hi = fmin(floor((c + reach + 1) / dd->dx), (double)(dd->m - 1));
	*gr = *gg = 0;
	for (double k = lo; k <= hi; k++) {
		size_t i = (size_t)k;
		double e = tisa_x(dd, i) - c, g = tisa_gauss(beta * e * e);
		double v = dd->sw[i] * dd->sw[i] * g;
		*gr += v * r[i];
		*gg += v * g;
	}
}

/* One step of matching pursuit: into q the kernel of a small dictionary that
 * removes most of the weighted residual r, centred on r's largest value or
 * (when broad) on a grid of 17, half-widths from half a point up by factors
 * of 2 to the whole range. */
static void tisa_pursue(const struct tisa_data *dd, const double *r, double *q)
{
	double peak = tisa_x(dd, tisa_argmax(dd, r)), best = -1, gr, gg;
	q[0] = 1e-3;
	q[1] = peak;
	q[2] = 0;
	for (double hw = dd->dx / 2; hw < 4; hw *= 2)
		for (int j = -1; j <= 16 && (j < 0 || hw >= 0.125); j++) {
			double c = j < 0 ? peak : -1 + j / 8.0, beta = log(2) / (hw * hw);
			tisa_atom(dd, r, c, beta, &gr, &gg);
			if (gg > 0 && gr * gr / gg > best) {
				best = gr * gr / gg;
				q[0] = gr != 0 ? gr / gg : 1e-3;
				q[1] = c;
				q[2] = log(beta);
			}
		}
}

/* Forward selection: kernel s + 1 is the pursuit's answer to what the fit
 * of the first s kernels leaves. */
static int tisa_start_forward(const struct tisa_data *dd, double *r, double *p)
{
	struct tisa_data sub = *dd;
	for (int s = 0; s < dd->kernels; s++) {
		double cost;
		int iters, status;
		bool done;
		tisa_residual(dd, p, s, r);
		tisa_pursue(dd, r, p + 3 * s);
		if (s + 1 == dd->kernels)
			break;
		sub.kernels = s + 1;
		status = tisa_lm(&sub, p, TISA_PROBE_ITER, &cost, &iters, &done);
		if (status == GSL_ENOMEM)
			return status;
	}
	return GSL_SUCCESS;
}

/* Kernels first..S-1 of p, each on the largest value left in r, as wide as
 * its half-maximum, subtracted from r before the next. */
static void tisa_start_peel(const struct tisa_data *dd, double *r, int first, double *p)
{
	for (int s = first; s < dd->kernels; s++) {
		size_t i = tisa_argmax(dd, r), lo = i, hi = i;
		double A = r[i] != 0 ? r[i] : 1e-3, half = fabs(A) / 2, hw, beta;
		while (lo > 0 && r[lo - 1] * A > 0 && fabs(r[lo - 1]) > half)
			lo--;
		while (hi + 1 < dd->m && r[hi + 1] * A > 0 && fabs(r[hi + 1]) > half)
			hi++;
		hw = fmax((double)(hi - lo) / 2, 0.5) * dd->dx;
		beta = log(2) / (hw * hw);
		p[3 * s] = A;
		p[3 * s + 1] = tisa_x(dd, i);
		p[3 * s + 2] = log(beta);
		for (size_t k = 0; k < dd->m; k++) {
			double e = tisa_x(dd, k) - p[3 * s + 1];
			r[k] -= A * tisa_gauss(beta * e * e);
		}
	}
}

/* Centres spread evenly over [-1, 1], amplitudes the profile there, all at
 * exp(-beta x^2). */
static void tisa_start_spread(const struct tisa_data *dd, double beta, double *p)
{
	int S = dd->kernels;
	for (int s = 0; s < S; s++) {
		double c = -1 + (2.0 * s + 1) / S;
		size_t i = (size_t)lround((c + 1) / dd->dx);
		double A = dd->t[i] * dd->tscale;
		p[3 * s] = A != 0 ? A : 1e-3;
		p[3 * s + 1] = c;
		p[3 * s + 2] = log(beta);
	}
}

/* Starting point k of TISA_STARTS into p; r is scratch of m values. */
static int tisa_start(const struct tisa_data *dd, int k, double *r, double *p)
{
	int S = dd->kernels;
	if (k == 0)
		return tisa_start_forward(dd, r, p);
	if (k >= 3) {
		tisa_start_spread(dd, (k == 3 ? 1 : 16) * S * S, p);
		return GSL_SUCCESS;
	}
	tisa_residual(dd, p, 0, r);
	if (k == 2) {
		/* a broad kernel carries the offset: at x = +-1 it is still 0.78 */
		p[0] = dd->wmean != 0 ? dd->wmean : 1e-3;
		p[1] = 0;
		p[2] = log(0.25);
		tisa_residual(dd, p, 1, r);
	}
	tisa_start_peel(dd, r, k == 2, p);
	return GSL_SUCCESS;
}

struct tisa_run {
	double p[3 * MK_TISA_MAX_KERNELS];
	double cost;
	int iters;
	bool done;
};

static int tisa_search_error(int status)
{
	if (status == GSL_ENOMEM)
		return mk_error_set(MK_ENOMEM, "tisa fit: out of memory in GSL");
	return mk_error_set(MK_EINTERNAL, "tisa fit: GSL failed: %s", gsl_strerror(status));
}

/* Runs every start for TISA_PROBE_ITER iterations, then the best of them on
 * to convergence or TISA_MAX_ITER in all. */
static int tisa_search(const struct tisa_data *dd, double *r, double *best, mk_tisa *out)
{
	struct tisa_run run[TISA_STARTS], *win = NULL;
	int status = GSL_SUCCESS, more;
	for (int k = 0; k < TISA_STARTS && status != GSL_ENOMEM; k++) {
		struct tisa_run *u = &run[k];
		out->starts++;
		status = tisa_start(dd, k, r, u->p);
		if (status == GSL_SUCCESS)
			status = tisa_lm(dd, u->p, TISA_PROBE_ITER, &u->cost, &u->iters, &u->done);
		if (status == GSL_SUCCESS && (!win || u->cost < win->cost))
			win = u;
	}
	if (!win || status == GSL_ENOMEM)
		return tisa_search_error(status);
	if (!win->done) {
		status = tisa_lm(dd, win->p, TISA_MAX_ITER - win->iters, &win->cost, &more,
				 &win->done);
		if (status != GSL_SUCCESS)
			return tisa_search_error(status);
		win->iters += more;
	}
	memcpy(best, win->p, 3 * (size_t)dd->kernels * sizeof *best);
	out->iterations = win->iters;
	out->capped = !win->done;
	return MK_OK;
}

/* The weighted mean and spread of the scaled profile (wtss exactly 0 when
 * flat, where rounding could leave crumbs). */
static void tisa_moments(struct tisa_data *dd)
{
	double mean = 0, tss = 0;
	for (size_t i = 0; i < dd->m; i++)
		mean += (dd->w ? dd->w[i] : 1) / dd->wsum * dd->t[i] * dd->tscale;
	for (size_t i = 0; i < dd->m && !dd->flat; i++) {
		double e = dd->t[i] * dd->tscale - mean;
		tss += (dd->w ? dd->w[i] : 1) / dd->wsum * e * e;
	}
	dd->wmean = mean;
	dd->wtss = tss;
}

/* Checks the arguments and fills dd but sw. */
static int tisa_check(const double *t, const double *w, int64_t m, int kernels,
		      const mk_tisa *out, struct tisa_data *dd)
{
	double tmax = 0, sw = 0;
	size_t first = SIZE_MAX;
	bool flat = true;
	int e;
	if (!t || !out)
		return mk_error_set(MK_EINVAL, "tisa fit: %s is NULL", !t ? "the profile" : "out");
	if (kernels < 1 || kernels > MK_TISA_MAX_KERNELS)
		return mk_error_set(MK_EINVAL, "tisa fit: kernels must be 1 to %d, got '%d'",
				    MK_TISA_MAX_KERNELS, kernels);
	if (m < 3 * (int64_t)kernels)
		return mk_error_set(MK_EINVAL,
				    "tisa fit: %d kernels need at least %d points, got '%lld'",
				    kernels, 3 * kernels, (long long)m);
	if (m > 2 * MK_N_MAX - 1)
		return mk_error_set(MK_ERANGE, "tisa fit: at most %lld points, got '%lld'",
				    (long long)(2 * MK_N_MAX - 1), (long long)m);
	for (int64_t i = 0; i < m; i++) {
		double wi = w ? w[i] : 1;
		if (!isfinite(t[i]))
			return mk_error_set(MK_EINVAL, "tisa fit: profile[%lld] is '%g'",
					    (long long)i, t[i]);
		if (!isfinite(wi) || wi < 0)
			return mk_error_set(MK_EINVAL,
					    "tisa fit: weights must be finite and >= 0, "
					    "w[%lld] is '%g'", (long long)i, wi);
		tmax = fmax(tmax, fabs(t[i]));
		sw += wi;
		if (wi > 0) {
			first = first == SIZE_MAX ? (size_t)i : first;
			flat &= t[i] == t[first];
		}
	}
	if (!(sw > 0) || !isfinite(sw))
		return mk_error_set(MK_EINVAL, "tisa fit: the weights sum to '%g'", sw);
	frexp(tmax, &e);
	*dd = (struct tisa_data){.t = t, .w = w, .m = (size_t)m, .kernels = kernels,
				 .tscale = ldexp(1, e < -1000 ? 1000 : -e),
				 .dx = 2.0 / (double)(m - 1), .wsum = sw, .flat = flat,
				 .flat_at = first};
	tisa_moments(dd);
	return MK_OK;
}

static int tisa_cmp_centre(const void *a, const void *b)
{
	const double *x = a, *y = b;
	return (x[1] > y[1]) - (x[1] < y[1]);
}

/* The scaled parameters p back in d units, kernels ordered by centre. */
static void tisa_unscale(const struct tisa_data *dd, int64_t d0, double *p, mk_tisa *out)
{
	double h = (double)(dd->m - 1) / 2, mid = (double)d0 + h;
	qsort(p, (size_t)dd->kernels, 3 * sizeof *p, tisa_cmp_centre);
	out->kernels = dd->kernels;
	for (int s = 0; s < dd->kernels; s++) {
		out->a[s] = p[3 * s] / dd->tscale;
		out->c[s] = mid + h * p[3 * s + 1];
		out->b[s] = tisa_beta(p[3 * s + 2], NULL) / (h * h);
	}
}

/* wRSS and r2 of out, summed in scaled units so that neither overflows. */
static void tisa_score(const struct tisa_data *dd, int64_t d0, mk_tisa *out)
{
	double rss = 0;
	for (size_t i = 0; i < dd->m; i++) {
		double r = (dd->t[i] - mk_tisa_eval(out, (double)d0 + (double)i)) * dd->tscale;
		rss += (dd->w ? dd->w[i] : 1) / dd->wsum * r * r;
	}
	out->wrss = rss * dd->wsum / (dd->tscale * dd->tscale);
	if (dd->wtss > 0)
		out->r2 = 1 - rss / dd->wtss;
	else
		out->r2 = rss == 0 ? 1 : 0;
}

/* One flat kernel (b = 0, out of the search's reach) at value, the others
 * off. */
static void tisa_flat(const struct tisa_data *dd, int64_t d0, double value, mk_tisa *out)
{
	out->kernels = dd->kernels;
	for (int s = 0; s < dd->kernels; s++) {
		out->a[s] = s == 0 ? value : 0;
		out->b[s] = 0;
		out->c[s] = (double)d0 + (double)(dd->m - 1) / 2;
	}
}

/* Kernels of visible amplitude centred outside the data: a trend there,
 * whose c and b mean little on their own (only b c is pinned down). */
static int tisa_outside(const struct tisa_data *dd, int64_t d0, const mk_tisa *out)
{
	int k = 0;
	for (int s = 0; s < out->kernels; s++)
		k += fabs(out->a[s]) * dd->tscale > TISA_A_VISIBLE &&
		     (out->c[s] < (double)d0 || out->c[s] > (double)d0 + (double)(dd->m - 1));
	return k;
}

int mk_tisa_fit(const double *profile, const double *w, int64_t m, int64_t d0, int kernels,
		mk_tisa *out)
{
	struct tisa_data dd;
	double best[3 * MK_TISA_MAX_KERNELS], *buf, *sw;
	int ret = tisa_check(profile, w, m, kernels, out, &dd);
	if (ret != MK_OK)
		return ret;
	memset(out, 0, sizeof *out);
	if (dd.flat) {
		/* the exact fit, without a search */
		tisa_flat(&dd, d0, dd.t[dd.flat_at], out);
		tisa_score(&dd, d0, out);
		return MK_OK;
	}
	if ((ret = mk_gsl_load())) /* with its aborting handler off */
		return ret;
	buf = malloc(2 * dd.m * sizeof *buf);
	if (!buf)
		return mk_error_set(MK_ENOMEM, "tisa fit: cannot allocate %lld points",
				    (long long)m);
	sw = buf + dd.m;
	for (size_t i = 0; i < dd.m; i++)
		sw[i] = sqrt((w ? w[i] : 1) / dd.wsum);
	dd.sw = sw;
	ret = tisa_search(&dd, buf, best, out);
	if (ret == MK_OK) {
		tisa_unscale(&dd, d0, best, out);
		tisa_score(&dd, d0, out);
	}
	if (ret == MK_OK && out->r2 < 0) {
		/* the search only nears b = 0; the weighted mean itself does better */
		tisa_flat(&dd, d0, dd.wmean / dd.tscale, out);
		tisa_score(&dd, d0, out);
		out->r2 = 0;
	}
	out->outside = tisa_outside(&dd, d0, out);
	free(buf);
	return ret;
}

double mk_tisa_eval(const mk_tisa *t, double d)
{
	double y = 0;
	assert(t && t->kernels >= 0 && t->kernels <= MK_TISA_MAX_KERNELS);
	for (int s = 0; s < t->kernels; s++)
		y += t->a[s] * exp(-fabs(t->b[s]) * (d - t->c[s]) * (d - t->c[s]));
	return y;
}
