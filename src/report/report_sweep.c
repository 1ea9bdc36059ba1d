/* maskkit report: the sweep section, from `maskkit sweep` CSV files given
 * with --sweep or from a CPU sweep run on the spot. */
#include "config.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "maskkit.h"
#include "plot.h"
#include "report.h"

#define SW_LINE_MAX 4096
#define SW_ROWS_MAX 100000
#define SW_SERIES_MAX 64
#define SW_MD_ROWS 120

enum { C_PATTERN, C_ACHIEVED, C_KERNEL, C_NORM, C_BACKEND, C_DTYPE, C_N, C_MEDIAN, C_SPEEDUP,
       C_COUNT };
static const char *const sw_cols[C_COUNT] = {"pattern", "achieved", "kernel", "norm", "backend",
					     "dtype", "n", "median_s", "speedup"};

static int sw_split(char *line, char **field, int max)
{
	int n = 0;

	for (char *p = line;; p++) {
		if (n == max)
			return -1;
		field[n++] = p;
		p = strchr(p, ',');
		if (!p)
			break;
		*p = '\0';
	}
	return n;
}

static int sw_header(char *line, int *index, char *reason, size_t size)
{
	char *field[64];
	int n = sw_split(line, field, 64);

	if (n < 0) {
		snprintf(reason, size, "more than 64 columns in the header");
		return -1;
	}
	for (int c = 0; c < C_COUNT; c++) {
		index[c] = -1;
		for (int k = 0; k < n; k++)
			if (!strcmp(field[k], sw_cols[c]))
				index[c] = k;
		if (index[c] < 0) {
			snprintf(reason, size, "no column '%s' in the header (is it the CSV of "
				 "'maskkit sweep -o FILE.csv'?)", sw_cols[c]);
			return -1;
		}
	}
	return n;
}

static bool sw_number(const char *s, double *x)
{
	char *end;

	errno = 0;
	*x = strtod(s, &end);
	return *s && !*end && !errno && isfinite(*x);
}

static bool sw_copy(char *dst, size_t size, const char *src)
{
	return (size_t)snprintf(dst, size, "%s", src) < size && *src;
}

/* One data line into row; false with the problem in reason. */
static bool sw_row(char *line, int nfields, const int *ix, rp_sweep_row *row, char *reason,
		   size_t size)
{
	char *f[64];
	double n;

	if (sw_split(line, f, 64) != nfields) {
		snprintf(reason, size, "%s fields where the header has %d",
			 nfields < 64 ? "a different number of" : "too many", nfields);
		return false;
	}
	if (!sw_copy(row->pattern, sizeof row->pattern, f[ix[C_PATTERN]]) ||
	    !sw_copy(row->kernel, sizeof row->kernel, f[ix[C_KERNEL]]) ||
	    !sw_copy(row->norm, sizeof row->norm, f[ix[C_NORM]]) ||
	    !sw_copy(row->backend, sizeof row->backend, f[ix[C_BACKEND]]) ||
	    !sw_copy(row->dtype, sizeof row->dtype, f[ix[C_DTYPE]])) {
		snprintf(reason, size, "an empty or over-long name (pattern, kernel, norm, backend "
			 "or dtype)");
		return false;
	}
	if (!sw_number(f[ix[C_ACHIEVED]], &row->achieved) || row->achieved < 0 || row->achieved > 1) {
		snprintf(reason, size, "achieved '%s' is not a fraction in [0, 1]", f[ix[C_ACHIEVED]]);
		return false;
	}
	if (!sw_number(f[ix[C_MEDIAN]], &row->median_s) || row->median_s <= 0) {
		snprintf(reason, size, "median_s '%s' is not a positive time", f[ix[C_MEDIAN]]);
		return false;
	}
	if (!sw_number(f[ix[C_SPEEDUP]], &row->speedup) || row->speedup <= 0) {
		snprintf(reason, size, "speedup '%s' is not a positive number", f[ix[C_SPEEDUP]]);
		return false;
	}
	if (!sw_number(f[ix[C_N]], &n) || n < 1 || n > 1e9 || n != floor(n)) {
		snprintf(reason, size, "n '%s' is not a sequence length", f[ix[C_N]]);
		return false;
	}
	row->n = (long long)n;
	return true;
}

