/* The sweep figure (templates/sweep.gp), one drawing for `maskkit sweep
 * --png` and the report's sweep section, so that a kernel has the same line
 * style, and a speed-up the same bars, wherever a user meets it. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "maskkit.h"
#include "plot.h"
#include "report.h"

#define FIG_SERIES_MAX 64

static const char *const fig_kernels[] = {"dense", "masked", "block", "csr"};

typedef struct fig_series {
	char name[200];
	const rp_sweep_row *first;
	int pattern, kernel; /* pattern: from 1 */
	size_t count;
} fig_series;

/* The series a row belongs to: the same pattern, kernel, norm, backend,
 * dtype and n. */
static bool fig_same(const rp_sweep_row *a, const rp_sweep_row *b)
{
	return !strcmp(a->pattern, b->pattern) && !strcmp(a->kernel, b->kernel) &&
	       !strcmp(a->norm, b->norm) && !strcmp(a->backend, b->backend) &&
	       !strcmp(a->dtype, b->dtype) && a->n == b->n;
}

/* The group whose dense baseline a row shares: all but pattern and kernel. */
static bool fig_same_group(const rp_sweep_row *a, const rp_sweep_row *b)
{
	return !strcmp(a->norm, b->norm) && !strcmp(a->backend, b->backend) &&
	       !strcmp(a->dtype, b->dtype) && a->n == b->n;
}

static int fig_cmp(const void *a, const void *b)
{
	const rp_sweep_row *x = a, *y = b;
	const char *const fx[] = {x->pattern, x->kernel, x->norm, x->backend, x->dtype};
	const char *const fy[] = {y->pattern, y->kernel, y->norm, y->backend, y->dtype};

	for (int k = 0; k < 5; k++) {
		int c = strcmp(fx[k], fy[k]);
		if (c)
			return c;
	}
	if (x->n != y->n)
		return (x->n > y->n) - (x->n < y->n);
	return (x->achieved > y->achieved) - (x->achieved < y->achieved);
}

static int fig_kernel(const char *name)
{
	for (int k = 0; k < 4; k++)
		if (!strcmp(name, fig_kernels[k]))
			return k;
	return 1;
}

/* Whether the rows vary in anything but pattern and kernel (the series'
 * names then say norm, backend, dtype and n). */
static bool fig_detail(const rp_sweep_row *rows, size_t count)
{
	for (size_t i = 1; i < count; i++)
		if (!fig_same_group(&rows[i], &rows[0]))
			return true;
	return false;
}

/* Series of rows (sorted): dense is a baseline line, not a series, unless
 * it is all there is.  Pattern numbers in *patterns (npatterns of them). */
static int fig_series_of(const rp_sweep_row *rows, size_t count, fig_series *s,
			 const char **patterns, int *npatterns)
{
	bool only_dense = true, detail = fig_detail(rows, count);
	int ns = 0;

	for (size_t i = 0; i < count; i++)
		only_dense = only_dense && !strcmp(rows[i].kernel, "dense");
	*npatterns = 0;
	for (size_t i = 0; i < count; i++) {
		const rp_sweep_row *r = &rows[i];
		int p;
		if (!strcmp(r->kernel, "dense") && !only_dense)
			continue;
		if (ns > 0 && fig_same(s[ns - 1].first, r)) {
			s[ns - 1].count++;
			continue;
		}
		if (ns == FIG_SERIES_MAX)
			return -1;
		for (p = 0; p < *npatterns && strcmp(patterns[p], r->pattern); p++)
			;
		if (p == *npatterns)
			patterns[(*npatterns)++] = r->pattern;
		s[ns] = (fig_series){.first = r, .count = 1, .pattern = p + 1,
				     .kernel = fig_kernel(r->kernel)};
		if (detail)
			snprintf(s[ns].name, sizeof s[ns].name, "%s/%s %s %s %s n=%lld", r->pattern,
				 r->kernel, r->norm, r->backend, r->dtype, r->n);
		else
			snprintf(s[ns].name, sizeof s[ns].name, "%s/%s", r->pattern, r->kernel);
		ns++;
	}
	return ns;
}

static int fig_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* A group's dense baseline (s): its rows' dense_baseline_s when the CSV has
 * it, else the median of its dense rows' medians. */
static double fig_baseline(const rp_sweep_row *rows, size_t count, const rp_sweep_row *g,
			   double *work)
{
	size_t m = 0;

	for (size_t i = 0; i < count; i++) {
		if (!fig_same_group(&rows[i], g))
			continue;
		if (isfinite(rows[i].baseline_s) && rows[i].baseline_s > 0)
			return rows[i].baseline_s;
		if (!strcmp(rows[i].kernel, "dense"))
			work[m++] = rows[i].median_s;
	}
	if (!m)
		return NAN;
	qsort(work, m, sizeof *work, fig_cmp_double);
	return m % 2 ? work[m / 2] : 0.5 * (work[m / 2 - 1] + work[m / 2]);
}

