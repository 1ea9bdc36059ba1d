/* maskkit sweep's summary for a person: a line per point (pattern, target,
 * norm) with the fastest kernel, its speed-up over dense and the 95%
 * interval, a verdict, and for each pattern the sparsity from which its
 * mask pays off.  The CSV or JSON (-o, --csv) has every kernel's row. */
#include "config.h"
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "cmd_sweep.h"

#define SUM_PATTERN_MAX 20 /* columns of the pattern's name */

/* Consecutive rows of one point: the same grid point and norm. */
static size_t sum_point_len(const sweep_cli *c, size_t at)
{
	size_t n = 1;
	while (at + n < c->nrows && c->rows[at + n].grid == c->rows[at].grid &&
	       c->rows[at + n].norm == c->rows[at].norm)
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

static const char *sum_verdict(const sweep_cli *c, const mk_sweep_row *r)
{
	return mk_sweep_row_verdict(r, c->s.precision);
}

static bool sum_pays(const sweep_cli *c, const mk_sweep_row *best)
{
	return best && !strcmp(sum_verdict(c, best), "faster");
}

static void sum_line(FILE *f, const sweep_cli *c, const mk_sweep_row *r, size_t n, int width)
{
	const mk_sweep_row *b = sum_best(r, n);
	char norm[32], ties[64] = "", target[16] = "-";
	size_t used = 0;

	if (r->param) /* a fixed mask has no target: its own sparsity */
		snprintf(target, sizeof target, "%.0f%%", 100 * r->target);
	fprintf(f, "%-*.*s", width, width, r->pattern);
	if (c->s.nnorms > 1) {
		mk_norm_format(r->norm, norm, sizeof norm);
		fprintf(f, "  %-10.10s", norm);
	}
	fprintf(f, "  %6s  %7.1f%%  %4.0f%%", target, 100 * r->point.sparsity,
		100 * r->tile_density);
	if (!b) {
		fprintf(f, "  dense only: %.3g ms\n", 1e3 * r->dense_s);
		return;
	}
	/* other kernels its interval overlaps: which is fastest is not known */
	for (int k = 0; k < MK_KERNEL_COUNT && used < sizeof ties; k++)
		if ((b->unranked & (1u << k)) && k != MK_KERNEL_DENSE)
			used += (size_t)snprintf(ties + used, sizeof ties - used, " ~%s",
						 mk_attn_kernel_name((mk_attn_kernel)k));
	fprintf(f, "  %-6s  %6.2fx  [%5.2f, %5.2f]  %4d  %s%s%s\n", mk_attn_kernel_name(b->kernel),
		b->speedup, b->speedup_lo, b->speedup_hi, b->reps, sum_verdict(c, b), ties,
		b->agree ? "" : " !");
}

/* One stretch of consecutive points where the mask pays off. */
typedef struct sum_run {
	const mk_sweep_row *from, *to, *top; /* top: the largest speed-up */
	unsigned kernels;
} sum_run;

static void sum_run_print(FILE *f, const sum_run *u, bool first)
{
	fprintf(f, "%s%.1f%%", first ? "pays off at " : " and ", 100 * u->from->point.sparsity);
	if (u->to != u->from)
		fprintf(f, "-%.1f%%", 100 * u->to->point.sparsity);
	fputs(" (", f);
	for (int k = 0, n = 0; k < MK_KERNEL_COUNT; k++)
		if (u->kernels & (1u << k))
			fprintf(f, "%s%s", n++ ? "/" : "", mk_attn_kernel_name((mk_attn_kernel)k));
	fprintf(f, " %s%.2fx)", u->to != u->from ? "up to " : "", u->top->speedup);
}

/* Where (pattern, norm) pays off: the stretches of points whose best kernel
 * is faster than dense, or the best it got to. */
static void sum_pays_off(FILE *f, const sweep_cli *c, const char *pattern, const mk_norm *norm,
			 int width)
{
	const mk_sweep_row *top = NULL;
	sum_run run = {0};
	int any = 0;
	bool open = false;
	char nm[32];

	fprintf(f, "  %-*.*s", width, width, pattern);
	if (c->s.nnorms > 1) {
		mk_norm_format(norm, nm, sizeof nm);
		fprintf(f, "  %-10.10s", nm);
	}
	fputs("  ", f);
	for (size_t at = 0; at < c->nrows; at += sum_point_len(c, at)) {
		const mk_sweep_row *r = &c->rows[at], *b = sum_best(r, sum_point_len(c, at));
		if (strcmp(r->pattern, pattern) || r->norm != norm || !b)
			continue;
		top = !top || b->speedup > top->speedup ? b : top;
		if (!sum_pays(c, b)) {
			if (open)
				sum_run_print(f, &run, !any++);
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
		sum_run_print(f, &run, !any++);
	if (!any && top && top->reps < MK_SWEEP_MIN_REPS && strcmp(sum_verdict(c, top), "slower"))
		fprintf(f, "cannot tell from %d runs (%d give a 95%% interval)", top->reps,
			MK_SWEEP_MIN_REPS);
	else if (!any && top)
		fprintf(f, "does not pay off (its best: %s %.2fx [%.2f, %.2f] at %.1f%%)",
			mk_attn_kernel_name(top->kernel), top->speedup, top->speedup_lo,
			top->speedup_hi, 100 * top->point.sparsity);
	fputc('\n', f);
}

void sweep_summary(const sweep_cli *c, FILE *f)
{
	const mk_attn_shape *s = &c->s.shape;
	int width = 7;
	char norm[32];
	mk_machine m;

	for (size_t k = 0; k < c->nrows; k++) {
		int len = (int)strlen(c->rows[k].pattern);
		width = len > width ? (len < SUM_PATTERN_MAX ? len : SUM_PATTERN_MAX) : width;
	}
	mk_machine_describe_backend(c->s.backend, &m);
	fprintf(f, "maskkit sweep: n %" PRId64 ", batch %" PRId64 ", heads %" PRId64 ", d %"
		PRId64 ", %s, %s (%s), tile %" PRId64 "\n", s->n, s->batch, s->heads, s->d,
		mk_compute_name(c->s.dtype), mk_attn_backend_name(c->s.backend),
		m.gpu[0] ? m.gpu : m.cpu, c->s.tile);
	for (size_t ni = 0; ni < c->s.nnorms; ni++) {
		mk_norm_format(&c->norms[ni], norm, sizeof norm);
		fprintf(f, "dense%s%s: %.3g ms a run, the median over the sweep's points (each times "
			"dense beside its kernels)\n", c->s.nnorms > 1 ? ", " : "",
			c->s.nnorms > 1 ? norm : "", 1e3 * c->baseline[ni]);
	}
	fprintf(f, "speed-up: the median of dense/kernel over interleaved repetitions, with its "
		"95%% interval\n\n%-*s%s  %6s  %8s  %5s  %-6s  %7s  %14s  %4s  %s\n", width, "pattern",
		c->s.nnorms > 1 ? "  norm      " : "", "target", "achieved", "tiles", "best",
		"speed-up", "95% interval", "reps", "verdict");
	for (size_t at = 0; at < c->nrows; at += sum_point_len(c, at))
		sum_line(f, c, &c->rows[at], sum_point_len(c, at), width);
	if (c->s.kernels == 1u << MK_KERNEL_DENSE) /* nothing to compare */
		return;
	fputs("\nwhere the mask pays off (its best kernel faster than dense: the whole "
	      "interval above 1):\n", f);
	for (size_t p = 0; p < c->s.npatterns; p++)
		for (size_t ni = 0; ni < c->s.nnorms; ni++)
			sum_pays_off(f, c, mk_sweep_label(&c->s, p), &c->norms[ni], width);
}

void sweep_summary_warn(const sweep_cli *c)
{
	size_t points = 0, wide = 0, disagree = 0;

	for (size_t at = 0; at < c->nrows; at += sum_point_len(c, at)) {
		const mk_sweep_row *r = &c->rows[at], *b = sum_best(r, sum_point_len(c, at));
		points++;
		wide += b && !mk_sweep_row_precise(b, c->s.precision);
		for (size_t k = 0; k < sum_point_len(c, at); k++)
			if (!r[k].agree) {
				disagree++;
				break;
			}
	}
	if (wide && c->s.min_reps >= c->s.max_reps)
		fprintf(stderr, "maskkit: warning: at %zu of %zu points the best kernel's interval "
			"is wider than +-%g%% after --reps %d: more runs, or a quiet machine, "
			"narrow it\n", wide, points, 100 * c->s.precision, c->s.min_reps);
	else if (wide)
		fprintf(stderr, "maskkit: warning: at %zu of %zu points the best kernel's interval "
			"is wider than +-%g%% when --max-time (%g s) or --max-reps (%d) stopped it: "
			"a larger one, or a quiet machine, narrows it\n", wide, points,
			100 * c->s.precision, c->s.max_time, c->s.max_reps);
	if (disagree)
		fprintf(stderr, "maskkit: warning: at %zu of %zu points the ratio of the medians "
			"fell outside the paired interval, measured twice (agree 0, rank_ok 0): "
			"the machine was disturbed unevenly\n", disagree, points);
}
