/*
 * Sweeps: what a mask costs.  For each pattern and target sparsity the
 * pattern's size parameter is solved for the nearest achievable sparsity
 * (sweep_solve.c); then each kernel runs on random O(1) tensors and its
 * output is checked against the double reference (attn_ref.c); after the
 * warm-ups the timed runs of the kernels are interleaved (sweep_stats.c
 * says why) and repeated until the speed-ups are known to the precision
 * asked, or the point's time is up.
 *
 * A point whose ratio of medians falls outside its paired interval was
 * disturbed unevenly (a slowdown that hit dense in four repetitions and a
 * kernel in three): it is measured once more from scratch, and flagged if
 * it still disagrees, rather than shown with two numbers that contradict
 * each other.
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
#include "core.h"
#include "mask.h"
#include "expr.h"
#include "measure.h"
#include "attn.h"
#include "sweep.h"
#include "attn_backend.h"
#include "attn_ref.h"
#include "sweep_internal.h"

#define SWEEP_DEVICE_WARMUPS 3 /* a GPU's clocks and caches settle after a few runs */
#define SWEEP_RACE_REPS 3      /* ... judged from this many repetitions on */
#define SWEEP_OFF_BASELINE 0.2 /* a point whose dense is this far off the run's is measured again */

/* ---- running --------------------------------------------------------------- */

typedef struct sweep_run {
	const mk_sweep_opts *o;
	float *q, *k, *v, *out;
	double *ref, tol;
	/* times[k][r]: kernel k's repetition r, cap of them; work: cap values */
	double *times[MK_KERNEL_COUNT], *work;
	size_t cap;
	int min_reps, max_reps;
	int64_t rows[MK_REF_MAX_ROWS], nrows, done, total;
	unsigned timed;    /* the kernels timed at each point: o->kernels and dense */
	double *dense_err; /* per normalisation */
	mk_sweep_row *buf; /* every row, delivered once the run is over */
	size_t nbuf, capbuf;
} sweep_run;

