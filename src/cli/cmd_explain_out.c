/*
 * maskkit explain's outputs: the table or JSON on stdout, the per-head CSV,
 * the histogram as CSV and as a gnuplot figure, and the column sums
 * themselves (-o).  Files are written atomically.
 */
#include "config.h"
#include <errno.h>
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd_explain_out.h"
#include "plot.h"

#include <float.h>

static void ex_norm_name(const mk_norm *n, char *buf, size_t cap)
{
	mk_norm_format(n, buf, cap);
}

static const mk_explain_stat *ex_stat(const ex_job *j, size_t a, int64_t h)
{
	return j->e.stat + a * (size_t)(j->e.heads + 1) + (size_t)h;
}

static double ex_bound(const ex_job *j)
{
	return 1.0 / (double)j->e.n;
}

/* Column sums come from float32 scores: a log sum is uncertain by a few
 * ulps of the largest |score| (head h; all heads for h = heads), so 1/S
 * counts as reached within that (Theorem 2 holds exactly in reals). */
static bool ex_above(const ex_job *j, const mk_explain_stat *st, int64_t h)
{
	double top = 0, slack;

	for (int64_t x = h < j->e.heads ? h : 0; x < (h < j->e.heads ? h + 1 : j->e.heads); x++)
		top = j->e.score_bound[x] > top ? j->e.score_bound[x] : top;
	slack = 1e-5 + 8 * FLT_EPSILON * (top + log((double)j->e.n));
	return st->keys && st->min * log(10.0) >= -log((double)j->e.n) - slack;
}

static void ex_source(const ex_job *j, char *buf, size_t cap)
{
	const ex_opts *o = j->o;
	if (o->random)
		snprintf(buf, cap, "random, scale %g, seed %" PRIu64, o->scale, o->m.bind.seed);
	else if (o->input)
		snprintf(buf, cap, "%s", o->input);
	else
		snprintf(buf, cap, "%s, %s", o->qspec, o->kspec);
}

/* ---- the table --------------------------------------------------------------- */

static void ex_table_row(const ex_job *j, const char *norm, const char *head, int64_t h,
			 const mk_explain_stat *st)
{
	printf("%-12s %5s %8" PRId64 " %6" PRId64 " %7" PRId64 " %7.3f%% %8.3f %8.3f %8.3f %8.3f "
	       "%8.3f %11.4g  %s\n", norm, head, st->keys, st->empty, st->away,
	       st->keys ? 100.0 * (double)st->away / (double)st->keys : 0.0, st->min, st->q1,
	       st->median, st->q3, st->max, st->keys ? pow(10.0, st->min) : NAN,
	       ex_above(j, st, h) ? "yes" : "no");
}

static void ex_trace_table(const ex_job *j)
{
	printf("\nsinkhorn trace: |sum - 1| after each round, over %" PRId64 " head%s (rows after "
	       "the column scaling, columns after the row scaling)\n", j->e.heads,
	       j->e.heads == 1 ? "" : "s");
	printf("%5s %12s %12s %12s %12s\n", "round", "row_max", "row_mean", "col_max",
	       "col_mean");
	for (int r = 0; r < j->e.trace; r++) {
		mk_sinkhorn_step m = {0};
		for (int64_t h = 0; h < j->e.heads; h++) {
			const mk_sinkhorn_step *s = j->e.steps + (size_t)h * (size_t)j->e.trace + r;
			m.row_max = s->row_max > m.row_max ? s->row_max : m.row_max;
			m.col_max = s->col_max > m.col_max ? s->col_max : m.col_max;
			m.row_mean += s->row_mean / (double)j->e.heads;
			m.col_mean += s->col_mean / (double)j->e.heads;
		}
		printf("%5d %12.4e %12.4e %12.4e %12.4e\n", r + 1, m.row_max, m.row_mean, m.col_max,
		       m.col_mean);
	}
}

