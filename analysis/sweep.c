/*
 * Sweeps: what a mask costs.  For each pattern and target sparsity the
 * pattern's size parameter is solved for the nearest achievable sparsity;
 * then each kernel runs on random O(1) tensors and its output is checked
 * against the double reference (attn_ref.c); after the warm-ups the R timed
 * runs of the kernels are interleaved (sweep_stats.c says why).
 *
 * The solver measures |M| exactly (mk_measure_expr) at candidate values and
 * remembers each.  When |M| grows with the value (windows, random keys,
 * global tokens) a binary search finds the crossing and its neighbours
 * decide; otherwise (strides and block sizes, where |M| falls and then
 * rises, or is ragged where the block grid clips) every value is scanned,
 * or for large ranges a 2% geometric grid refined between the neighbours
 * of its best point.
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "maskkit.h"
#include "attn_backend.h"
#include "attn_ref.h"
#include "pattern.h"
#include "sweep_internal.h"

#define SWEEP_UNKNOWN UINT64_MAX
#define SWEEP_DEVICE_WARMUPS 3 /* a GPU's clocks and caches settle after a few runs */

struct mk_sweep_solver {
	const mk_pattern_def *def;
	const mk_pattern_sweep *spec; /* &def->sweep */
	int64_t n, lo, hi;
	uint64_t seed, max_memory;
	uint64_t *count; /* hi + 1 entries, SWEEP_UNKNOWN until measured */
};

/* The pattern's definition when a sweep can vary it, else NULL. */
static const mk_pattern_def *sweep_def(const char *pattern)
{
	const mk_pattern_def *def = mk_pattern_def_find(pattern);
	return def && def->sweep.param ? def : NULL;
}