static uint64_t sweep_splitmix(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Room for reps repetitions of every kernel. */
static int sweep_room(sweep_run *x, size_t reps)
{
	size_t cap = x->cap ? x->cap : 16;

	if (reps <= x->cap)
		return MK_OK;
	while (cap < reps)
		cap *= 2;
	for (int k = 0; k <= MK_KERNEL_COUNT; k++) {
		double **slot = k < MK_KERNEL_COUNT ? &x->times[k] : &x->work;
		double *p = realloc(*slot, cap * sizeof *p);
		if (!p)
			return mk_error_set(MK_ENOMEM, "out of memory for the sweep's timings");
		*slot = p;
	}
	x->cap = cap;
	return MK_OK;
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

/* The kernels that may leave the rotation: those whose interval is
 * precise (once min_reps are done), and from SWEEP_RACE_REPS on those out
 * of the race, more than MK_SWEEP_OUT_OF_RACE times slower than another kernel
 * (dense included) in every repetition so far, or with 95% confidence from
 * 6 on: nobody picks them, and their runs would take the time that the close
 * calls need.  Under a fixed count (min_reps = max_reps) none leaves. */
static unsigned sweep_settled(const sweep_run *x, const mk_sweep_stats *st, int done)
{
	double best_lo = 1.0; /* dense's */
	unsigned out = 0;

	if (x->min_reps >= x->max_reps || done < SWEEP_RACE_REPS)
		return 0;
	for (int k = 0; k < MK_KERNEL_COUNT; k++)
		if ((x->timed & (1u << k)) && st->speedup[k].lo > best_lo)
			best_lo = st->speedup[k].lo;
	for (int k = 0; k < MK_KERNEL_COUNT; k++)
		if (k != MK_KERNEL_DENSE && (x->timed & (1u << k)) &&
		    ((done >= x->min_reps && mk_sweep_precise(st, k, x->o->precision)) ||
		     st->speedup[k].hi * MK_SWEEP_OUT_OF_RACE < best_lo))
			out |= 1u << k;
	return out;
}

/* Rows wait in x until the run is over (sweep_rebase may measure a point
 * again). */
static int sweep_keep(sweep_run *x, const mk_sweep_row *r)
{
	if (x->nbuf == x->capbuf) {
		size_t cap = x->capbuf ? 2 * x->capbuf : 64;
		mk_sweep_row *p = realloc(x->buf, cap * sizeof *p);
		if (!p)
			return mk_error_set(MK_ENOMEM, "out of memory for the sweep's results");
		x->buf = p;
		x->capbuf = cap;
	}
	x->buf[x->nbuf++] = *r;
	return MK_OK;
}

/* The timed runs of one point, interleaved (repetition r of every kernel
 * before r + 1), until o's rule stops them; their statistics in st.  A
 * kernel whose interval is precise leaves the rotation (dense, the
 * reference, stays), so the time goes to the kernels still uncertain. */
static int sweep_measure(sweep_run *x, const mk_norm *norm, const mk_attn_layout *l,
			 mk_sweep_stats *st)
{
	const mk_sweep_opts *o = x->o;
	double start = mk_attn_clock(o->backend); /* wall time, or a test's script */
	unsigned active = x->timed;
	int reps[MK_KERNEL_COUNT] = {0}, ret, *all = &reps[MK_KERNEL_DENSE];

	for (;;) {
		if ((ret = sweep_room(x, (size_t)*all + 1)))
			return ret;
		for (int k = 0; k < MK_KERNEL_COUNT; k++) {
			if (!(active & (1u << k)))
				continue;
			if ((ret = sweep_rep(x, (mk_attn_kernel)k, norm, l, 0, &x->times[k][reps[k]])))
				return ret;
			reps[k]++;
		}
		if (*all >= x->max_reps)
			break;
		if (*all >= SWEEP_RACE_REPS) {
			mk_sweep_point_stats(x->times, reps, x->timed, x->work, st);
			active &= ~sweep_settled(x, st, *all);
		}
		if (*all < x->min_reps)
			continue;
		if (active == 1u << MK_KERNEL_DENSE ||
		    (o->max_time > 0 && mk_attn_clock(o->backend) - start >= o->max_time))
			break;
	}
	mk_sweep_point_stats(x->times, reps, x->timed, x->work, st);
	return MK_OK;
}

/* Every timed kernel on the current mask and norm (the reference in x):
 * warm-ups and checks, the timed runs (again from scratch when their
 * medians disagree with their paired ratios), then a row per selected
 * kernel. */
static int sweep_point(sweep_run *x, mk_sweep_row *r, size_t ni, const mk_attn_layout *l)
{
	const mk_sweep_opts *o = x->o;
	double err[MK_KERNEL_COUNT] = {0}, t;
	mk_sweep_stats st;
	int ret = MK_OK;

	for (int k = 0; k < MK_KERNEL_COUNT && !ret; k++)
		if (x->timed & (1u << k))
			ret = sweep_warm(x, r, (mk_attn_kernel)k, l, &err[k]);
	for (int w = 1; w < o->warmup && !ret; w++)
		for (int k = 0; k < MK_KERNEL_COUNT && !ret; k++)
			if (x->timed & (1u << k))
				ret = sweep_rep(x, (mk_attn_kernel)k, r->norm, l, 0, &t);
	if (ret || (ret = sweep_measure(x, r->norm, l, &st)))
		return ret;
	r->remeasured = !mk_sweep_all_agree(&st, x->timed);
	if (r->remeasured && (ret = sweep_measure(x, r->norm, l, &st)))
		return ret;
	err[MK_KERNEL_DENSE] = x->dense_err[ni];
	for (int k = 0; k < MK_KERNEL_COUNT && !ret; k++) {
		if (!(o->kernels & (1u << k)))
			continue;
		mk_sweep_row_fill(&o->shape, &st, (mk_attn_kernel)k, err[k], r);
		ret = sweep_keep(x, r);
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
static int sweep_mask(sweep_run *x, mk_sweep_row *r)
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
			ret = sweep_point(x, r, ni, l);
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
static int sweep_fixed(sweep_run *x, mk_sweep_row *r, const char *text)
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
	ret = sweep_mask(x, r);
out:
	mk_expr_free(e);
	return ret;
}

const char *mk_sweep_label(const mk_sweep_opts *o, size_t p)
{
	return o->labels && o->labels[p] ? o->labels[p] : o->patterns[p];
}

static int sweep_patterns(sweep_run *x)
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
				ret = sweep_fixed(x, &r, o->patterns[p]);
			continue;
		}
		if (!sweep_mine(o, p, 0, o->ntargets))
			continue;
		ret = mk_sweep_solver_new(o->patterns[p], o->shape.n, o->tile, o->seed,
					  o->max_memory, &s);
		for (size_t t = 0; t < o->ntargets && !ret; t++) {
			if (!sweep_mine(o, p, t, t + 1))
				continue;
			r.target = o->targets[t];
			r.grid = (int64_t)(p * o->ntargets + t);
			if (!(ret = mk_sweep_solve(s, r.target, &r.point)))
				ret = sweep_mask(x, &r);
		}
		mk_sweep_solver_free(s);
		s = NULL;
	}
	return ret;
}