int rp_sweep_read(const char *path, rp_sweep_row **rows, size_t *count, char *reason,
		  size_t size)
{
	FILE *f = NULL;
	char line[SW_LINE_MAX], why[RP_REASON_MAX];
	int index[C_COUNT], nfields = 0, ret = mk_input_open(path, (void **)&f);
	size_t cap = 0;
	long lineno = 0;

	*rows = NULL;
	*count = 0;
	if (ret) {
		snprintf(reason, size, "sweep results %s", mk_error());
		return ret;
	}
	ret = MK_EFORMAT;
	while (fgets(line, sizeof line, f)) {
		size_t len = strlen(line);
		lineno++;
		if (len == sizeof line - 1 && line[len - 1] != '\n') {
			snprintf(reason, size, "sweep results '%s' line %ld: longer than %d bytes", path,
				 lineno, SW_LINE_MAX - 2);
			goto cleanup;
		}
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (!len || line[0] == '#')
			continue;
		if (!nfields) {
			if ((nfields = sw_header(line, index, why, sizeof why)) < 0) {
				snprintf(reason, size, "sweep results '%s' line %ld: %s", path, lineno, why);
				goto cleanup;
			}
			continue;
		}
		if (*count == cap) {
			rp_sweep_row *grown;
			if (cap >= SW_ROWS_MAX) {
				snprintf(reason, size, "sweep results '%s': more than %d rows", path,
					 SW_ROWS_MAX);
				goto cleanup;
			}
			cap = cap ? 2 * cap : 64;
			grown = realloc(*rows, cap * sizeof *grown);
			if (!grown) {
				snprintf(reason, size, "out of memory");
				ret = MK_ENOMEM;
				goto cleanup;
			}
			*rows = grown;
		}
		if (!sw_row(line, nfields, index, &(*rows)[*count], why, sizeof why)) {
			snprintf(reason, size, "sweep results '%s' line %ld: %s", path, lineno, why);
			goto cleanup;
		}
		(*count)++;
	}
	if (ferror(f)) {
		snprintf(reason, size, "sweep results '%s': read error", path);
		ret = MK_EIO;
	} else if (!nfields || !*count) {
		snprintf(reason, size, "sweep results '%s': no %s", path, nfields ? "results" :
			 "header line (is it the CSV of 'maskkit sweep -o FILE.csv'?)");
	} else {
		ret = MK_OK;
	}
cleanup:
	fclose(f);
	if (ret) {
		free(*rows);
		*rows = NULL;
		*count = 0;
	}
	return ret;
}

/* ---- the figure --------------------------------------------------------------- */

typedef struct sw_series {
	char name[160];
	const rp_sweep_row *first;
	int pattern, kernel;
	size_t count;
} sw_series;

static bool sw_same(const rp_sweep_row *a, const rp_sweep_row *b)
{
	return !strcmp(a->pattern, b->pattern) && !strcmp(a->kernel, b->kernel) &&
	       !strcmp(a->norm, b->norm) && !strcmp(a->backend, b->backend) &&
	       !strcmp(a->dtype, b->dtype) && a->n == b->n;
}

static int sw_cmp_achieved(const void *a, const void *b)
{
	const rp_sweep_row *x = a, *y = b;
	int c = strcmp(x->pattern, y->pattern);

	if (!c)
		c = strcmp(x->kernel, y->kernel);
	if (!c)
		c = strcmp(x->norm, y->norm);
	if (!c)
		c = strcmp(x->backend, y->backend);
	if (!c)
		c = strcmp(x->dtype, y->dtype);
	if (!c)
		c = (x->n > y->n) - (x->n < y->n);
	if (!c)
		c = (x->achieved > y->achieved) - (x->achieved < y->achieved);
	return c;
}

