/*
 * A sweep's summary for a person: per point (pattern, target, norm) the
 * fastest kernel, its speed-up over dense and the 95% interval, a verdict,
 * and for each pattern the sparsity from which its mask pays off.  The
 * table of every kernel's row is sweep_result.c's.
 */
#include "config.h"
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sweep_internal.h"
#include "result.h"

/* Consecutive rows of one point: the same grid point and norm. */
static size_t sum_point_len(const mk_sweep_result *r, size_t at)
{
	size_t n = 1;
	while (at + n < r->nrows && r->rows[at + n].grid == r->rows[at].grid &&
	       r->rows[at + n].norm == r->rows[at].norm)
		n++;
	return n;
}

/* The non-dense row of the point with the largest speed-up (NULL: dense
 * was the only kernel). */
static const mk_sweep_row *sum_best(const mk_sweep_row *r, size_t n)
{
	const mk_sweep_row *best = NULL;
	for (size_t k = 0; k < n; k++)
		if (r[k].kernel != MK_KERNEL_DENSE && (!best || r[k].speedup > best->speedup))
			best = &r[k];
	return best;
}

static const char *sum_norm(const mk_sweep_result *r, size_t at)
{
	return r->opts->nnorms > 1 ? r->views[at].norm : NULL;
}

static void sum_point(const mk_sweep_result *r, size_t at, size_t n, mk_sweep_best *x)
{
	const mk_sweep_row *p = &r->rows[at], *b = sum_best(p, n);
	size_t used;

	*x = (mk_sweep_best){.pattern = p->pattern, .norm = sum_norm(r, at),
			     .target = p->param ? 100 * p->target : NAN,
			     .achieved = 100 * p->point.sparsity, .tiles = 100 * p->tile_density,
			     .speedup = NAN, .lo = NAN, .hi = NAN, .reps = p->reps};
	if (!b) {
		snprintf(x->verdict, sizeof x->verdict, "dense only: %.3g ms", 1e3 * p->dense_s);
		return;
	}
	x->kernel = mk_attn_kernel_name(b->kernel);
	x->speedup = b->speedup;
	x->lo = b->speedup_lo;
	x->hi = b->speedup_hi;
	x->reps = b->reps;
	used = (size_t)snprintf(x->verdict, sizeof x->verdict, "%s",
				mk_sweep_row_verdict(b, r->precision));
	/* other kernels its interval overlaps: which is fastest is not known */
	for (int k = 0; k < MK_KERNEL_COUNT && used < sizeof x->verdict; k++)
		if ((b->unranked & (1u << k)) && k != MK_KERNEL_DENSE)
			used += (size_t)snprintf(x->verdict + used, sizeof x->verdict - used, " ~%s",
						 mk_attn_kernel_name((mk_attn_kernel)k));
	if (!b->agree && used < sizeof x->verdict)
		snprintf(x->verdict + used, sizeof x->verdict - used, " !");
}

/* ---- where a pattern pays off ----------------------------------------------- */

/* One stretch of consecutive points where the mask pays off. */
typedef struct sum_run {
	const mk_sweep_row *from, *to, *top; /* top: the largest speed-up */
	unsigned kernels;
} sum_run;

typedef struct sum_text {
	char *buf;
	size_t cap, used;
} sum_text;

__attribute__((format(printf, 2, 3))) static void sum_add(sum_text *t, const char *fmt, ...)
{
	va_list ap;

	if (t->used >= t->cap)
		return;
	va_start(ap, fmt);
	t->used += (size_t)vsnprintf(t->buf + t->used, t->cap - t->used, fmt, ap);
	va_end(ap);
}

static void sum_run_text(sum_text *t, const sum_run *u, bool first)
{
	sum_add(t, "%s%.1f%%", first ? "pays off at " : " and ", 100 * u->from->point.sparsity);
	if (u->to != u->from)
		sum_add(t, "-%.1f%%", 100 * u->to->point.sparsity);
	sum_add(t, " (");
	for (int k = 0, n = 0; k < MK_KERNEL_COUNT; k++)
		if (u->kernels & (1u << k))
			sum_add(t, "%s%s", n++ ? "/" : "", mk_attn_kernel_name((mk_attn_kernel)k));
	sum_add(t, " %s%.2fx)", u->to != u->from ? "up to " : "", u->top->speedup);
}