static void ex_table(const ex_job *j)
{
	char src[512], name[64], head[24];

	ex_source(j, src, sizeof src);
	printf("explain: Q, K [%" PRId64 ", %" PRId64 ", %" PRId64 "] (%s), mask %s (%" PRIu64
	       " of S^2 entries), eps %g\n", j->e.heads, j->e.n, j->qk.d, src,
	       j->expr ? mk_expr_params(j->expr) : "full", j->entries, j->o->run.eps);
	printf("Theorem 2: dnas and sinkhorn:K keep every column sum >= 1/S = %.6g (log10 "
	       "%.3f), hnas:u >= u/S\n\n", ex_bound(j), log10(ex_bound(j)));
	printf("%-12s %5s %8s %6s %7s %8s %8s %8s %8s %8s %8s %11s  %s\n", "norm", "head", "keys",
	       "empty", "away", "away%", "min", "q1", "median", "q3", "max", "min_sum",
	       ">=1/S");
	printf("%-12s %5s %8s %6s %7s %8s %44s\n", "", "", "", "", "", "",
	       "(log10 of the column sums sum_i pi_ij)");
	for (size_t a = 0; a < j->e.nnorms; a++) {
		ex_norm_name(&j->o->norms[a], name, sizeof name);
		ex_table_row(j, name, "all", j->e.heads, ex_stat(j, a, j->e.heads));
		for (int64_t h = 0; j->e.heads > 1 && h < j->e.heads; h++) {
			snprintf(head, sizeof head, "%" PRId64, h);
			ex_table_row(j, "", head, h, ex_stat(j, a, h));
		}
	}
	if (j->e.trace)
		ex_trace_table(j);
	printf("\n%.3f s\n", j->seconds);
}

/* ---- JSON -------------------------------------------------------------------- */

/* NaN (no keys) as null: JSON has no NaN. */
static void ex_json_num(cJSON *x, const char *key, double v)
{
	if (isfinite(v))
		cJSON_AddNumberToObject(x, key, v);
	else
		cJSON_AddNullToObject(x, key);
}

static cJSON *ex_json_stat(const ex_job *j, const mk_explain_stat *st, int64_t head)
{
	cJSON *x = cJSON_CreateObject();
	if (!x)
		return NULL;
	if (head >= 0)
		cJSON_AddNumberToObject(x, "head", (double)head);
	cJSON_AddNumberToObject(x, "keys", (double)st->keys);
	cJSON_AddNumberToObject(x, "empty", (double)st->empty);
	cJSON_AddNumberToObject(x, "explained_away", (double)st->away);
	ex_json_num(x, "fraction_away", st->keys ? (double)st->away / (double)st->keys : NAN);
	ex_json_num(x, "log10_min", st->min);
	ex_json_num(x, "log10_q1", st->q1);
	ex_json_num(x, "log10_median", st->median);
	ex_json_num(x, "log10_q3", st->q3);
	ex_json_num(x, "log10_max", st->max);
	ex_json_num(x, "min_colsum", st->keys ? pow(10.0, st->min) : NAN);
	cJSON_AddBoolToObject(x, "above_bound", ex_above(j, st, head < 0 ? j->e.heads : head));
	return x;
}

static cJSON *ex_json_norm(const ex_job *j, size_t a)
{
	cJSON *x = cJSON_CreateObject(), *heads = cJSON_CreateArray();
	char name[64];

	if (!x || !heads) {
		cJSON_Delete(heads);
		return cJSON_Delete(x), NULL;
	}
	ex_norm_name(&j->o->norms[a], name, sizeof name);
	cJSON_AddStringToObject(x, "norm", name);
	cJSON_AddItemToObject(x, "all", ex_json_stat(j, ex_stat(j, a, j->e.heads), -1));
	for (int64_t h = 0; h < j->e.heads; h++)
		cJSON_AddItemToArray(heads, ex_json_stat(j, ex_stat(j, a, h), h));
	cJSON_AddItemToObject(x, "heads", heads);
	return x;
}

static cJSON *ex_json_hist(const ex_job *j)
{
	cJSON *x = cJSON_CreateObject(), *counts = cJSON_CreateObject();
	char name[64];

	if (!x || !counts) {
		cJSON_Delete(counts);
		return cJSON_Delete(x), NULL;
	}
	cJSON_AddNumberToObject(x, "log10_lo", j->e.lo);
	cJSON_AddNumberToObject(x, "width", j->e.width);
	cJSON_AddNumberToObject(x, "bins", j->e.bins);
	for (size_t a = 0; a < j->e.nnorms; a++) {
		cJSON *c = cJSON_CreateArray();
		for (int b = 0; c && b < j->e.bins; b++)
			cJSON_AddItemToArray(c, cJSON_CreateNumber(
				(double)j->e.hist[a * (size_t)j->e.bins + (size_t)b]));
		ex_norm_name(&j->o->norms[a], name, sizeof name);
		cJSON_AddItemToObject(counts, name, c);
	}
	cJSON_AddItemToObject(x, "counts", counts);
	return x;
}

