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

#define SW_LINE_MAX 8192
#define SW_ROWS_MAX 100000
#define SW_MD_ROWS 40
#define SW_MD_FOLD 12 /* longer tables are folded (<details>) */

/* The columns read: the first C_REQUIRED must be there; the others came
 * with the intervals (NaN, or -1, in an older CSV). */
enum { C_PATTERN, C_ACHIEVED, C_KERNEL, C_NORM, C_BACKEND, C_DTYPE, C_N, C_MEDIAN, C_SPEEDUP,
       C_REQUIRED, C_TARGET = C_REQUIRED, C_Q1, C_Q3, C_LO, C_HI, C_DENSE, C_BASELINE, C_REPS,
       C_AGREE, C_RANK_OK, C_COUNT };
static const char *const sw_cols[C_COUNT] = {
	"pattern", "achieved", "kernel", "norm", "backend", "dtype", "n", "median_s", "speedup",
	"target", "q1_s", "q3_s", "speedup_lo", "speedup_hi", "dense_s", "dense_baseline_s", "reps",
	"agree", "rank_ok"};

/* Splits a CSV line in place (RFC 4180: a quoted field may hold commas and
 * doubled quotes); -1 for more than max fields or a broken quote. */
static int sw_split(char *line, char **field, int max)
{
	int n = 0;
	char *p = line;

	for (;;) {
		char *out = p;
		if (n == max)
			return -1;
		field[n++] = p;
		if (*p == '"') {
			for (p++;; p++) {
				if (!*p)
					return -1;
				if (*p == '"' && p[1] != '"')
					break;
				if (*p == '"')
					p++;
				*out++ = *p;
			}
			p++;
			if (*p && *p != ',')
				return -1;
		} else {
			while (*p && *p != ',')
				*out++ = *p++;
		}
		if (!*p) {
			*out = '\0';
			return n;
		}
		*out = '\0';
		p++;
	}
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
		if (index[c] < 0 && c < C_REQUIRED) {
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

/* An optional column: NaN when absent or empty. */
static bool sw_optional(char **f, const int *ix, int c, double *x)
{
	*x = NAN;
	return ix[c] < 0 || !*f[ix[c]] || sw_number(f[ix[c]], x);
}

/* The optional columns of row; false with the problem in reason. */
static bool sw_row_more(char **f, const int *ix, rp_sweep_row *row, char *reason, size_t size)
{
	double *dst[] = {&row->target, &row->q1_s, &row->q3_s, &row->speedup_lo,
			 &row->speedup_hi, &row->dense_s, &row->baseline_s};
	int *flags[] = {&row->reps, &row->agree, &row->rank_ok};
	double v;

	for (int c = C_TARGET; c < C_REPS; c++)
		if (!sw_optional(f, ix, c, dst[c - C_TARGET])) {
			snprintf(reason, size, "%s '%s' is not a number", sw_cols[c], f[ix[c]]);
			return false;
		}
	for (int c = C_REPS; c < C_COUNT; c++) {
		if (!sw_optional(f, ix, c, &v) || (isfinite(v) && (v < 0 || v != floor(v) ||
								   v > 1e9))) {
			snprintf(reason, size, "%s '%s' is not a count", sw_cols[c], f[ix[c]]);
			return false;
		}
		*flags[c - C_REPS] = isfinite(v) ? (int)v : -1;
	}
	return true;
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
	return sw_row_more(f, ix, row, reason, size);
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

/* ---- the figure and the table ------------------------------------------------- */

static void sw_plot(report *r, rp_item *it, rp_sweep_row *rows, size_t count)
{
	rp_sweep_fig fig;

	if (rp_sweep_figure(rows, count, "Attention time and speed-up over dense against "
			    "sparsity", &fig)) {
		rp_fail(r, it, mk_error());
		return;
	}
	rp_plot(r, it, &fig.plot);
	rp_sweep_figure_release(&fig);
}

/* "1.23 [1.20, 1.26]", or the speed-up alone from a CSV without intervals. */
static void sw_speedup(report *r, const rp_sweep_row *x)
{
	if (isfinite(x->speedup_lo) && isfinite(x->speedup_hi))
		rp_md(r, "%.2f× [%.2f, %.2f]", x->speedup, x->speedup_lo, x->speedup_hi);
	else
		rp_md(r, "%.2f×", x->speedup);
}

/* One line per point (rows sorted by the figure: pattern, kernel, ...):
 * each non-dense kernel's median, dense's median at the same point and the
 * speed-up with its interval, so that a reader can check that the ratio of
 * the two times shown lies in the interval; rank_ok and reps as the CSV
 * says.  Long tables are cut, the CSV has every row. */
static void sw_table(report *r, const rp_sweep_row *rows, size_t count)
{
	size_t shown = 0, total = 0;

	for (size_t i = 0; i < count; i++)
		total += strcmp(rows[i].kernel, "dense") != 0;
	/* a long table hides the text after it: folded, one click away */
	if (total > SW_MD_ROWS)
		rp_md(r, "<details><summary>The table: %zu rows, the first %d shown here</summary>"
		      "\n\n", total, SW_MD_ROWS);
	else if (total > SW_MD_FOLD)
		rp_md(r, "<details><summary>The table: %zu rows</summary>\n\n", total);
	total = 0;
	rp_md(r, "| pattern | kernel | norm | backend | n | achieved ρ | median (ms) | dense here "
	      "(ms) | speed-up [95%% interval] | reps | ranked |\n"
	      "|---|---|---|---|---:|---:|---:|---:|---:|---:|:---:|\n");
	for (size_t i = 0; i < count; i++) {
		const rp_sweep_row *x = &rows[i];
		const char *cells[] = {x->pattern, x->kernel, x->norm, x->backend};
		if (!strcmp(x->kernel, "dense"))
			continue;
		if (total++ >= SW_MD_ROWS)
			continue;
		shown++;
		for (int c = 0; c < 4; c++) {
			rp_md(r, "| ");
			rp_md_text(r, cells[c]);
			rp_md(r, " ");
		}
		rp_md_text(r, x->dtype);
		rp_md(r, " | %lld | %.1f%% | %.3f | ", x->n, 100 * x->achieved, 1e3 * x->median_s);
		if (isfinite(x->dense_s))
			rp_md(r, "%.3f | ", 1e3 * x->dense_s);
		else
			rp_md(r, "– | ");
		sw_speedup(r, x);
		if (x->reps >= 0)
			rp_md(r, " | %d | %s |\n", x->reps, x->rank_ok == 1 ? "yes" :
			      x->agree == 0 ? "no (medians disagree)" : "no (intervals overlap)");
		else
			rp_md(r, " | – | – |\n");
	}
	if (total > shown)
		rp_md(r, "\n(%zu more rows in the CSV.)\n", total - shown);
	if (total > SW_MD_FOLD)
		rp_md(r, "\n</details>\n");
	rp_md(r, "\nThe speed-up is the median over repetitions of dense ÷ kernel, timed "
	      "interleaved, with the distribution-free 95%% interval of that median; a point is "
	      "repeated until the interval is within ±5%% or its time is up. Two kernels "
	      "whose intervals overlap are not ranked.\n\n");
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
	fprintf(f, "source,achieved,pattern,kernel,norm,backend,dtype,n,median_s,speedup,"
		"speedup_lo,speedup_hi,dense_s,reps,rank_ok\n");
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
			fprintf(f, ",%lld,%.9g,%.6g,%.6g,%.6g,%.9g,%d,%d\n", rows[i].n,
				rows[i].median_s, rows[i].speedup, rows[i].speedup_lo,
				rows[i].speedup_hi, rows[i].dense_s, rows[i].reps, rows[i].rank_ok);
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
		const char *argv[] = {"sweep", "--backend", "cpu", "--n", "1024", "--heads",
				      r->quick ? "2" : "4", "--patterns",
				      r->quick ? "local,strided,bigbird" :
				      "local,strided,fixed,logsparse,bigbird,longformer",
				      "--sparsity", r->quick ? "50,70,90" : "10..90:20", "--quiet",
				      "-o", ic->file, NULL};
		rp_md(r, "No `--sweep` results given: a small CPU sweep run now on this machine. "
		      "Each point times dense and every kernel interleaved, repetition by "
		      "repetition, until the speed-up's 95%% interval is within ±5%% or the "
		      "point's time is up (`maskkit sweep --help`). Its timings, unlike everything "
		      "else here, change from run to run; a row whose interval is wide or which "
		      "is not ranked says so. For numbers to quote, run `maskkit sweep` on an "
		      "idle machine or a GPU and give its CSV with `--sweep`.\n\n");
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