/* Series: one per (pattern, kernel, norm, backend, dtype, n), dense kept
 * once per pattern as it ignores the mask. */
static int sw_series_of(const rp_sweep_row *rows, size_t count, sw_series *s, bool detail)
{
	int ns = 0, np = 0, nk = 0;
	char patterns[SW_SERIES_MAX][64], kernels[8][16];

	for (size_t i = 0; i < count; i++) {
		int k;
		if (!strcmp(rows[i].kernel, "dense"))
			continue; /* it ignores the mask: a reference line, not a series */
		for (k = 0; k < ns && !sw_same(s[k].first, &rows[i]); k++)
			;
		if (k < ns) {
			s[k].count++;
			continue;
		}
		if (ns == SW_SERIES_MAX)
			return -1;
		s[ns] = (sw_series){.first = &rows[i], .count = 1};
		for (k = 0; k < np && strcmp(patterns[k], rows[i].pattern); k++)
			;
		if (k == np && np < SW_SERIES_MAX)
			snprintf(patterns[np++], sizeof patterns[0], "%s", rows[i].pattern);
		s[ns].pattern = k;
		for (k = 0; k < nk && strcmp(kernels[k], rows[i].kernel); k++)
			;
		if (k == nk && nk < 8)
			snprintf(kernels[nk++], sizeof kernels[0], "%s", rows[i].kernel);
		s[ns].kernel = k;
		if (detail)
			snprintf(s[ns].name, sizeof s[ns].name, "%s/%s %s %s %s n=%lld", rows[i].pattern,
				 rows[i].kernel, rows[i].norm, rows[i].backend, rows[i].dtype, rows[i].n);
		else
			snprintf(s[ns].name, sizeof s[ns].name, "%s/%s", rows[i].pattern,
				 rows[i].kernel);
		ns++;
	}
	return ns;
}

static bool sw_detail(const rp_sweep_row *rows, size_t count)
{
	for (size_t i = 1; i < count; i++)
		if (strcmp(rows[i].norm, rows[0].norm) || strcmp(rows[i].backend, rows[0].backend) ||
		    strcmp(rows[i].dtype, rows[0].dtype) || rows[i].n != rows[0].n)
			return true;
	return false;
}

/* Dense medians (ms), one per distinct (norm, backend, dtype, n), as words. */
static void sw_dense(FILE *f, const rp_sweep_row *rows, size_t count)
{
	fputs("dense_ms='", f);
	for (size_t i = 0, shown = 0; i < count && shown < 16; i++) {
		bool seen = false;
		if (strcmp(rows[i].kernel, "dense"))
			continue;
		for (size_t k = 0; k < i && !seen; k++)
			seen = !strcmp(rows[k].kernel, "dense") && !strcmp(rows[k].norm, rows[i].norm) &&
			       !strcmp(rows[k].backend, rows[i].backend) &&
			       !strcmp(rows[k].dtype, rows[i].dtype) && rows[k].n == rows[i].n;
		if (!seen)
			fprintf(f, "%s%.6g", shown++ ? " " : "", 1e3 * rows[i].median_s);
	}
	fputs("'\n", f);
}

