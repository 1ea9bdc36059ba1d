/*
 * The colour range of a heatmap: which values map to the two ends of the
 * colour map.  Values outside it are drawn in the end colours (clamped).
 *
 * The default is the 1st to the 99th percentile of the finite values shown,
 * because the matrices we draw often have a few entries far from the rest:
 * P = E_P E_P^T of a trained model has P[0,0] many times the next largest
 * entry, and a min-max range then maps everything else to the bottom colour.
 * The percentiles are found by selection (Hoare's quickselect, expected
 * linear time) on a copy, not by sorting, since a panel has up to 2^20
 * values.  Between order statistics they interpolate linearly, as numpy's
 * percentile() does by default, so a Python check can recompute them.
 *
 * When the percentiles coincide but the values do not (a matrix that is
 * 0 but for a few entries) the range falls back to min-max: a range of
 * width 0 would show nothing at all.
 */
#include "config.h"
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "plot_internal.h"

/* A finite double filling all of s, else MK_EINVAL. */
static int range_number(const char *s, const char *end, double *out)
{
	char buf[64], *stop;
	size_t len = (size_t)(end - s);

	if (len == 0 || len >= sizeof buf)
		return MK_EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	*out = strtod(buf, &stop);
	if (*stop || errno || !isfinite(*out) || isspace((unsigned char)buf[0]))
		return MK_EINVAL;
	return MK_OK;
}

int mk_range_parse(const char *s, mk_range *out)
{
	const char *colon;
	double a, b;

	if (!s || !out)
		return mk_error_set(MK_EINVAL, "no colour range given");
	if (!strcmp(s, "minmax")) {
		*out = (mk_range){.kind = MK_RANGE_MINMAX};
		return MK_OK;
	}
	if (s[0] == 'p' && range_number(s + 1, s + strlen(s), &a) == MK_OK) {
		if (!(a >= 0 && a < 50))
			return mk_error_set(MK_EINVAL, "colour range '%s': the percentile N of pN must be "
					    "in [0, 50), got %g", s, a);
		*out = (mk_range){.kind = MK_RANGE_PERCENTILE, .pct = a};
		return MK_OK;
	}
	colon = strchr(s, ':');
	if (colon && range_number(s, colon, &a) == MK_OK &&
	    range_number(colon + 1, s + strlen(s), &b) == MK_OK) {
		if (!(a < b))
			return mk_error_set(MK_EINVAL, "colour range '%s': LO must be below HI", s);
		*out = (mk_range){.kind = MK_RANGE_FIXED, .lo = a, .hi = b};
		return MK_OK;
	}
	return mk_error_set(MK_EINVAL, "colour range '%s' is not LO:HI, minmax or pN (e.g. -1:1, "
			    "p1)", s);
}

void mk_range_describe(const mk_range *r, char *buf, size_t size)
{
	if (r->kind == MK_RANGE_PERCENTILE)
		snprintf(buf, size, "colours p%g-p%g", r->pct, 100 - r->pct);
	else if (r->kind == MK_RANGE_FIXED)
		snprintf(buf, size, "colours %g:%g", r->lo, r->hi);
	else
		snprintf(buf, size, "colours min-max");
}

static void range_swap(double *v, int64_t i, int64_t j)
{
	double t = v[i];
	v[i] = v[j];
	v[j] = t;
}

/* Reorders v[0..n) so that v[k] is its k-th smallest, those before it no
 * larger and those after no smaller (Hoare's selection, median-of-three
 * pivots: sorted or constant input stays linear). */
static void range_select(double *v, int64_t n, int64_t k)
{
	int64_t lo = 0, hi = n - 1;

	while (hi > lo) {
		int64_t mid = lo + (hi - lo) / 2, i = lo, j = hi;
		double pivot;
		if (v[mid] < v[lo])
			range_swap(v, mid, lo);
		if (v[hi] < v[lo])
			range_swap(v, hi, lo);
		if (v[hi] < v[mid])
			range_swap(v, hi, mid);
		pivot = v[mid];
		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j)
				range_swap(v, i++, j--);
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return;
	}
}

double mk_percentile(double *v, int64_t n, double pct)
{
	double pos = pct / 100.0 * (double)(n - 1), frac, next;
	int64_t k = (int64_t)floor(pos);

	if (k >= n - 1) {
		range_select(v, n, n - 1);
		return v[n - 1];
	}
	range_select(v, n, k);
	frac = pos - (double)k;
	if (frac == 0)
		return v[k];
	/* the next order statistic is the least of what lies above v[k] */
	next = v[k + 1];
	for (int64_t q = k + 2; q < n; q++)
		next = v[q] < next ? v[q] : next;
	return v[k] + frac * (next - v[k]);
}

void mk_range_apply(const mk_range *r, const double *v, int64_t n, double *scratch,
		    double *lo, double *hi)
{
	int64_t m = 0;
	double min = INFINITY, max = -INFINITY;

	for (int64_t q = 0; q < n; q++)
		if (isfinite(v[q])) {
			min = v[q] < min ? v[q] : min;
			max = v[q] > max ? v[q] : max;
			if (scratch)
				scratch[m] = v[q];
			m++;
		}
	if (r && r->kind == MK_RANGE_FIXED) {
		*lo = r->lo;
		*hi = r->hi;
		return;
	}
	if (m == 0) {
		*lo = *hi = NAN;
		return;
	}
	*lo = min;
	*hi = max;
	if (r && r->kind == MK_RANGE_PERCENTILE && r->pct > 0 && scratch && min < max) {
		double a = mk_percentile(scratch, m, r->pct);
		double b = mk_percentile(scratch, m, 100 - r->pct);
		if (a < b) {
			*lo = a;
			*hi = b;
		}
	}
}