/* The dense lines: one per group (at most 8), with the legend's words. */
static void fig_dense(FILE *f, const rp_sweep_row *rows, size_t count, double *work)
{
	const rp_sweep_row *seen[8];
	int ngroups = 0;
	char title[512] = "";
	size_t used = 0;

	fputs("dense_ms='", f);
	for (size_t i = 0; i < count && ngroups < 8; i++) {
		bool known = false;
		double b;
		for (int g = 0; g < ngroups && !known; g++)
			known = fig_same_group(seen[g], &rows[i]);
		if (known || !isfinite(b = fig_baseline(rows, count, &rows[i], work)))
			continue;
		seen[ngroups++] = &rows[i];
		fprintf(f, "%s%.6g", ngroups > 1 ? " " : "", 1e3 * b);
		if (used < sizeof title)
			used += (size_t)snprintf(title + used, sizeof title - used, "%s%s %s n=%lld "
						 "(dt %d)", ngroups > 1 ? "; " : "", rows[i].norm,
						 rows[i].dtype, rows[i].n, ngroups);
	}
	fputs("'\ndense_names=", f);
	rp_gp_string(f, ngroups > 1 ? title : "");
	fputc('\n', f);
}

static char *fig_vars(const fig_series *s, int ns, const char *const *patterns, int npatterns,
		      const rp_sweep_row *rows, size_t count, double *work)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	unsigned shown = 0;

	if (!f)
		return NULL;
	fig_dense(f, rows, count, work);
	fputs("kernels='dense masked block csr'\nkernels_shown='", f);
	for (int k = 0; k < ns; k++)
		shown |= 1u << s[k].kernel;
	for (int k = 0, w = 0; k < 4; k++)
		if (shown & (1u << k))
			fprintf(f, "%s%d", w++ ? " " : "", k);
	fprintf(f, "'\nnpatterns=%d\narray patterns[%d]\narray pattern_of[%d]\n"
		"array kernel_of[%d]\n", npatterns, npatterns, ns, ns);
	for (int p = 0; p < npatterns; p++) {
		fprintf(f, "patterns[%d]=", p + 1);
		rp_gp_string(f, patterns[p]);
		fputc('\n', f);
	}
	for (int k = 0; k < ns; k++)
		fprintf(f, "pattern_of[%d]=%d\nkernel_of[%d]=%d\n", k + 1, s[k].pattern, k + 1,
			s[k].kernel);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

void rp_sweep_figure_release(rp_sweep_fig *fig)
{
	free(fig->data);
	free(fig->vars);
	memset(fig, 0, sizeof *fig);
}

int rp_sweep_figure(rp_sweep_row *rows, size_t count, const char *title, rp_sweep_fig *fig)
{
	static const char *const names[] = {"achieved_pct", "median_ms", "q1_ms", "q3_ms",
					    "speedup", "speedup_lo", "speedup_hi"};
	fig_series s[FIG_SERIES_MAX];
	const char *patterns[FIG_SERIES_MAX];
	size_t longest = 0;
	double *work = malloc((count ? count : 1) * sizeof *work);
	int ns, npatterns;

	memset(fig, 0, sizeof *fig);
	if (!work)
		return mk_error_set(MK_ENOMEM, "out of memory for the sweep figure");
	qsort(rows, count, sizeof *rows, fig_cmp);
	if ((ns = fig_series_of(rows, count, s, patterns, &npatterns)) <= 0) {
		free(work);
		return mk_error_set(MK_EINVAL, ns < 0 ? "more than 64 series (pattern, kernel, norm, "
				    "backend, dtype, n) to plot" : "no sweep results to plot");
	}
	for (int k = 0; k < ns; k++)
		longest = s[k].count > longest ? s[k].count : longest;
	fig->data = malloc((size_t)ns * longest * 7 * sizeof *fig->data);
	fig->vars = fig_vars(s, ns, patterns, npatterns, rows, count, work);
	free(work);
	if (!fig->data || !fig->vars) {
		rp_sweep_figure_release(fig);
		return mk_error_set(MK_ENOMEM, "out of memory for the sweep figure");
	}
	/* every block as long as the longest, padded with NaN (skipped) */
	for (int k = 0; k < ns; k++)
		for (size_t i = 0; i < longest; i++) {
			double *d = fig->data + ((size_t)k * longest + i) * 7;
			const rp_sweep_row *x = i < s[k].count ? s[k].first + i : NULL;
			d[0] = x ? 100 * x->achieved : NAN;
			d[1] = x ? 1e3 * x->median_s : NAN;
			d[2] = x ? 1e3 * x->q1_s : NAN;
			d[3] = x ? 1e3 * x->q3_s : NAN;
			d[4] = x ? x->speedup : NAN;
			d[5] = x ? x->speedup_lo : NAN;
			d[6] = x ? x->speedup_hi : NAN;
		}
	fig->plot = (mk_plot){.template_name = "sweep", .title = title, .data = fig->data,
			      .rows = (int64_t)((size_t)ns * longest), .ncols = 7,
			      .col_names = names, .panels = ns, .vars = fig->vars};
	return MK_OK;
}