static char *sw_vars(const sw_series *s, int ns, const rp_sweep_row *rows, size_t count)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	sw_dense(f, rows, count);
	fprintf(f, "array series[%d]\narray pattern_of[%d]\narray kernel_of[%d]\n", ns, ns, ns);
	for (int k = 0; k < ns; k++) {
		fprintf(f, "series[%d]=", k + 1);
		rp_gp_string(f, s[k].name);
		fprintf(f, "\npattern_of[%d]=%d\nkernel_of[%d]=%d\n", k + 1, s[k].pattern, k + 1,
			s[k].kernel);
	}
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* Rows sorted so that each series' rows are together and by sparsity. */
static void sw_plot(report *r, rp_item *it, rp_sweep_row *rows, size_t count)
{
	sw_series s[SW_SERIES_MAX];
	const char *names[] = {"achieved_pct", "median_ms", "speedup"};
	char *vars = NULL;
	double *data = NULL;
	size_t longest = 0;
	int ns;

	qsort(rows, count, sizeof *rows, sw_cmp_achieved);
	ns = sw_series_of(rows, count, s, sw_detail(rows, count));
	if (ns < 0) {
		rp_fail(r, it, "more than 64 series (pattern, kernel, norm, backend, dtype, n) to plot");
		return;
	}
	if (ns == 0) {
		rp_fail(r, it, "the sweep results hold only dense attention: nothing to compare");
		return;
	}
	for (int k = 0; k < ns; k++)
		longest = s[k].count > longest ? s[k].count : longest;
	data = malloc((size_t)ns * longest * 3 * sizeof *data);
	vars = sw_vars(s, ns, rows, count);
	if (!data || !vars) {
		rp_fail(r, it, "out of memory");
		goto cleanup;
	}
	/* every block as long as the longest, padded with NaN (skipped) */
	for (int k = 0; k < ns; k++)
		for (size_t i = 0, taken = 0; i < longest; i++) {
			double *d = data + ((size_t)k * longest + i) * 3;
			const rp_sweep_row *x = NULL;
			while (taken < count && !x) {
				const rp_sweep_row *y = &rows[taken++];
				if (sw_same(y, s[k].first))
					x = y;
			}
			d[0] = x ? 100 * x->achieved : NAN;
			d[1] = x ? 1e3 * x->median_s : NAN;
			d[2] = x ? x->speedup : NAN;
		}
	mk_plot p = {.template_name = "report_sweep",
		     .title = "Attention time and speed-up over dense against sparsity",
		     .data = data, .rows = (int64_t)(ns * longest), .ncols = 3, .col_names = names,
		     .panels = ns, .vars = vars};
	rp_plot(r, it, &p);
cleanup:
	free(data);
	free(vars);
}

static void sw_table(report *r, const rp_sweep_row *rows, size_t count)
{
	rp_md(r, "| pattern | kernel | norm | backend | n | achieved ρ (%%) | median (ms) | "
	      "speed-up vs dense |\n|---|---|---|---|---:|---:|---:|---:|\n");
	for (size_t i = 0; i < count && i < SW_MD_ROWS; i++) {
		const char *cells[] = {rows[i].pattern, rows[i].kernel, rows[i].norm, rows[i].backend};
		for (int c = 0; c < 4; c++) {
			rp_md(r, "| ");
			rp_md_text(r, cells[c]);
			rp_md(r, " ");
		}
		rp_md_text(r, rows[i].dtype);
		rp_md(r, " | %lld | %.1f | %.3f | %.2f |\n", rows[i].n, 100 * rows[i].achieved,
		      1e3 * rows[i].median_s, rows[i].speedup);
	}
	if (count > SW_MD_ROWS)
		rp_md(r, "\n(%zu more rows in the CSV.)\n", count - SW_MD_ROWS);
	rp_md(r, "\n");
}

