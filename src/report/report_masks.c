/* maskkit report: the mask figures and tables (SparseBERT Fig. 1 and
 * Table 4, Adaptive Axis Attention Fig. 1 and Eq. 9). */
#include "config.h"
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "maskkit.h"
#include "plot.h"
#include "report.h"

#define RP_GRID_MAX 8
#define RP_CMD_MAX 24

/* The six patterns of SparseBERT's Fig. 1 and Table 4. */
static const char *const sb_exprs[] = {"star", "logsparse", "strided", "fixed", "longformer",
				       "bigbird"};
static const char *const sb_names[] = {"Star", "LogSparse", "Strided", "Fixed", "Longformer",
				       "BigBird"};
#define SB_COUNT 6

/* Commands collected for a figure, printed under it. */
typedef struct rp_cmds {
	char *line[RP_CMD_MAX];
	int n;
} rp_cmds;

static void rp_cmds_add(rp_cmds *c, char *cmd)
{
	if (cmd && c->n < RP_CMD_MAX)
		c->line[c->n++] = cmd;
	else
		free(cmd);
}

static void rp_cmds_flush(report *r, rp_cmds *c)
{
	rp_md_commands(r, (const char *const *)c->line, c->n);
	for (int k = 0; k < c->n; k++)
		free(c->line[k]);
	c->n = 0;
}

/* `maskkit measure --n N --json EXPR...`: one object per expression. */
static int rp_measure(report *r, int n, const char *const *exprs, int count, cJSON **json,
		      rp_cmds *cmds, char *reason, size_t size)
{
	const char *argv[RP_CMD_MAX + 8];
	char nbuf[24], *cmd = NULL;
	int k = 0, ret;

	snprintf(nbuf, sizeof nbuf, "%d", n);
	argv[k++] = "measure";
	argv[k++] = "--n";
	argv[k++] = nbuf;
	argv[k++] = "--json";
	for (int e = 0; e < count && e < RP_CMD_MAX; e++)
		argv[k++] = exprs[e];
	argv[k] = NULL;
	ret = rp_run_json(r, argv, json, &cmd, reason, size);
	rp_cmds_add(cmds, cmd);
	if (!ret && (!cJSON_IsArray(*json) || cJSON_GetArraySize(*json) != count)) {
		snprintf(reason, size, "maskkit measure printed %d results for %d masks",
			 cJSON_GetArraySize(*json), count);
		ret = MK_EFORMAT;
	}
	return ret;
}

/* `maskkit gen EXPR --n N --format json`: the mask's cells into cells[n*n]. */
static int rp_gen_cells(report *r, const char *expr, int n, double *cells, rp_cmds *cmds,
			char *reason, size_t size)
{
	char nbuf[24], *cmd = NULL;
	const char *argv[] = {"gen", expr, "--n", nbuf, "--format", "json", NULL};
	const cJSON *rows, *row, *col;
	cJSON *json = NULL;
	int ret, i = 0;

	snprintf(nbuf, sizeof nbuf, "%d", n);
	ret = rp_run_json(r, argv, &json, &cmd, reason, size);
	rp_cmds_add(cmds, cmd);
	if (ret)
		return ret;
	rows = cJSON_GetObjectItemCaseSensitive(json, "rows");
	memset(cells, 0, (size_t)n * (size_t)n * sizeof *cells);
	cJSON_ArrayForEach(row, rows) {
		cJSON_ArrayForEach(col, row) {
			int j = cJSON_IsNumber(col) ? col->valueint : -1;
			if (i < n && j >= 0 && j < n)
				cells[(size_t)i * (size_t)n + (size_t)j] = 1;
		}
		i++;
	}
	cJSON_Delete(json);
	if (i != n) {
		snprintf(reason, size, "maskkit gen %s printed %d rows, not %d", expr, i, n);
		return MK_EFORMAT;
	}
	return MK_OK;
}