/* One point once more, its mask made again (its outputs were checked the
 * first time): warm-ups, the timed runs (twice when the medians disagree),
 * and the point's rows refilled when its dense time is now nearer base. */
static int sweep_again(sweep_run *x, mk_sweep_row *rows, size_t len, double base)
{
	const mk_sweep_opts *o = x->o;
	mk_bind_opts b = {.n = o->shape.n, .seed = o->seed, .max_memory = o->max_memory};
	mk_expr *e = NULL;
	mk_mask *m = NULL;
	mk_attn_layout *l = NULL;
	mk_sweep_stats st;
	double t;
	int ret;

	if ((ret = mk_expr_parse(rows[0].point.expr, &e)) || (ret = mk_expr_bind(e, &b)) ||
	    (ret = mk_expr_to_mask(e, &m)) ||
	    (ret = mk_attn_prepare(o->backend, m, o->tile, o->max_memory, &l)))
		goto out;
	for (int w = 0; w < (o->warmup > 1 ? o->warmup : 1) && !ret; w++)
		for (int k = 0; k < MK_KERNEL_COUNT && !ret; k++)
			if (x->timed & (1u << k))
				ret = sweep_rep(x, (mk_attn_kernel)k, rows[0].norm, l,
						w ? 0 : SWEEP_DEVICE_WARMUPS, &t);
	if (ret || (ret = sweep_measure(x, rows[0].norm, l, &st)) ||
	    (!mk_sweep_all_agree(&st, x->timed) &&
	     (ret = sweep_measure(x, rows[0].norm, l, &st))))
		goto out;
	if (fabs(st.dense_median[MK_KERNEL_DENSE] / base - 1) >= fabs(rows[0].dense_s / base - 1))
		goto out; /* no nearer: the first measurement stays */
	for (size_t k = 0; k < len; k++) {
		mk_sweep_row_fill(&o->shape, &st, rows[k].kernel, rows[k].max_err, &rows[k]);
		rows[k].remeasured = true;
	}
out:
	mk_attn_layout_free(l);
	mk_mask_free(m);
	mk_expr_free(e);
	return ret;
}

/* Points measured while the machine was in another state than for most of
 * the run (a VM's neighbour, a frequency step: dense at 19 ms where it
 * takes 13 elsewhere, and the kernels not slowed alike, so the speed-up
 * moves with it): dense's median there more than SWEEP_OFF_BASELINE off the
 * run's baseline.  Each is measured once more now that the run is over,
 * and keeps the measurement whose dense is nearer the baseline. */
static int sweep_rebase(sweep_run *x)
{
	const mk_sweep_opts *o = x->o;
	double base[64] = {0};
	size_t off = 0, len;
	char what[96];
	int ret = MK_OK;

	for (size_t ni = 0; ni < o->nnorms && ni < 64; ni++)
		base[ni] = mk_sweep_baseline(x->buf, x->nbuf, &o->norms[ni]);
	for (int pass = 0; pass < 2 && !ret; pass++) {
		if (pass == 1 && off == 0)
			break;
		if (pass == 1 && o->progress) {
			snprintf(what, sizeof what, "measuring again the %zu point%s off dense's "
				 "baseline", off, off == 1 ? "" : "s");
			o->progress(x->done++, x->total, what, o->arg);
		}
		for (size_t at = 0; at < x->nbuf && !ret; at += len) {
			mk_sweep_row *r = &x->buf[at];
			size_t ni = (size_t)(r->norm - o->norms);
			for (len = 1; at + len < x->nbuf && r[len].grid == r->grid &&
				      r[len].norm == r->norm; len++)
				;
			if (ni >= 64 || !(base[ni] > 0) ||
			    fabs(r->dense_s / base[ni] - 1) <= SWEEP_OFF_BASELINE)
				continue;
			if (pass == 0)
				off++;
			else
				ret = sweep_again(x, r, len, base[ni]);
		}
	}
	return ret;
}

