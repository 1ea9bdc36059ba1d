/* maskkit report: Eq. 9 over a length distribution, TISA's position
 * analysis of weights, and Ding et al.'s explaining away. */
#include "config.h"
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "maskkit.h"
#include "plot.h"
#include "report.h"


void rp_plot_bars(report *r, rp_item *it, const char *title, const char *ylabel,
		  const char *const *groups, int ngroups, const char *const *series, int nseries,
		  const double *values)
{
	rp_plot_bars_ref(r, it, title, ylabel, groups, ngroups, series, nseries, values, NAN, NULL);
}

void rp_plot_bars_ref(report *r, rp_item *it, const char *title, const char *ylabel,
		      const char *const *groups, int ngroups, const char *const *series,
		      int nseries, const double *values, double ref, const char *ref_name)
{
	char *vars = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&vars, &len);

	if (!f) {
		rp_fail(r, it, "out of memory");
		return;
	}
	fputs("ylabel=", f);
	rp_gp_string(f, ylabel);
	if (isfinite(ref) && ref_name) {
		fprintf(f, "\nref=%.17g\nref_name=", ref);
		rp_gp_string(f, ref_name);
	}
	fprintf(f, "\narray labels[%d]\n", ngroups);
	for (int g = 0; g < ngroups; g++) {
		fprintf(f, "labels[%d]=", g + 1);
		rp_gp_string(f, groups[g]);
		fputc('\n', f);
	}
	fprintf(f, "array series[%d]\n", nseries);
	for (int s = 0; s < nseries; s++) {
		fprintf(f, "series[%d]=", s + 1);
		rp_gp_string(f, series[s]);
		fputc('\n', f);
	}
	if (fclose(f) != 0) {
		free(vars);
		rp_fail(r, it, "out of memory");
		return;
	}
	{
		const char *names[16];
		char nb[16][8];
		for (int s = 0; s < nseries && s < 16; s++) {
			snprintf(nb[s], sizeof nb[s], "s%d", s);
			names[s] = nb[s];
		}
		mk_plot p = {.template_name = "bars", .title = title, .data = values,
			     .rows = ngroups, .ncols = nseries, .col_names = names, .panels = 1,
			     .vars = vars};
		rp_plot(r, it, &p);
	}
	free(vars);
}

/* ---- Eq. 9 -------------------------------------------------------------------- */

#define EQ9_SAMPLES 2000
#define EQ9_MEDIAN 48.0
#define EQ9_SIGMA 0.7
#define EQ9_MIN 4
#define EQ9_MAX 256
#define EQ9_SEED 9

/* Sentence lengths as tokenisers give them: log-normal, cut to a range. */
static void rp_eq9_lengths(int *len, int n)
{
	mk_rng g;
	double z[2];

	mk_rng_seed(&g, EQ9_SEED, 0x45713, 0);
	for (int k = 0; k < n; k++) {
		if (k % 2 == 0)
			mk_rng_normal2(&g, z);
		double x = round(EQ9_MEDIAN * exp(EQ9_SIGMA * z[k % 2]));
		len[k] = x < EQ9_MIN ? EQ9_MIN : x > EQ9_MAX ? EQ9_MAX : (int)x;
	}
}