static cJSON *ex_json_trace(const ex_job *j)
{
	cJSON *heads = cJSON_CreateArray();
	for (int64_t h = 0; heads && h < j->e.heads; h++) {
		cJSON *rounds = cJSON_CreateArray();
		for (int r = 0; rounds && r < j->e.trace; r++) {
			const mk_sinkhorn_step *s = j->e.steps + (size_t)h * (size_t)j->e.trace + r;
			cJSON *x = cJSON_CreateObject();
			if (!x)
				break;
			cJSON_AddNumberToObject(x, "round", r + 1);
			cJSON_AddNumberToObject(x, "row_max", s->row_max);
			cJSON_AddNumberToObject(x, "row_mean", s->row_mean);
			cJSON_AddNumberToObject(x, "col_max", s->col_max);
			cJSON_AddNumberToObject(x, "col_mean", s->col_mean);
			cJSON_AddItemToArray(rounds, x);
		}
		cJSON_AddItemToArray(heads, rounds);
	}
	return heads;
}

static int ex_json(const ex_job *j)
{
	cJSON *x = cJSON_CreateObject(), *norms = cJSON_CreateArray();
	char src[512];

	if (!x || !norms) {
		cJSON_Delete(norms);
		cJSON_Delete(x);
		return mk_error_set(MK_ENOMEM, "out of memory for the JSON output");
	}
	ex_source(j, src, sizeof src);
	cJSON_AddStringToObject(x, "input", src);
	cJSON_AddNumberToObject(x, "S", (double)j->e.n);
	cJSON_AddNumberToObject(x, "d", (double)j->qk.d);
	cJSON_AddNumberToObject(x, "heads", (double)j->e.heads);
	cJSON_AddStringToObject(x, "mask", j->expr ? mk_expr_params(j->expr) : "full");
	cJSON_AddNumberToObject(x, "entries", (double)j->entries);
	cJSON_AddNumberToObject(x, "eps", j->o->run.eps);
	cJSON_AddNumberToObject(x, "bound", ex_bound(j));
	for (size_t a = 0; a < j->e.nnorms; a++)
		cJSON_AddItemToArray(norms, ex_json_norm(j, a));
	cJSON_AddItemToObject(x, "norms", norms);
	cJSON_AddItemToObject(x, "histogram", ex_json_hist(j));
	if (j->e.trace)
		cJSON_AddItemToObject(x, "sinkhorn_trace", ex_json_trace(j));
	cJSON_AddNumberToObject(x, "seconds", j->seconds);
	return cli_json_out(x);
}

/* ---- files ------------------------------------------------------------------- */

static void ex_csv_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, ",%.17g", v);
	else
		fputs(",", f);
}

static int ex_write_csv(void *file, void *arg)
{
	const ex_job *j = arg;
	FILE *f = file;
	char name[64];

	fputs("norm,head,keys,empty,explained_away,fraction_away,log10_min,log10_q1,log10_median,"
	      "log10_q3,log10_max,min_colsum,bound,above_bound\n", f);
	for (size_t a = 0; a < j->e.nnorms; a++) {
		ex_norm_name(&j->o->norms[a], name, sizeof name);
		for (int64_t h = 0; h <= j->e.heads; h++) {
			const mk_explain_stat *st = ex_stat(j, a, h);
			if (h == j->e.heads)
				fprintf(f, "%s,all", name);
			else
				fprintf(f, "%s,%" PRId64, name, h);
			fprintf(f, ",%" PRId64 ",%" PRId64 ",%" PRId64, st->keys, st->empty, st->away);
			ex_csv_num(f, st->keys ? (double)st->away / (double)st->keys : NAN);
			ex_csv_num(f, st->min);
			ex_csv_num(f, st->q1);
			ex_csv_num(f, st->median);
			ex_csv_num(f, st->q3);
			ex_csv_num(f, st->max);
			ex_csv_num(f, st->keys ? pow(10.0, st->min) : NAN);
			ex_csv_num(f, ex_bound(j));
			fprintf(f, ",%d\n", ex_above(j, st, h));
		}
	}
	return ferror(f) ? mk_error_set(MK_ESYS, "write error: %s", strerror(errno ? errno : EIO)) : MK_OK;
}