static bool sum_pays(const mk_sweep_result *r, const mk_sweep_row *best)
{
	return best && !strcmp(mk_sweep_row_verdict(best, r->precision), "faster");
}

/* Where (pattern, norm) pays off: the stretches of points whose best kernel
 * is faster than dense, or the best it got to. */
static void sum_pays_off(const mk_sweep_result *r, const char *pattern, const mk_norm *norm,
			 mk_sweep_payoff *x)
{
	const mk_sweep_row *top = NULL;
	sum_text t = {x->text, sizeof x->text, 0};
	sum_run run = {0};
	int any = 0;
	bool open = false;

	x->pattern = pattern;
	x->norm = NULL;
	x->text[0] = '\0';
	for (size_t at = 0; at < r->nrows; at += sum_point_len(r, at)) {
		const mk_sweep_row *p = &r->rows[at], *b = sum_best(p, sum_point_len(r, at));
		if (strcmp(p->pattern, pattern) || p->norm != norm || !b)
			continue;
		x->norm = sum_norm(r, at);
		top = !top || b->speedup > top->speedup ? b : top;
		if (!sum_pays(r, b)) {
			if (open)
				sum_run_text(&t, &run, !any++);
			open = false;
			continue;
		}
		if (!open)
			run = (sum_run){.from = b, .top = b};
		open = true;
		run.to = b;
		run.kernels |= 1u << b->kernel;
		run.top = b->speedup > run.top->speedup ? b : run.top;
	}
	if (open)
		sum_run_text(&t, &run, !any++);
	if (!any && top && top->reps < MK_SWEEP_MIN_REPS &&
	    strcmp(mk_sweep_row_verdict(top, r->precision), "slower"))
		sum_add(&t, "cannot tell from %d runs (%d give a 95%% interval)", top->reps,
			MK_SWEEP_MIN_REPS);
	else if (!any && top)
		sum_add(&t, "does not pay off (its best: %s %.2fx [%.2f, %.2f] at %.1f%%)",
			mk_attn_kernel_name(top->kernel), top->speedup, top->speedup_lo,
			top->speedup_hi, 100 * top->point.sparsity);
}

/* ---- the summary's data ----------------------------------------------------- */

int mk_sweep_summarise(mk_sweep_result *r)
{
	const mk_sweep_opts *o = r->opts;
	size_t points = 0;

	for (size_t at = 0; at < r->nrows; at += sum_point_len(r, at))
		points++;
	r->best = calloc(points ? points : 1, sizeof *r->best);
	r->payoff = calloc(o->npatterns * o->nnorms + 1, sizeof *r->payoff);
	if (!r->best || !r->payoff)
		return mk_error_set(MK_ENOMEM, "out of memory for the summary");
	for (size_t at = 0; at < r->nrows; at += sum_point_len(r, at)) {
		size_t n = sum_point_len(r, at);
		const mk_sweep_row *b = sum_best(&r->rows[at], n);
		sum_point(r, at, n, &r->best[r->nbest++]);
		r->wide += b && !mk_sweep_row_precise(b, r->precision);
		for (size_t k = 0; k < n; k++)
			if (!r->rows[at + k].agree) {
				r->disagree++;
				break;
			}
	}
	r->points = points;
	/* nothing to compare when dense is the only kernel */
	for (size_t p = 0; o->kernels != 1u << MK_KERNEL_DENSE && p < o->npatterns; p++)
		for (size_t ni = 0; ni < o->nnorms; ni++)
			sum_pays_off(r, mk_sweep_label(o, p), &o->norms[ni], &r->payoff[r->npayoff++]);
	return MK_OK;
}

/* ---- the records and the summary -------------------------------------------- */

static void sum_show_interval(const void *rec, char *buf, size_t cap)
{
	const mk_sweep_best *b = rec;
	snprintf(buf, cap, "[%5.2f, %5.2f]", b->lo, b->hi);
}

