/*
 * Sparsity values, the one parser of every --sparsity (sweep's targets,
 * prune's levels).  The brief writes `maskkit sweep --sparsity 10..90`, and
 * 10..90 can only mean percentages, so the rule reads one option value as a
 * whole: if any bare number in it is above 1, every bare number is a
 * percentage (10..90 is 10%..90%, 1..99 is 1%..99%); otherwise the bare
 * numbers are fractions (0.1..0.9).  N% is a percentage whatever the rest
 * says.  A bare number above 1 beside an N% is refused: 10%..90 reads as a
 * slip, and guessing would hide it.
 */
#include "config.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

#define SPARSITY_STEP 0.1 /* of A..B without :STEP (10%) */

/* One number of the option's text all: s[0..len), with or without '%'. */
typedef struct spar_num {
	double v;
	bool pct;
} spar_num;

static int spar_number(const char *all, const char *s, size_t len, const char *opt, spar_num *out)
{
	char buf[64], *end;

	out->pct = len > 1 && s[len - 1] == '%';
	if (out->pct)
		len--;
	if (len == 0 || len >= sizeof buf)
		goto bad;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	out->v = strtod(buf, &end);
	if (*end || errno || !isfinite(out->v) || strspn(buf, " \t"))
		goto bad;
	return MK_OK;
bad:
	return mk_error_set(MK_EINVAL, "%s expects S, S1,S2,... or A..B[:STEP] of numbers (0.1, "
			    "10) or percentages (10%%), got '%s'", opt, all);
}

/* Calls fn on each number of s (a range's A, B and STEP, or a list's
 * items) in order; stops at the first status. */
typedef int (*spar_fn)(const char *all, const char *at, size_t len, const spar_num *x,
		       void *arg);

static int spar_each(const char *s, const char *opt, spar_fn fn, void *arg)
{
	const char *dots = strstr(s, ".."), *p = s, *end = s + strlen(s);
	const char *stops[3];
	size_t nstops = 0;
	spar_num x;
	int ret;

	if (dots) {
		const char *colon = strchr(dots + 2, ':');
		stops[nstops++] = dots;
		stops[nstops++] = colon ? colon : end;
		if (colon)
			stops[nstops++] = end;
		for (size_t k = 0; k < nstops; k++) {
			if ((ret = spar_number(s, p, (size_t)(stops[k] - p), opt, &x)) ||
			    (ret = fn(s, p, (size_t)(stops[k] - p), &x, arg)))
				return ret;
			p = stops[k] + (k == 0 ? 2 : 1);
		}
		return MK_OK;
	}
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		if ((ret = spar_number(s, p, len, opt, &x)) || (ret = fn(s, p, len, &x, arg)))
			return ret;
		if (!comma)
			return MK_OK;
		p = comma + 1;
	}
}

/* The first pass: whether any bare number is above 1, and whether any is
 * written with '%' (the first of each, for the message). */
typedef struct spar_scan {
	const char *bare_big, *pct;
	size_t bare_len;
} spar_scan;

static int spar_scan_one(const char *all, const char *at, size_t len, const spar_num *x, void *arg)
{
	spar_scan *sc = arg;
	(void)all;
	if (!x->pct && x->v > 1 && !sc->bare_big) {
		sc->bare_big = at;
		sc->bare_len = len;
	}
	if (x->pct && !sc->pct)
		sc->pct = at;
	return MK_OK;
}

/* The hint for a mix: s with every number written with '%', and with none. */
typedef struct spar_hint {
	const char *done; /* of s, copied so far */
	char pct[128], bare[128];
	size_t np, nb;
} spar_hint;

static void spar_hint_put(char *buf, size_t *used, size_t cap, const char *p, size_t len)
{
	if (*used + len < cap) {
		memcpy(buf + *used, p, len);
		*used += len;
		buf[*used] = '\0';
	}
}