const char *mk_sweep_param(const char *pattern)
{
	const mk_pattern_def *def = sweep_def(pattern);
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

int mk_sweep_solver_new(const char *pattern, int64_t n, uint64_t seed, uint64_t max_memory,
			mk_sweep_solver **out)
{
	const mk_pattern_def *def = sweep_def(pattern);
	mk_sweep_solver *s;
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
	s->lo = s->spec->lo;
	s->hi = s->spec->hi == MK_SWEEP_HI_N ? n : s->spec->hi == MK_SWEEP_HI_N_1 ? n - 1 : n / 2;
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

static void sweep_expr(const mk_sweep_solver *s, int64_t v, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s(%s=%" PRId64 "%s)", s->def->info.name, s->spec->param, v,
		 s->spec->extra ? s->spec->extra : "");
}

/* |M| at value v, measured once. */
static int sweep_count(mk_sweep_solver *s, int64_t v, uint64_t *out)
{
	mk_bind_opts b = {.n = s->n, .seed = s->seed, .max_memory = s->max_memory};
	mk_expr *e = NULL;
	mk_measure m;
	char text[64];
	int ret;

	if (s->count[v] != SWEEP_UNKNOWN) {
		*out = s->count[v];
		return MK_OK;
	}
	sweep_expr(s, v, text, sizeof text);
	if ((ret = mk_expr_parse(text, &e)) || (ret = mk_expr_bind(e, &b)) ||
	    (ret = mk_measure_expr(e, NULL, 0, NULL, NULL, &m)))
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
		return ret;
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
	out->value = best;
	out->count = s->count[best];
	out->sparsity = 1.0 - (double)out->count / n2;
	sweep_expr(s, best, out->expr, sizeof out->expr);
	return MK_OK;
}

/* ---- running --------------------------------------------------------------- */

typedef struct sweep_run {
	const mk_sweep_opts *o;
	float *q, *k, *v, *out;
	/* times: reps per kernel, kernel k's at times + k * reps; work: reps */
	double *ref, *times, *work, tol;
	int64_t rows[MK_REF_MAX_ROWS], nrows, done, total;
	unsigned timed;    /* the kernels timed at each point: o->kernels and dense */
	double *dense_err; /* per normalisation */
} sweep_run;

static uint64_t sweep_splitmix(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [-1, 1): scores stay O(1) whatever d is. */
static void sweep_fill(float *x, size_t count, uint64_t *state)
{
	for (size_t c = 0; c < count; c++)
		x[c] = (float)((double)(sweep_splitmix(state) >> 11) * 0x1.0p-52 - 1.0);
}

/* One run, timed with the backend's clock. */
static int sweep_once(sweep_run *x, mk_attn_kernel kernel, const mk_norm *norm,
		      const mk_attn_layout *l, double *secs)
{
	mk_attn_stats st;
	double t0 = mk_attn_clock(x->o->backend);
	int ret = mk_attn_run(x->o->backend, kernel, norm, &x->o->shape, x->q, x->k, x->v, l,
			      x->out, &st);
	*secs = mk_attn_clock(x->o->backend) - t0;
	return ret;
}

/* One timed run.  A backend with a device timer uploads the inputs and runs
 * warmup times untimed first, then times only its kernels. */
static int sweep_rep(sweep_run *x, mk_attn_kernel kernel, const mk_norm *norm,
		     const mk_attn_layout *l, int warmup, double *secs)
{
	mk_attn_stats st;

	if (!x->o->backend->time)
		return sweep_once(x, kernel, norm, l, secs);
	return mk_attn_time(x->o->backend, kernel, norm, &x->o->shape, x->q, x->k, x->v, l, warmup,
			    1, secs, x->out, &st);
}

static int sweep_fail(const sweep_run *x, const mk_sweep_row *r, const char *norm)
{
	return mk_error_set(MK_EINTERNAL, "pattern '%s' (%s=%" PRId64 "), kernel '%s', norm %s: "
			    "max error %.3g above the %s tolerance %.3g", r->pattern, r->param,
			    r->point.value, mk_attn_kernel_name(r->kernel), norm, r->max_err,
			    mk_compute_name(x->o->dtype), x->tol);
}

/* One untimed run (the first runs of a process start threads; a device
 * timer runs SWEEP_DEVICE_WARMUPS more), then the output is checked against
 * the reference in x (dense's once per norm, by sweep_dense), before any
 * time is taken. */
static int sweep_warm(sweep_run *x, mk_sweep_row *r, mk_attn_kernel kernel,
		      const mk_attn_layout *l, double *err)
{
	double t;
	char norm[32];
	int ret = sweep_rep(x, kernel, r->norm, l, SWEEP_DEVICE_WARMUPS, &t);

	if (ret || kernel == MK_KERNEL_DENSE)
		return ret;
	*err = mk_attn_ref_error(&x->o->shape, x->rows, x->nrows, x->ref, x->out);
	if (*err <= x->tol)
		return MK_OK;
	r->kernel = kernel;
	r->max_err = *err;
	mk_norm_format(r->norm, norm, sizeof norm);
	return sweep_fail(x, r, norm);
}

/* Every timed kernel on the current mask and norm (the reference in x):
 * warm-ups and checks, then the timed runs interleaved, repetition r of
 * every kernel before repetition r + 1, then a row per selected kernel. */
static int sweep_point(sweep_run *x, mk_sweep_row *r, size_t ni, const mk_attn_layout *l,
		       int (*emit)(const mk_sweep_row *, void *), void *arg)
{
	const mk_sweep_opts *o = x->o;
	size_t reps = (size_t)o->reps;
	double err[MK_KERNEL_COUNT] = {0};
	mk_sweep_stats st;
	int ret = MK_OK;

	for (int k = 0; k < MK_KERNEL_COUNT && !ret; k++)
		if (x->timed & (1u << k))
			ret = sweep_warm(x, r, (mk_attn_kernel)k, l, &err[k]);
	for (size_t rep = 0; rep < reps && !ret; rep++)
		for (int k = 0; k < MK_KERNEL_COUNT && !ret; k++)
			if (x->timed & (1u << k))
				ret = sweep_rep(x, (mk_attn_kernel)k, r->norm, l, 0,
						&x->times[(size_t)k * reps + rep]);
	if (ret)
		return ret;
	mk_sweep_point_stats(x->times, o->reps, x->timed, x->work, &st);
	err[MK_KERNEL_DENSE] = x->dense_err[ni];
	for (int k = 0; k < MK_KERNEL_COUNT && !ret; k++) {
		if (!(o->kernels & (1u << k)))
			continue;
		mk_sweep_row_fill(&o->shape, &st, (mk_attn_kernel)k, err[k], r);
		ret = emit(r, arg);
	}
	return ret;
}

static void sweep_progress(sweep_run *x, const mk_sweep_row *r, const char *norm)
{
	char what[160];
	if (!x->o->progress)
		return;
	if (r && r->param)
		snprintf(what, sizeof what, "%s %s=%" PRId64 " (target %.0f%%, got %.1f%%), %s",
			 r->pattern, r->param, r->point.value, 100 * r->target,
			 100 * r->point.sparsity, norm);
	else if (r)
		snprintf(what, sizeof what, "%s (its own sparsity, %.1f%%), %s", r->pattern,
			 100 * r->point.sparsity, norm);
	else
		snprintf(what, sizeof what, "dense, %s", norm);
	x->o->progress(x->done++, x->total, what, x->o->arg);
}

/* The dense kernel ignores the mask: checked once per norm (timed at
 * every point, with the others). */
static int sweep_dense(sweep_run *x)
{
	const mk_sweep_opts *o = x->o;
	char norm[32];
	double t;
	int ret;

	for (size_t ni = 0; ni < o->nnorms; ni++) {
		mk_norm_format(&o->norms[ni], norm, sizeof norm);
		sweep_progress(x, NULL, norm);
		if ((ret = mk_attn_reference(&o->norms[ni], &o->shape, x->q, x->k, x->v, NULL,
					     x->rows, x->nrows, x->ref)) ||
		    (ret = sweep_once(x, MK_KERNEL_DENSE, &o->norms[ni], NULL, &t)))
			return ret;
		x->dense_err[ni] = mk_attn_ref_error(&o->shape, x->rows, x->nrows, x->ref, x->out);
		if (x->dense_err[ni] > x->tol)
			return mk_error_set(MK_EINTERNAL, "kernel 'dense', norm %s: max error %.3g "
					    "above the %s tolerance %.3g", norm, x->dense_err[ni],
					    mk_compute_name(o->dtype), x->tol);
	}
	return MK_OK;
}

/* Every normalisation and kernel on one mask. */
static int sweep_mask(sweep_run *x, mk_sweep_row *r, int (*emit)(const mk_sweep_row *, void *),
		      void *arg)
{
	const mk_sweep_opts *o = x->o;
	mk_bind_opts b = {.n = o->shape.n, .seed = o->seed, .max_memory = o->max_memory};
	mk_expr *e = NULL;
	mk_mask *m = NULL;
	mk_attn_layout *l = NULL;
	char norm[32];
	int ret;

	if ((ret = mk_expr_parse(r->point.expr, &e)) || (ret = mk_expr_bind(e, &b)) ||
	    (ret = mk_expr_to_mask(e, &m)) ||
	    (ret = mk_attn_prepare(o->backend, m, o->tile, o->max_memory, &l)))
		goto out;
	r->tile_density = mk_attn_layout_density(l);
	for (size_t ni = 0; ni < o->nnorms && !ret; ni++) {
		r->norm = &o->norms[ni];
		mk_norm_format(r->norm, norm, sizeof norm);
		sweep_progress(x, r, norm);
		ret = mk_attn_reference(r->norm, &o->shape, x->q, x->k, x->v, m, x->rows, x->nrows,
					x->ref);
		if (!ret)
			ret = sweep_point(x, r, ni, l, emit, arg);
	}
out:
	mk_attn_layout_free(l);
	mk_mask_free(m);
	mk_expr_free(e);
	return ret;
}

/* Points of pattern p, targets t0..t1 - 1, in this share of the grid. */
static size_t sweep_mine(const mk_sweep_opts *o, size_t p, size_t t0, size_t t1)
{
	size_t count = 0;

	for (size_t t = t0; t < t1; t++)
		count += o->parts <= 1 || (p * o->ntargets + t) % (size_t)o->parts == (size_t)o->part;
	return count;
}

/* A mask without a parameter to vary: one point at its own sparsity. */
static int sweep_fixed(sweep_run *x, mk_sweep_row *r, const char *text,
		       int (*emit)(const mk_sweep_row *, void *), void *arg)
{
	const mk_sweep_opts *o = x->o;
	mk_bind_opts b = {.n = o->shape.n, .seed = o->seed, .max_memory = o->max_memory};
	mk_expr *e = NULL;
	mk_measure m;
	int ret;

	if (strlen(text) >= sizeof r->point.expr)
		return mk_error_set(MK_EINVAL, "mask '%.40s...' is longer than %zu characters", text,
				    sizeof r->point.expr - 1);
	if ((ret = mk_expr_parse(text, &e)) || (ret = mk_expr_bind(e, &b)) ||
	    (ret = mk_measure_expr(e, NULL, 0, NULL, NULL, &m)))
		goto out;
	r->point.value = 0;
	r->point.count = m.count;
	r->point.sparsity = m.sparsity;
	snprintf(r->point.expr, sizeof r->point.expr, "%s", text);
	r->target = m.sparsity;
	ret = sweep_mask(x, r, emit, arg);
out:
	mk_expr_free(e);
	return ret;
}

const char *mk_sweep_label(const mk_sweep_opts *o, size_t p)
{
	return o->labels && o->labels[p] ? o->labels[p] : o->patterns[p];
}

static int sweep_patterns(sweep_run *x, int (*emit)(const mk_sweep_row *, void *), void *arg)
{
	const mk_sweep_opts *o = x->o;
	mk_sweep_solver *s = NULL;
	int ret = MK_OK;

	for (size_t p = 0; p < o->npatterns && !ret; p++) {
		mk_sweep_row r = {.pattern = mk_sweep_label(o, p),
				  .param = mk_sweep_param(o->patterns[p]),
				  .grid = (int64_t)(p * o->ntargets)};
		if (!r.param) {
			if (sweep_mine(o, p, 0, 1))
				ret = sweep_fixed(x, &r, o->patterns[p], emit, arg);
			continue;
		}
		if (!sweep_mine(o, p, 0, o->ntargets))
			continue;
		ret = mk_sweep_solver_new(r.pattern, o->shape.n, o->seed, o->max_memory, &s);
		for (size_t t = 0; t < o->ntargets && !ret; t++) {
			if (!sweep_mine(o, p, t, t + 1))
				continue;
			r.target = o->targets[t];
			r.grid = (int64_t)(p * o->ntargets + t);
			if (!(ret = mk_sweep_solve(s, r.target, &r.point)))
				ret = sweep_mask(x, &r, emit, arg);
		}
		mk_sweep_solver_free(s);
		s = NULL;
	}
	return ret;
}

int mk_sweep_check_memory(const mk_sweep_opts *o)
{
	const mk_attn_shape *s = &o->shape;
	uint64_t n = (uint64_t)s->n, tensor, cells, densest = 0, total;
	double least = 1.0;
	int ret;

	for (size_t t = 0; t < o->ntargets; t++)
		least = o->targets[t] < least ? o->targets[t] : least;
	for (size_t p = 0; p < o->npatterns; p++)
		if (!mk_sweep_param(o->patterns[p]))
			least = 0; /* a fixed mask may be dense */
	/* mask bits twice (mask and layout), CSR columns at the densest target */
	if ((ret = mk_mul_u64(n, n, &cells)))
		return mk_error_set(MK_ERANGE, "n = %" PRIu64 " is too large for a sweep", n);
	densest = (uint64_t)((1.0 - least) * (double)cells) * 8 + cells / 4;
	if ((ret = mk_mul_u64((uint64_t)s->batch * (uint64_t)s->heads, n, &tensor)) ||
	    (ret = mk_mul_u64(tensor, (uint64_t)s->d * 16, &tensor)) ||
	    tensor > UINT64_MAX - densest)
		return mk_error_set(MK_ERANGE, "the sweep's tensors are too large");
	total = tensor + densest;
	return mk_check_memory(total, o->max_memory ? o->max_memory : MK_DEFAULT_MAX_MEMORY,
			       "the sweep's tensors and masks");
}

static int sweep_alloc(sweep_run *x)
{
	const mk_attn_shape *s = &x->o->shape;
	size_t cells = (size_t)s->batch * (size_t)s->heads * (size_t)s->n * (size_t)s->d;
	size_t nn = x->o->nnorms;
	uint64_t state = x->o->seed;

	x->q = malloc(cells * sizeof *x->q);
	x->k = malloc(cells * sizeof *x->k);
	x->v = malloc(cells * sizeof *x->v);
	x->out = malloc(cells * sizeof *x->out);
	x->ref = malloc((size_t)s->batch * (size_t)s->heads * (size_t)x->nrows * (size_t)s->d *
			sizeof *x->ref);
	x->times = malloc((MK_KERNEL_COUNT + 1) * (size_t)x->o->reps * sizeof *x->times);
	x->dense_err = malloc(nn * sizeof *x->dense_err);
	if (!x->q || !x->k || !x->v || !x->out || !x->ref || !x->times || !x->dense_err)
		return mk_error_set(MK_ENOMEM, "out of memory for the sweep's tensors");
	x->work = x->times + MK_KERNEL_COUNT * (size_t)x->o->reps;
	sweep_fill(x->q, cells, &state);
	sweep_fill(x->k, cells, &state);
	sweep_fill(x->v, cells, &state);
	return MK_OK;
}

int mk_sweep_run(const mk_sweep_opts *o, int (*row)(const mk_sweep_row *r, void *arg),
		 void *arg)
{
	sweep_run x = {.o = o, .timed = o->kernels | 1u << MK_KERNEL_DENSE};
	int ret;

	if (!o->backend || !o->nnorms || !o->reps || o->reps < 1)
		return mk_error_set(MK_EINVAL, "sweep: backend, normalisations and repetitions "
				    "are required");
	if (!(x.tol = mk_compute_tolerance(o->dtype)))
		return mk_error_set(MK_EINVAL, "unknown compute type %d (use MK_COMPUTE_FP32, "
				    "_FP16 or _BF16)", (int)o->dtype);
	if ((ret = mk_sweep_check_memory(o)) || (ret = mk_attn_configure(o->backend, o->device,
									 o->dtype)))
		return ret;
	x.nrows = mk_attn_ref_rows(o->shape.n, x.rows);
	for (size_t p = 0; p < o->npatterns; p++)
		x.total += (int64_t)sweep_mine(o, p, 0, mk_sweep_param(o->patterns[p]) ? o->ntargets : 1);
	x.total = (int64_t)o->nnorms * (1 + x.total);
	if (!(ret = sweep_alloc(&x)) && !(ret = sweep_dense(&x)))
		ret = sweep_patterns(&x, row, arg);
	if (!ret && o->progress)
		o->progress(x.total, x.total, "done", o->arg);
	free(x.q);
	free(x.k);
	free(x.v);
	free(x.out);
	free(x.ref);
	free(x.times);
	free(x.dense_err);
	return ret;
}