static const mk_field sum_best_fields[] = {
	{MK_FIELD(mk_sweep_best, pattern, "pattern", MK_FT_STR)},
	{MK_FIELD(mk_sweep_best, norm, "norm", MK_FT_STR), .flags = MK_FF_OMIT},
	{MK_FIELD(mk_sweep_best, target, "target", MK_FT_REAL), .fmt = "%.0f%%",
	 .help = "the target sparsity; absent for a fixed mask"},
	{MK_FIELD(mk_sweep_best, achieved, "achieved", MK_FT_REAL), .fmt = "%.1f%%"},
	{MK_FIELD(mk_sweep_best, tiles, "tiles", MK_FT_REAL), .fmt = "%.0f%%",
	 .help = "the share of tiles the block kernel runs"},
	{MK_FIELD(mk_sweep_best, kernel, "best", MK_FT_STR), .help = "the fastest kernel"},
	{MK_FIELD(mk_sweep_best, speedup, "speedup", MK_FT_REAL), .label = "speed-up",
	 .fmt = "%.2fx", .help = "the median of dense/kernel"},
	{MK_FIELD(mk_sweep_best, lo, "speedup_lo", MK_FT_REAL), .label = "95% interval",
	 .show = sum_show_interval},
	{MK_FIELD(mk_sweep_best, hi, "speedup_hi", MK_FT_REAL), .flags = MK_FF_NOTEXT},
	{MK_FIELD(mk_sweep_best, reps, "reps", MK_FT_INT)},
	{MK_FIELD(mk_sweep_best, verdict, "verdict", MK_FT_CHARS)},
};

const mk_record mk_sweep_best_record = MK_RECORD("sweep_best", mk_sweep_best, sum_best_fields);

static const mk_field sum_payoff_fields[] = {
	{MK_FIELD(mk_sweep_payoff, pattern, "pattern", MK_FT_STR)},
	{MK_FIELD(mk_sweep_payoff, norm, "norm", MK_FT_STR), .flags = MK_FF_OMIT},
	{MK_FIELD(mk_sweep_payoff, text, "pays_off", MK_FT_CHARS), .label = "pays off"},
};

const mk_record mk_sweep_payoff_record =
	MK_RECORD("sweep_payoff", mk_sweep_payoff, sum_payoff_fields);

int mk_sweep_summary(FILE *f, const mk_sweep_result *r)
{
	const mk_sweep_opts *o = r->opts;
	const mk_machine *m = &r->machine;
	char norm[32];
	int ret;

	fprintf(f, "maskkit sweep: n %" PRId64 ", batch %" PRId64 ", heads %" PRId64 ", d %"
		PRId64 ", %s, %s (%s), tile %" PRId64 "\n", o->shape.n, o->shape.batch,
		o->shape.heads, o->shape.d, r->dtype, r->backend,
		m->gpu[0] ? m->gpu : m->cpu, o->tile);
	for (size_t ni = 0; ni < o->nnorms; ni++) {
		mk_norm_format(&o->norms[ni], norm, sizeof norm);
		fprintf(f, "dense%s%s: %.3g ms a run, the median over the sweep's points (each times "
			"dense beside its kernels)\n", o->nnorms > 1 ? ", " : "",
			o->nnorms > 1 ? norm : "", 1e3 * r->baseline[ni]);
	}
	fputs("speed-up: the median of dense/kernel over interleaved repetitions, with its 95% "
	      "interval\n\n", f);
	if ((ret = mk_emit(f, MK_EMIT_TABLE, &mk_sweep_best_record, r->best, (size_t)r->nbest, 0)))
		return ret;
	if (!r->npayoff)
		return MK_OK;
	fputs("\nwhere the mask pays off (its best kernel faster than dense: the whole "
	      "interval above 1):\n", f);
	return mk_emit(f, MK_EMIT_TABLE, &mk_sweep_payoff_record, r->payoff, (size_t)r->npayoff,
		       MK_EMIT_NO_HEAD);
}