/* Every mask of the sweep before the first point is timed: a swept pattern
 * names only parameters it has, a fixed mask parses and binds at n (its
 * files exist and have that size). */
static int sweep_validate(const mk_sweep_opts *o)
{
	mk_bind_opts b = {.n = o->shape.n, .seed = o->seed, .max_memory = o->max_memory};
	int ret = MK_OK;

	for (size_t p = 0; p < o->npatterns && !ret; p++) {
		mk_sweep_solver *s = NULL;
		mk_expr *e = NULL;
		if (mk_sweep_param(o->patterns[p]))
			ret = mk_sweep_solver_new(o->patterns[p], o->shape.n, o->tile, o->seed,
						  o->max_memory, &s);
		else if (!(ret = mk_expr_parse(o->patterns[p], &e)))
			ret = mk_expr_bind(e, &b);
		mk_sweep_solver_free(s);
		mk_expr_free(e);
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
	x->dense_err = malloc(nn * sizeof *x->dense_err);
	if (!x->q || !x->k || !x->v || !x->out || !x->ref || !x->dense_err)
		return mk_error_set(MK_ENOMEM, "out of memory for the sweep's tensors");
	sweep_fill(x->q, cells, &state);
	sweep_fill(x->k, cells, &state);
	sweep_fill(x->v, cells, &state);
	return MK_OK;
}

int mk_sweep_run(const mk_sweep_opts *o, mk_sweep_row **rows, size_t *nrows)
{
	sweep_run x = {.o = o, .timed = o->kernels | 1u << MK_KERNEL_DENSE,
		       .min_reps = o->min_reps,
		       .max_reps = o->max_reps > o->min_reps ? o->max_reps : o->min_reps};
	int ret;

	*rows = NULL;
	*nrows = 0;
	if (!o->backend || !o->nnorms || o->min_reps < 1)
		return mk_error_set(MK_EINVAL, "sweep: backend, normalisations and repetitions "
				    "are required");
	if (!(o->precision >= 0) || !(o->max_time >= 0))
		return mk_error_set(MK_EINVAL, "sweep: precision and max_time must be >= 0");
	if (!(x.tol = mk_compute_tolerance(o->dtype)))
		return mk_error_set(MK_EINVAL, "unknown compute type %d (use MK_COMPUTE_FP32, "
				    "_FP16 or _BF16)", (int)o->dtype);
	if ((ret = mk_sweep_check_memory(o)) || (ret = sweep_validate(o)) ||
	    (ret = mk_attn_configure(o->backend, o->device, o->dtype)))
		return ret;
	x.nrows = mk_attn_ref_rows(o->shape.n, x.rows);
	for (size_t p = 0; p < o->npatterns; p++)
		x.total += (int64_t)sweep_mine(o, p, 0, mk_sweep_param(o->patterns[p]) ? o->ntargets : 1);
	x.total = (int64_t)o->nnorms * (1 + x.total) + 1; /* + the rebase */
	if (!(ret = sweep_alloc(&x)) && !(ret = sweep_dense(&x)) && !(ret = sweep_patterns(&x)))
		ret = sweep_rebase(&x);
	if (!ret) {
		*rows = x.buf;
		*nrows = x.nbuf;
		x.buf = NULL;
	}
	if (!ret && o->progress)
		o->progress(x.total, x.total, "done", o->arg);
	free(x.q);
	free(x.k);
	free(x.v);
	free(x.out);
	free(x.ref);
	for (int k = 0; k < MK_KERNEL_COUNT; k++)
		free(x.times[k]);
	free(x.work);
	free(x.dense_err);
	free(x.buf);
	return ret;
}
