/*
 * The sweep's solver: the value of a pattern's size parameter whose
 * sparsity at size n is nearest a target.  It measures |M| exactly
 * (mk_measure_expr) at candidate values and remembers each.  When |M| grows
 * with the value (windows, random keys, global tokens) a binary search finds
 * the crossing and its neighbours decide; otherwise (strides and block
 * sizes, where |M| falls and then rises, or is ragged where the block grid
 * clips) every value is scanned, or for large ranges a 2% geometric grid
 * refined between the neighbours of its best point.
 *
 * A pattern is named alone ("bigbird") or with other parameters fixed
 * ("bigbird(r=3,block=1)"); patterns their papers define by blocks are
 * swept in block form (block = the sweep's tile) unless block= is given.
 */
#include "config.h"
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core.h"
#include "expr.h"
#include "measure.h"
#include "sweep.h"
#include "pattern.h"
#include "sweep_internal.h"

#define SWEEP_UNKNOWN UINT64_MAX
#define SWEEP_INVALID (UINT64_MAX - 1) /* the parameters fixed refuse this value */

struct mk_sweep_solver {
	const mk_pattern_def *def;
	const mk_pattern_sweep *spec; /* &def->sweep */
	char rest[256];  /* the parameters after the varied one: ",r=3,block=64" */
	int64_t n, lo, hi;
	uint64_t seed, max_memory;
	uint64_t *count; /* hi + 1 entries, SWEEP_UNKNOWN until measured */
};

/* Where the parameter list p[0..len) ("r=3, block=1") gives key's value
 * (after its '='), or NULL when it does not set key. */
static const char *sweep_find(const char *p, size_t len, const char *key)
{
	size_t klen = strlen(key);

	for (size_t at = 0; at < len;) {
		at += strspn(p + at, " \t");
		if (at + klen < len && !strncmp(p + at, key, klen)) {
			size_t eq = at + klen + strspn(p + at + klen, " \t");
			if (eq < len && p[eq] == '=')
				return p + eq + 1;
		}
		while (at < len && p[at] != ',')
			at++;
		at++;
	}
	return NULL;
}

/* A pattern a sweep can vary: "NAME" or "NAME(PARAMS)" where PARAMS does
 * not set the varied parameter; its definition, and PARAMS in *fixed (of
 * *len bytes), else NULL. */
static const mk_pattern_def *sweep_item(const char *item, const char **fixed, size_t *len)
{
	size_t w = strspn(item, "abcdefghijklmnopqrstuvwxyz_"), all = strlen(item);
	const mk_pattern_def *def;
	char name[32];
	int depth = 0;

	if (w == 0 || w >= sizeof name)
		return NULL;
	memcpy(name, item, w);
	name[w] = '\0';
	if (!(def = mk_pattern_def_find(name)) || !def->sweep.param)
		return NULL;
	*fixed = item + w;
	*len = 0;
	if (!item[w])
		return def;
	if (item[w] != '(' || item[all - 1] != ')')
		return NULL;
	/* one term: its parenthesis closes at the end, not before ("local(w=1)+diag") */
	for (size_t k = w; k < all - 1; k++) {
		depth += (item[k] == '(') - (item[k] == ')');
		if (depth == 0)
			return NULL;
	}
	*fixed = item + w + 1;
	*len = all - w - 2;
	return sweep_find(*fixed, *len, def->sweep.param) ? NULL : def;
}

const char *mk_sweep_param(const char *pattern)
{
	const char *fixed;
	size_t len;
	const mk_pattern_def *def = pattern ? sweep_item(pattern, &fixed, &len) : NULL;
	return def ? def->sweep.param : NULL;
}

/* In the order the patterns give (sweep.order; ties in the registry's). */
const char *mk_sweep_patterns(void)
{
	static _Thread_local char buf[512];
	const mk_pattern_def *defs[64];
	size_t len = 0, m = 0;

	for (size_t k = 0; k < mk_pattern_def_count() && m < 64; k++) {
		const mk_pattern_def *def = mk_pattern_def_get(k);
		size_t at = m;
		if (!def->sweep.param)
			continue;
		for (; at > 0 && defs[at - 1]->sweep.order > def->sweep.order; at--)
			defs[at] = defs[at - 1];
		defs[at] = def;
		m++;
	}
	buf[0] = '\0';
	for (size_t k = 0; k < m && len < sizeof buf; k++)
		len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", k ? ", " : "",
					defs[k]->info.name);
	return buf;
}