static int spar_hint_one(const char *all, const char *at, size_t len, const spar_num *x, void *arg)
{
	spar_hint *h = arg;
	size_t digits = x->pct ? len - 1 : len;

	if (!h->done)
		h->done = all;
	/* what lies between the numbers (",", "..", ":") as it is */
	spar_hint_put(h->pct, &h->np, sizeof h->pct, h->done, (size_t)(at - h->done));
	spar_hint_put(h->bare, &h->nb, sizeof h->bare, h->done, (size_t)(at - h->done));
	spar_hint_put(h->pct, &h->np, sizeof h->pct, at, digits);
	spar_hint_put(h->pct, &h->np, sizeof h->pct, "%", 1);
	spar_hint_put(h->bare, &h->nb, sizeof h->bare, at, digits);
	h->done = at + len;
	return MK_OK;
}

/* The second pass: each number as a fraction, checked, into out. */
typedef struct spar_take {
	const char *opt;
	bool bare_pct;
	double *out;
	size_t cap, count;
} spar_take;

static int spar_take_one(const char *all, const char *at, size_t len, const spar_num *x, void *arg)
{
	spar_take *t = arg;
	double v = x->pct || t->bare_pct ? x->v / 100 : x->v;

	(void)all;
	if (!(v >= 0 && v <= 1)) {
		if (x->pct)
			return mk_error_set(MK_EINVAL, "%s must be in 0%%..100%%, got '%.*s'", t->opt,
					    (int)len, at);
		return mk_error_set(MK_EINVAL, "%s must be in 0..1 (fractions) or 0..100 "
				    "(percentages), got '%.*s'", t->opt, (int)len, at);
	}
	if (t->count == t->cap)
		return mk_error_set(MK_ERANGE, "%s lists more than %zu values", t->opt, t->cap);
	t->out[t->count++] = v;
	return MK_OK;
}

/* A..B[:STEP] (v: A, B and STEP as fractions, nv of them) into A,
 * A + STEP, ... up to B: each a product, not a running sum, rounded to 1e-12
 * so that 0.1..0.9 and 10..90 both give 0.3 (the value 0.3, 30 and 30%
 * give), not 0.3 + 4e-17. */
static int spar_range(const char *s, const char *opt, const double *v, size_t nv, double *out,
		      size_t cap, size_t *count)
{
	double a = v[0], b = v[1], step = nv == 3 ? v[2] : SPARSITY_STEP, steps;

	if (!(step > 0.0))
		return mk_error_set(MK_EINVAL, "%s's STEP must be positive, got '%s'", opt,
				    strrchr(s, ':') + 1);
	if (a > b)
		return mk_error_set(MK_EINVAL, "%s range '%s' runs downwards", opt, s);
	steps = floor((b - a) / step + 1e-9);
	if (steps + 1.0 > (double)cap)
		return mk_error_set(MK_ERANGE, "%s '%s' makes more than %zu values", opt, s, cap);
	*count = (size_t)steps + 1;
	for (size_t k = 0; k < *count; k++)
		out[k] = fmin(round((a + (double)k * step) * 1e12) / 1e12, b);
	return MK_OK;
}

int cli_sparsities(const char *s, const char *opt, double *out, size_t cap, size_t *count)
{
	spar_scan sc = {0};
	double range[3];
	bool is_range = strstr(s, "..") != NULL;
	/* a range's A, B and STEP go to range first, then its values to out */
	spar_take t = {.opt = opt, .out = is_range ? range : out, .cap = is_range ? 3 : cap};
	int ret;

	*count = 0;
	if ((ret = spar_each(s, opt, spar_scan_one, &sc)))
		return ret;
	if (sc.bare_big && sc.pct) {
		spar_hint h = {0};
		spar_each(s, opt, spar_hint_one, &h);
		return mk_error_set(MK_EINVAL, "%s '%s' mixes a percentage (%%) with the bare number "
				    "%.*s: write every percentage with %% or none ('%s' or '%s')", opt,
				    s, (int)sc.bare_len, sc.bare_big, h.pct, h.bare);
	}
	t.bare_pct = sc.bare_big != NULL;
	if ((ret = spar_each(s, opt, spar_take_one, &t)))
		return ret;
	if (is_range)
		return spar_range(s, opt, range, t.count, out, cap, count);
	*count = t.count;
	return MK_OK;
}