static char *rp_grid_vars(const char *const *labels, const double *rho, int count, int cols)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	fprintf(f, "layout_cols=%d\narray titles[%d]\n", cols, count);
	for (int k = 0; k < count; k++) {
		char title[160];
		snprintf(title, sizeof title, "%s (ρ = %.4f)", labels[k], rho[k]);
		fprintf(f, "titles[%d]=", k + 1);
		rp_gp_string(f, title);
		fputc('\n', f);
	}
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* A grid of mask heatmaps at n, titled with their sparsity, as PNG and
 * SVG, and the CSV of their measures. */
static void rp_mask_grid(report *r, const char *id, const char *title, int n,
			 const char *const *exprs, const char *const *labels, int count, int cols)
{
	char png[128], svg[128], csv[128], reason[RP_REASON_MAX] = "";
	rp_item *ip, *is, *ic;
	rp_cmds cmds = {0};
	double rho[RP_GRID_MAX], *cells = NULL;
	const char *names[64];
	char name_buf[64][8];
	cJSON *json = NULL;
	char *vars = NULL, *table = NULL;
	size_t tlen = 0;
	FILE *t = NULL;
	int ret;

	snprintf(png, sizeof png, "figures/%s.png", id);
	snprintf(svg, sizeof svg, "figures/%s.svg", id);
	snprintf(csv, sizeof csv, "tables/%s.csv", id);
	ip = rp_promise(r, png);
	is = rp_promise(r, svg);
	ic = rp_promise(r, csv);
	ret = rp_measure(r, n, exprs, count, &json, &cmds, reason, sizeof reason);
	cells = calloc((size_t)count * (size_t)n * (size_t)n, sizeof *cells);
	if (!ret && !cells) {
		snprintf(reason, sizeof reason, "out of memory");
		ret = mk_error_set(MK_ENOMEM, "%s", reason);
	}
	for (int k = 0; !ret && k < count; k++)
		ret = rp_gen_cells(r, exprs[k], n, cells + (size_t)k * (size_t)n * (size_t)n, &cmds,
				   reason, sizeof reason);
	if (ret)
		goto failed;
	t = open_memstream(&table, &tlen);
	if (!t)
		goto oom;
	fprintf(t, "pattern,expr,n,count,sparsity\n");
	for (int k = 0; k < count; k++) {
		const cJSON *m = cJSON_GetArrayItem(json, k);
		rho[k] = rp_json_num(m, "sparsity");
		/* expressions hold commas: quoted */
		fprintf(t, "%s,\"%s\",%d,%.0f,%.6f\n", labels[k], exprs[k], n, rp_json_num(m, "count"), rho[k]);
	}
	if (fclose(t) != 0)
		goto oom;
	if ((ret = rp_write_file(r, csv, table, tlen)))
		rp_fail(r, ic, mk_error());
	for (int c = 0; c < n && c < 64; c++) {
		snprintf(name_buf[c], sizeof name_buf[c], "c%d", c);
		names[c] = name_buf[c];
	}
	vars = rp_grid_vars(labels, rho, count, cols);
	if (!vars)
		goto oom;
	for (int k = 0; k < 2; k++) {
		char path[8192];
		rp_item *it = k ? is : ip;
		mk_plot p = {.template_name = "mask_grid", .output = path, .title = title,
			     .data = cells, .rows = (int64_t)count * n, .ncols = n,
			     .col_names = names, .panels = count, .vars = vars};
		if (rp_path(r, it->file, path, sizeof path) || mk_plot_run(&p))
			rp_fail(r, it, mk_error());
	}
	goto done;
oom:
	snprintf(reason, sizeof reason, "out of memory");
failed:
	rp_fail(r, ip, reason);
	rp_fail(r, is, reason);
	rp_fail(r, ic, reason);
done:
	rp_md_figure(r, ip, title);
	if (ic->ok)
		rp_md(r, "Sparsity ρ = 1 − |M|/n² of each panel: [`%s`](%s).\n", ic->file, ic->file);
	rp_cmds_flush(r, &cmds);
	free(vars);
	free(cells);
	free(table);
	cJSON_Delete(json);
}

void rp_section_sparsebert_fig1(report *r)
{
	rp_mask_grid(r, "sparsebert_fig1", "SparseBERT Fig. 1: attention masks at n = 16", 16,
		     sb_exprs, sb_names, SB_COUNT, 3);
}