static void sweep_expr(const mk_sweep_solver *s, int64_t v, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s(%s=%" PRId64 "%s)", s->def->info.name, s->spec->param, v, s->rest);
}

/* s->rest: the user's parameters, the pattern's fixed extras they do not
 * set, and block=B for a pattern swept in block form; *grid gets the size
 * of the grid the parameter counts on (n, or ceil(n / block)). */
static int sweep_rest(mk_sweep_solver *s, const char *fixed, size_t len, int64_t block,
		      int64_t *grid)
{
	const char *extra = s->spec->extra ? s->spec->extra : "", *b;
	size_t used = 0, cap = sizeof s->rest;

	used += (size_t)snprintf(s->rest, cap, "%s%.*s", len ? "," : "", (int)len, fixed);
	/* extra is ",k=v,...": each kept unless the user set k */
	for (const char *p = extra; *p == ',' && used < cap;) {
		const char *end = strchr(p + 1, ','), *eq = strchr(p + 1, '=');
		size_t item = end ? (size_t)(end - p) : strlen(p);
		char key[32];
		snprintf(key, sizeof key, "%.*s", eq ? (int)(eq - p - 1) : 0, p + 1);
		if (!sweep_find(fixed, len, key))
			used += (size_t)snprintf(s->rest + used, cap - used, "%.*s", (int)item, p);
		p += item;
	}
	if (s->spec->blocked && block > 1 && !sweep_find(fixed, len, "block") && used < cap)
		used += (size_t)snprintf(s->rest + used, cap - used, ",block=%" PRId64, block);
	if (used >= cap)
		return mk_error_set(MK_EINVAL, "pattern parameters '%.*s' are too long", (int)len,
				    fixed);
	*grid = s->n;
	if ((b = sweep_find(s->rest + 1, used ? used - 1 : 0, "block"))) {
		long long v = strtoll(b, NULL, 10);
		if (v > 1)
			*grid = (s->n + v - 1) / v;
	}
	return MK_OK;
}

int mk_sweep_solver_new(const char *pattern, int64_t n, int64_t block, uint64_t seed,
			uint64_t max_memory, mk_sweep_solver **out)
{
	const char *fixed = NULL;
	size_t len = 0;
	const mk_pattern_def *def = sweep_item(pattern, &fixed, &len);
	mk_sweep_solver *s;
	int64_t grid = n;
	int ret;

	*out = NULL;
	if (!def)
		return mk_error_set(MK_EINVAL, "pattern '%s' has no size parameter a sweep can vary "
				    "(use %s)", pattern, mk_sweep_patterns());
	if ((ret = mk_check_n(n, "n")))
		return ret;
	if (!(s = calloc(1, sizeof *s)))
		return mk_error_set(MK_ENOMEM, "out of memory");
	s->def = def;
	s->spec = &def->sweep;
	s->n = n;
	s->seed = seed;
	s->max_memory = max_memory;
	if ((ret = sweep_rest(s, fixed, len, block, &grid))) {
		free(s);
		return ret;
	}
	/* a parameter the pattern lacks is found now, before any point is timed */
	{
		char text[sizeof ((mk_sweep_point *)0)->expr];
		mk_expr *e = NULL;
		sweep_expr(s, s->spec->lo, text, sizeof text);
		ret = mk_expr_parse(text, &e);
		mk_expr_free(e);
		if (ret) {
			free(s);
			return ret;
		}
	}
	s->lo = s->spec->lo;
	s->hi = s->spec->hi == MK_SWEEP_HI_N ? grid : s->spec->hi == MK_SWEEP_HI_N_1 ? grid - 1 :
		grid / 2;
	if (s->hi < s->lo)
		s->hi = s->lo;
	if (!(s->count = malloc((size_t)(s->hi + 1) * sizeof *s->count))) {
		free(s);
		return mk_error_set(MK_ENOMEM, "out of memory for the solver");
	}
	for (int64_t v = 0; v <= s->hi; v++)
		s->count[v] = SWEEP_UNKNOWN;
	*out = s;
	return MK_OK;
}

void mk_sweep_solver_free(mk_sweep_solver *s)
{
	if (!s)
		return;
	free(s->count);
	free(s);
}