/* The given files, read and concatenated into tables/sweep.csv. */
static int sw_given(report *r, rp_item *ic, rp_sweep_row **all, size_t *count)
{
	char reason[RP_REASON_MAX];
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return MK_ENOMEM;
	fprintf(f, "source,achieved,pattern,kernel,norm,backend,dtype,n,median_s,speedup\n");
	for (int k = 0; k < r->nsweeps; k++) {
		rp_sweep_row *rows, *grown;
		size_t n;
		if (rp_sweep_read(r->sweeps[k], &rows, &n, reason, sizeof reason)) {
			rp_fail(r, ic, reason);
			continue;
		}
		grown = realloc(*all, (*count + n) * sizeof *grown);
		if (!grown) {
			free(rows);
			fclose(f);
			free(text);
			return MK_ENOMEM;
		}
		memcpy(grown + *count, rows, n * sizeof *rows);
		*all = grown;
		*count += n;
		for (size_t i = 0; i < n; i++) {
			const char *const fields[] = {rows[i].pattern, rows[i].kernel, rows[i].norm,
						      rows[i].backend, rows[i].dtype};
			rp_csv_field(f, strrchr(r->sweeps[k], '/') ? strrchr(r->sweeps[k], '/') + 1 :
				     r->sweeps[k]);
			fprintf(f, ",%.6f", rows[i].achieved);
			for (int c = 0; c < 5; c++) {
				fputc(',', f);
				rp_csv_field(f, fields[c]);
			}
			fprintf(f, ",%lld,%.9g,%.6g\n", rows[i].n, rows[i].median_s, rows[i].speedup);
		}
		free(rows);
	}
	if (fclose(f) != 0) {
		free(text);
		return MK_ENOMEM;
	}
	if (ic->ok && rp_write_file(r, ic->file, text, len))
		rp_fail(r, ic, mk_error());
	free(text);
	return MK_OK;
}

void rp_section_sweep(report *r)
{
	rp_item *ic = rp_promise(r, "tables/sweep.csv"), *ip = rp_promise(r, "figures/sweep.png");
	char reason[RP_REASON_MAX], path[8192], *cmds[1] = {0};
	rp_sweep_row *rows = NULL;
	size_t count = 0;

	if (r->nsweeps) {
		rp_md(r, "From the results given with `--sweep`:");
		for (int k = 0; k < r->nsweeps; k++) {
			rp_md(r, " ");
			rp_md_code(r, r->sweeps[k]);
		}
		rp_md(r, ".\n\n");
		if (sw_given(r, ic, &rows, &count))
			rp_fail(r, ic, "out of memory");
	} else {
		const char *argv[] = {"sweep", "--backend", "cpu", "--n", r->quick ? "512" : "1024",
				      "--heads", r->quick ? "2" : "4", "--patterns",
				      r->quick ? "local,strided,bigbird" :
				      "local,strided,fixed,logsparse,bigbird,longformer",
				      "--sparsity", r->quick ? "50%,70%,90%" : "10%..90%:20%", "--reps",
				      r->quick ? "5" : "10", "-o", ic->file, NULL};
		rp_md(r, "No `--sweep` results given: a small CPU sweep run now on this machine, "
		      "the median of %s runs per point. Its timings, unlike everything else "
		      "here, change from run to run, and on a shared or loaded CPU differences "
		      "of less than about 2× are noise. For numbers to quote, run `maskkit sweep` "
		      "(more `--reps`, an idle machine or a GPU) and give its CSV with "
		      "`--sweep`.\n\n", r->quick ? "5" : "10");
		if (rp_run(r, argv, NULL, &cmds[0], reason, sizeof reason))
			rp_fail(r, ic, reason);
		else if (rp_path(r, ic->file, path, sizeof path) ||
			 rp_sweep_read(path, &rows, &count, reason, sizeof reason))
			rp_fail(r, ic, reason);
	}
	if (!count)
		rp_fail(r, ip, ic->ok ? "no sweep results" : ic->reason);
	else
		sw_plot(r, ip, rows, count);
	rp_md_figure(r, ip, "time and speed-up against sparsity");
	if (count)
		sw_table(r, rows, count);
	if (!ic->ok) {
		rp_md(r, "> **Sweep results not read:** ");
		rp_md_text(r, ic->reason);
		rp_md(r, "\n\n");
	}
	if (ic->ok)
		rp_md(r, "Numbers: [`%s`](%s).\n", ic->file, ic->file);
	rp_md_commands(r, (const char *const *)cmds, 1);
	free(cmds[0]);
	free(rows);
}