void rp_section_eq9(report *r)
{
	static const char *const exprs[] = {"local2", "global1", "local2+global1", "strided",
					    "fixed", "logsparse", "star", "longformer", "bigbird"};
	enum { NP = sizeof exprs / sizeof *exprs };
	static const char *const series[] = {"classic (every sample N_max long)",
					     "Eq. 9 (each sample at its own length)"};
	rp_item *il = rp_promise(r, "tables/eq9_lengths.txt"), *ic = rp_promise(r, "tables/eq9.csv"),
		*ip = rp_promise(r, "figures/eq9.png");
	int len[EQ9_SAMPLES], nmax = 0, failed = 0;
	double values[2 * NP], mean = 0;
	char *cmds[NP + 1] = {0}, reason[RP_REASON_MAX];
	rp_buf lb = {0}, tb = {0};

	rp_eq9_lengths(len, EQ9_SAMPLES);
	if (!rp_buf_open(&lb) || !rp_buf_open(&tb)) {
		rp_buf_discard(&lb);
		rp_buf_discard(&tb);
		rp_fail(r, il, "out of memory");
		rp_fail(r, ic, "out of memory");
		rp_fail(r, ip, "out of memory");
		return;
	}
	for (int k = 0; k < EQ9_SAMPLES; k++) {
		fprintf(lb.f, "%d\n", len[k]);
		nmax = len[k] > nmax ? len[k] : nmax;
		mean += len[k] / (double)EQ9_SAMPLES;
	}
	rp_buf_write(r, &lb, il);
	fprintf(tb.f, "pattern,n_max,sparsity_classic,sparsity_eq9,difference\n");
	rp_md(r, "%d synthetic sample lengths (log-normal, median %.0f, σ = %.1f in log space, "
	      "cut to %d..%d, seed %d: [`%s`](%s)); mean %.1f, longest N_max = %d.\n\n",
	      EQ9_SAMPLES, EQ9_MEDIAN, EQ9_SIGMA, EQ9_MIN, EQ9_MAX, EQ9_SEED, il->file, il->file,
	      mean, nmax);
	rp_md(r, "| pattern | ρ at N_max (%%) | ρ by Eq. 9 (%%) | difference (points) |\n"
	      "|---|---:|---:|---:|\n");
	for (int k = 0; k < NP; k++) {
		const char *argv[] = {"measure", exprs[k], "--lengths", il->file, "--json", NULL};
		cJSON *j = NULL;
		values[2 * k] = values[2 * k + 1] = NAN;
		if (!il->ok || rp_run_json(r, argv, &j, &cmds[k], reason, sizeof reason)) {
			if (!failed++)
				rp_fail(r, ic, il->ok ? reason : il->reason);
			continue;
		}
		values[2 * k] = 100 * rp_json_num(j, "sparsity_classic");
		values[2 * k + 1] = 100 * rp_json_num(j, "sparsity");
		fprintf(tb.f, "%s,%d,%.6f,%.6f,%.6f\n", exprs[k], nmax, values[2 * k] / 100,
			values[2 * k + 1] / 100, (values[2 * k] - values[2 * k + 1]) / 100);
		rp_md(r, "| `%s` | %.2f | %.2f | %.2f |\n", exprs[k], values[2 * k], values[2 * k + 1],
		      values[2 * k] - values[2 * k + 1]);
		cJSON_Delete(j);
	}
	rp_buf_write(r, &tb, ic);
	if (failed)
		rp_fail(r, ip, ic->reason);
	else
		rp_plot_bars(r, ip, "Sparsity at the longest length vs Eq. 9's mean over samples",
			     "sparsity rho (%)", exprs, NP, series, 2, values);
	rp_md(r, "\n");
	rp_md_figure(r, ip, "Eq. 9");
	if (ic->ok)
		rp_md(r, "Numbers: [`%s`](%s).\n", ic->file, ic->file);
	rp_md(r, "The lengths are written by the report itself (`%s`).\n", il->file);
	rp_md_commands(r, (const char *const *)cmds, NP + 1);
	for (int k = 0; k <= NP; k++)
		free(cmds[k]);
	rp_eq9_real(r);
}

/* ---- explaining away (Ding et al.) ------------------------------------------- */

/* A figure made by a command of its own (so that its failure, gnuplot's
 * usually, costs only the figure). */
static void rp_figure_step(report *r, rp_item *it, const char *const *argv, char **cmd)
{
	char reason[RP_REASON_MAX];

	if (rp_run(r, argv, NULL, cmd, reason, sizeof reason))
		rp_fail(r, it, reason);
}