/* |M| at value v, measured once. */
static int sweep_count(mk_sweep_solver *s, int64_t v, uint64_t *out)
{
	mk_bind_opts b = {.n = s->n, .seed = s->seed, .max_memory = s->max_memory};
	mk_expr *e = NULL;
	mk_measure m;
	char text[sizeof ((mk_sweep_point *)0)->expr];
	int ret;

	if (s->count[v] != SWEEP_UNKNOWN) {
		*out = s->count[v];
		return s->count[v] == SWEEP_INVALID ? MK_EINVAL : MK_OK;
	}
	sweep_expr(s, v, text, sizeof text);
	if ((ret = mk_expr_parse(text, &e)))
		goto out;
	if ((ret = mk_expr_bind(e, &b)) == MK_EINVAL) /* fixed(c=2) refuses l = 1 */
		s->count[v] = SWEEP_INVALID;
	if (ret || (ret = mk_measure_expr(e, NULL, 0, NULL, NULL, &m)))
		goto out;
	*out = s->count[v] = m.count;
out:
	mk_expr_free(e);
	return ret;
}

/* Keeps v in *best when it is nearer the target count (ties: smaller v). */
static int sweep_consider(mk_sweep_solver *s, int64_t v, double want, int64_t *best,
			  double *best_gap)
{
	uint64_t c;
	double gap;
	int ret;

	if (v < s->lo || v > s->hi)
		return MK_OK;
	if ((ret = sweep_count(s, v, &c)))
		return s->count[v] == SWEEP_INVALID ? MK_OK : ret; /* a value to skip */
	gap = fabs((double)c - want);
	if (*best < 0 || gap < *best_gap || (gap == *best_gap && v < *best)) {
		*best = v;
		*best_gap = gap;
	}
	return MK_OK;
}

/* The smallest v with |M| >= want, then it and its neighbours compete. */
static int sweep_bisect(mk_sweep_solver *s, double want, int64_t *best, double *gap)
{
	int64_t a = s->lo, b = s->hi;
	uint64_t c;
	int ret = MK_OK;

	while (a < b) {
		int64_t mid = a + (b - a) / 2;
		if ((ret = sweep_count(s, mid, &c)))
			return ret;
		if ((double)c >= want)
			b = mid;
		else
			a = mid + 1;
	}
	for (int64_t v = a - 2; v <= a + 2 && ret == MK_OK; v++)
		ret = sweep_consider(s, v, want, best, gap);
	return ret;
}

static int sweep_scan(mk_sweep_solver *s, double want, int64_t *best, double *gap)
{
	int64_t prev = s->lo, next, v = s->lo;
	int ret = MK_OK;

	if (s->hi - s->lo <= MK_SWEEP_SCAN_ALL) {
		for (v = s->lo; v <= s->hi && ret == MK_OK; v++)
			ret = sweep_consider(s, v, want, best, gap);
		return ret;
	}
	/* a geometric grid, then every value between the best's neighbours */
	while (ret == MK_OK && v <= s->hi) {
		ret = sweep_consider(s, v, want, best, gap);
		next = v + 1 > (int64_t)(v * 1.02) ? v + 1 : (int64_t)(v * 1.02);
		v = next > s->hi && v < s->hi ? s->hi : next;
	}
	for (v = s->lo; ret == MK_OK && v < *best; v = next) {
		next = v + 1 > (int64_t)(v * 1.02) ? v + 1 : (int64_t)(v * 1.02);
		prev = v;
	}
	next = *best + 1 > (int64_t)(*best * 1.02) ? *best + 1 : (int64_t)(*best * 1.02);
	for (v = prev; v <= next && ret == MK_OK; v++)
		ret = sweep_consider(s, v, want, best, gap);
	return ret;
}

int mk_sweep_solve(mk_sweep_solver *s, double target, mk_sweep_point *out)
{
	double n2 = (double)s->n * (double)s->n, want = (1.0 - target) * n2, gap = 0.0;
	int64_t best = -1;
	int ret;

	if (!(target >= 0.0 && target <= 1.0))
		return mk_error_set(MK_EINVAL, "target sparsity %g is outside 0..1", target);
	ret = s->spec->monotone ? sweep_bisect(s, want, &best, &gap)
				: sweep_scan(s, want, &best, &gap);
	if (ret)
		return ret;
	if (best < 0) { /* every value refused: the last refusal says why */
		mk_error_prefix("no %s of %s(...) can be swept here: ", s->spec->param,
				s->def->info.name);
		return MK_EINVAL;
	}
	out->value = best;
	out->count = s->count[best];
	out->sparsity = 1.0 - (double)out->count / n2;
	sweep_expr(s, best, out->expr, sizeof out->expr);
	return MK_OK;
}