void rp_section_aaa_fig1(report *r)
{
	static const char *const exprs[] = {"local1", "global1", "diagonal(offsets=0,3)",
					    "axis(rows=2,5,cols=2,5)", "local1+global1"};
	static const char *const names[] = {"Local", "Global", "Diagonal", "Axis", "Local+Global"};

	rp_mask_grid(r, "aaa_fig1", "Adaptive Axis Attention Fig. 1: patterns at N = 8", 8,
		     exprs, names, 5, 5);
}

/* "0.961304" as "96.1304": the digits measure prints, as a percentage. */
static void rp_percent(double x, char *buf, size_t size)
{
	char frac[32], *dot;

	snprintf(frac, sizeof frac, "%.6f", x);
	dot = strchr(frac, '.');
	if (!isfinite(x) || !dot || strlen(dot) != 7) {
		snprintf(buf, size, "%s", frac);
		return;
	}
	/* integer part * 100 plus the first two decimals, then four decimals */
	snprintf(buf, size, "%ld.%.4s", strtol(frac, NULL, 10) * 100 + (dot[1] - '0') * 10 +
		 (dot[2] - '0'), dot + 3);
}

void rp_section_sparsebert_table4(report *r)
{
	const char *exprs[2 * SB_COUNT];
	char diag[SB_COUNT][32], reason[RP_REASON_MAX] = "";
	rp_item *ic = rp_promise(r, "tables/sparsebert_table4.csv");
	rp_cmds cmds = {0};
	cJSON *json = NULL;
	char *table = NULL;
	size_t tlen = 0;
	FILE *t;

	for (int k = 0; k < SB_COUNT; k++) {
		snprintf(diag[k], sizeof diag[k], "%s-diag", sb_exprs[k]);
		exprs[2 * k] = sb_exprs[k];
		exprs[2 * k + 1] = diag[k];
	}
	if (rp_measure(r, 128, exprs, 2 * SB_COUNT, &json, &cmds, reason, sizeof reason)) {
		cJSON_Delete(json);
		rp_fail(r, ic, reason);
		rp_md(r, "> **Table not made:** ");
		rp_md_text(r, reason);
		rp_md(r, "\n");
		rp_cmds_flush(r, &cmds);
		return;
	}
	t = open_memstream(&table, &tlen);
	if (t)
		fprintf(t, "pattern,n,count,sparsity,sparsity_pct,count_nodiag,sparsity_nodiag,"
			"sparsity_nodiag_pct\n");
	rp_md(r, "| pattern | \\|M\\| | sparsity (%%) | \\|M\\| without diagonal | "
	      "sparsity without diagonal (%%) |\n|---|---:|---:|---:|---:|\n");
	for (int k = 0; k < SB_COUNT; k++) {
		const cJSON *a = cJSON_GetArrayItem(json, 2 * k), *b = cJSON_GetArrayItem(json, 2 * k + 1);
		char pa[32], pb[32];
		rp_percent(rp_json_num(a, "sparsity"), pa, sizeof pa);
		rp_percent(rp_json_num(b, "sparsity"), pb, sizeof pb);
		rp_md(r, "| %s | %.0f | %s | %.0f | %s |\n", sb_names[k], rp_json_num(a, "count"), pa,
		      rp_json_num(b, "count"), pb);
		if (t)
			fprintf(t, "%s,128,%.0f,%.6f,%s,%.0f,%.6f,%s\n", sb_exprs[k], rp_json_num(a, "count"),
				rp_json_num(a, "sparsity"), pa, rp_json_num(b, "count"), rp_json_num(b, "sparsity"), pb);
	}
	if (!t || fclose(t) != 0)
		rp_fail(r, ic, "out of memory");
	else if (rp_write_file(r, ic->file, table, tlen))
		rp_fail(r, ic, mk_error());
	rp_md(r, "\nn = 128; \"without diagonal\" is the pattern minus the identity (`P-diag`). "
	      "The numbers: [`%s`](%s).\n", ic->file, ic->file);
	rp_cmds_flush(r, &cmds);
	free(table);
	cJSON_Delete(json);
}