static void rp_explain_random(report *r, char **cmd)
{
	const char *size = r->quick ? "512,64,5" : "1024,64,5";
	rp_item *ip = rp_promise(r, "figures/explain_hist.png"),
		*ih = rp_promise(r, "tables/explain_hist.csv"),
		*is = rp_promise(r, "tables/explain_heads.csv");
	const char *argv[] = {"explain", "--random", size, "--heads", "12", "--norm",
			      "softmax,dnas,hnas:0.5", "--hist-csv", ih->file, "--csv", is->file,
			      "--json", NULL};
	const char *fig[] = {"explain", "--random", size, "--heads", "12", "--norm",
			     "softmax,dnas,hnas:0.5", "--png", ip->file, NULL};
	char reason[RP_REASON_MAX];
	const cJSON *n;
	cJSON *j = NULL;

	rp_figure_step(r, ip, fig, &cmd[1]);
	if (rp_run_json(r, argv, &j, &cmd[0], reason, sizeof reason)) {
		rp_fail(r, ih, reason);
		rp_fail(r, is, reason);
	} else {
		rp_md(r, "Gaussian Q and K (S = %s keys and queries, d = 64, entries N(0, 5²)), 12 "
		      "heads: the column sums Σ_i π_ij of each normalisation. A key is *explained "
		      "away* below 10⁻⁸; DNAS keeps every column sum ≥ 1/S = %.3g (its Theorem)."
		      "\n\n"
		      "| normalisation | keys | explained away | share | smallest column sum | "
		      "all ≥ 1/S |\n|---|---:|---:|---:|---:|---|\n", r->quick ? "512" : "1024",
		      rp_json_num(j, "bound"));
		cJSON_ArrayForEach(n, cJSON_GetObjectItemCaseSensitive(j, "norms")) {
			const cJSON *all = cJSON_GetObjectItemCaseSensitive(n, "all");
			const cJSON *name = cJSON_GetObjectItemCaseSensitive(n, "norm");
			rp_md(r, "| %s | %.0f | %.0f | %.4f | %.3g | %s |\n",
			      cJSON_IsString(name) ? name->valuestring : "?", rp_json_num(all, "keys"),
			      rp_json_num(all, "explained_away"), rp_json_num(all, "fraction_away"),
			      rp_json_num(all, "min_colsum"),
			      cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(all, "above_bound")) ?
			      "yes" : "no");
		}
		rp_md(r, "\n");
	}
	cJSON_Delete(j);
	rp_md_figure(r, ip, "Fig. 1: histogram of log10 column sums");
}

static void rp_explain_toy(report *r, const char *toy, const char *alt, char **cmd)
{
	char png[64], csv[64], reason[RP_REASON_MAX];
	rp_item *ip, *ic;
	cJSON *j = NULL;

	snprintf(png, sizeof png, "figures/explain_%s.png", toy);
	snprintf(csv, sizeof csv, "tables/explain_%s.csv", toy);
	ip = rp_promise(r, png);
	ic = rp_promise(r, csv);
	const char *argv[] = {"explain", "--toy", toy, "--csv", csv, "--json", NULL};
	const char *fig[] = {"explain", "--toy", toy, "--png", png, NULL};
	rp_figure_step(r, ip, fig, &cmd[1]);
	if (rp_run_json(r, argv, &j, &cmd[0], reason, sizeof reason)) {
		rp_fail(r, ic, reason);
	} else if (!strcmp(toy, "collapse")) {
		const cJSON *cl = cJSON_GetObjectItemCaseSensitive(j, "clusters"), *v;
		rp_md(r, "Clusters after each attention step, step 0 (the points as drawn) first; "
		      "a cluster is a set of points within 10⁻³ of each other (single linkage), "
		      "so before any step every distinct point is its own:\n\n");
		for (int k = 0; k < 2; k++) {
			rp_md(r, "- %s:", k ? "DNAS" : "UNAS (softmax)");
			cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(cl, k ? "dnas" : "unas"))
				rp_md(r, " %d", v->valueint);
			rp_md(r, "\n");
		}
		rp_md(r, "\n");
	} else {
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(j, "check"), "max_error");
		rp_md(r, "Closed-form curves; against simulated attention steps the largest "
		      "difference is %.2g (UNAS) and %.2g (DNAS).\n\n", rp_json_num(m, "unas"),
		      rp_json_num(m, "dnas"));
	}
	cJSON_Delete(j);
	rp_md_figure(r, ip, alt);
}

void rp_section_explain(report *r)
{
	char *cmd[6] = {0};

	rp_explain_real(r);
	rp_md(r, "#### Fig. 1: explaining away (Gaussian queries and keys)\n\n");
	rp_explain_random(r, &cmd[0]);
	rp_md(r, "#### Fig. 6: mode collapse\n\n");
	rp_explain_toy(r, "collapse", "Fig. 6: mode collapse", &cmd[2]);
	rp_md(r, "#### Fig. 7: centre distance after one step\n\n");
	rp_explain_toy(r, "distance", "Fig. 7: centre distances", &cmd[4]);
	rp_md_commands(r, (const char *const *)cmd, 6);
	for (int k = 0; k < 6; k++)
		free(cmd[k]);
}