static int ex_write_hist(void *file, void *arg)
{
	const ex_job *j = arg;
	FILE *f = file;
	char name[64];

	fputs("log10_lo,log10_hi", f);
	for (size_t a = 0; a < j->e.nnorms; a++) {
		ex_norm_name(&j->o->norms[a], name, sizeof name);
		fprintf(f, ",%s", name);
	}
	fputc('\n', f);
	for (int b = 0; b < j->e.bins; b++) {
		fprintf(f, "%.17g,%.17g", j->e.lo + b * j->e.width, j->e.lo + (b + 1) * j->e.width);
		for (size_t a = 0; a < j->e.nnorms; a++)
			fprintf(f, ",%" PRId64, j->e.hist[a * (size_t)j->e.bins + (size_t)b]);
		fputc('\n', f);
	}
	return ferror(f) ? mk_error_set(MK_ESYS, "write error: %s", strerror(errno ? errno : EIO)) : MK_OK;
}

/* Bin centres, then each normalisation's share of the keys per bin. */
static int ex_plot(const ex_job *j)
{
	size_t cols = j->e.nnorms + 1, rows = (size_t)j->e.bins;
	double *data = malloc(rows * cols * sizeof *data);
	char *names[EXPLAIN_MAX_NORMS + 1] = {NULL}, title[768], vars[256], src[512];
	int ret = MK_OK;

	if (!data)
		return mk_error_set(MK_ENOMEM, "out of memory for the plot");
	for (size_t c = 0; c < cols && ret == MK_OK; c++)
		if (!(names[c] = malloc(64)))
			ret = mk_error_set(MK_ENOMEM, "out of memory for the plot");
		else if (c == 0)
			snprintf(names[c], 64, "log10_colsum");
		else
			ex_norm_name(&j->o->norms[c - 1], names[c], 64);
	for (size_t b = 0; ret == MK_OK && b < rows; b++) {
		data[b * cols] = j->e.lo + ((double)b + 0.5) * j->e.width;
		for (size_t a = 0; a < j->e.nnorms; a++) {
			double keys = (double)ex_stat(j, a, j->e.heads)->keys;
			data[b * cols + 1 + a] = keys ? (double)j->e.hist[a * rows + b] / keys : 0;
		}
	}
	ex_source(j, src, sizeof src);
	snprintf(title, sizeof title, "column sums of attention: S = %" PRId64 ", %" PRId64
		 " head%s, mask %s (%s)", j->e.n, j->e.heads, j->e.heads == 1 ? "" : "s",
		 j->expr ? mk_expr_params(j->expr) : "full", src);
	snprintf(vars, sizeof vars, "log_eps = %.17g; log_bound = %.17g", log10(j->o->run.eps),
		 log10(ex_bound(j)));
	if (ret == MK_OK)
		ret = mk_plot_run(&(mk_plot){.template_name = "explain_hist", .output = j->o->png,
					     .title = title, .data = data, .rows = (int64_t)rows,
					     .ncols = (int)cols,
					     .col_names = (const char *const *)names, .panels = 1,
					     .vars = vars});
	for (size_t c = 0; c < cols; c++)
		free(names[c]);
	free(data);
	return ret;
}

/* [norms, heads, S] log10 column sums, float32 (what the passes compute). */
static int ex_write_sums(const ex_job *j)
{
	int64_t dims[3] = {(int64_t)j->e.nnorms, j->e.heads, j->e.n};
	mk_tensor t;
	int ret = mk_tensor_new(3, dims, MK_DTYPE_F32, j->o->m.bind.max_memory, "-o", &t);

	if (ret)
		return ret;
	for (uint64_t c = 0; c < mk_tensor_count(&t); c++)
		t.data[c] = (float)j->e.log10[c];
	ret = mk_tensor_write(&t, j->o->m.out, "log10_colsum", MK_DTYPE_F32);
	mk_tensor_release(&t);
	return ret;
}

int explain_outputs(const ex_job *j)
{
	const ex_opts *o = j->o;
	bool csv_out = o->csv && !strcmp(o->csv, "-");
	int ret = MK_OK;

	if (o->json)
		ret = ex_json(j);
	else if (csv_out)
		ret = ex_write_csv(stdout, (void *)j);
	else
		ex_table(j);
	if (ret == MK_OK && o->csv && !csv_out)
		ret = mk_write_atomic(o->csv, ex_write_csv, (void *)j);
	if (ret == MK_OK && o->hist_csv)
		ret = mk_write_atomic(o->hist_csv, ex_write_hist, (void *)j);
	if (ret == MK_OK && o->png)
		ret = ex_plot(j);
	if (ret == MK_OK && o->m.out)
		ret = ex_write_sums(j);
	return ret;
}
