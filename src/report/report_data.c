/* maskkit report: Eq. 9 over a length distribution, TISA's position
 * analysis of weights, and Ding et al.'s explaining away. */
#define _XOPEN_SOURCE 700 /* realpath (rp_find_example) */
#include "config.h"
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>
#include "internal.h"
#include "maskkit.h"
#include "plot.h"
#include "report.h"

/* the installed data and program directories (Makefile.am) */
#ifndef MK_DATADIR
#define MK_DATADIR "/usr/local/share/maskkit"
#endif
#ifndef MK_BINDIR
#define MK_BINDIR "/usr/local/bin"
#endif

#define RP_LABEL_MAX 96

/* Text built in memory; NULL after a failure. */
typedef struct rp_buf {
	char *text;
	size_t len;
	FILE *f;
} rp_buf;

static bool rp_buf_open(rp_buf *b)
{
	b->f = open_memstream(&b->text, &b->len);
	return b->f != NULL;
}

/* Closes b and writes it to file (marking it failed otherwise). */
static void rp_buf_write(report *r, rp_buf *b, rp_item *it)
{
	bool ok = b->f && fclose(b->f) == 0;

	b->f = NULL;
	if (!ok)
		rp_fail(r, it, "out of memory");
	else if (it->ok && rp_write_file(r, it->file, b->text, b->len))
		rp_fail(r, it, mk_error());
	free(b->text);
	b->text = NULL;
}

static void rp_buf_discard(rp_buf *b)
{
	if (b->f)
		fclose(b->f);
	free(b->text);
	*b = (rp_buf){0};
}

/* Grouped bars (templates/bars.gp): values[group * nseries + s]. */
static void rp_plot_bars(report *r, rp_item *it, const char *title, const char *ylabel,
			 const char *const *groups, int ngroups, const char *const *series,
			 int nseries, const double *values)
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
}

/* ---- TISA: position embeddings and the positional attention term ------------- */

#define TISA_MAX 64
#define TISA_CMDS (3 * TISA_MAX + 4)

/* buf = DIR MID/NAME when that fits and is readable. */
static bool rp_try_example(char *buf, size_t size, const char *dir, const char *mid,
			   const char *name)
{
	int len = snprintf(buf, size, "%s%s/%s", dir, mid, name);

	return len > 0 && (size_t)len < size && access(buf, R_OK) == 0;
}

/* make_tf_model.py: in MASKKIT_EXAMPLES; in the examples/ of the source tree
 * when the program runs from a build directory inside it (config.status
 * beside the program: ./quickstart.sh's build/); in the installed data; in
 * the same place relative to the program when the installation was moved or
 * staged (DESTDIR).  The program holds no path of the source tree. */
static bool rp_find_example(const char *name, char *buf, size_t size)
{
	const char *env = getenv("MASKKIT_EXAMPLES"), *slash = strrchr(MK_BINDIR, '/');
	char exe[4096], dir[4096 + sizeof MK_DATADIR], *end = NULL;
	ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
	bool found = false;

	if (len > 0) {
		exe[len] = '\0';
		end = strrchr(exe, '/');
		if (end)
			*end = '\0'; /* the program's directory ("" for /) */
	}
	if (env && *env)
		found = rp_try_example(buf, size, env, "", name);
	if (!found && end && rp_try_example(dir, sizeof dir, exe, "", "config.status"))
		found = rp_try_example(buf, size, exe, "/../examples", name);
	if (!found)
		found = rp_try_example(buf, size, MK_DATADIR, "/examples", name);
	/* PREFIX/bin/maskkit and PREFIX/share/maskkit: BIN/../share/maskkit */
	if (!found && end && slash && strncmp(MK_DATADIR, MK_BINDIR, (size_t)(slash - MK_BINDIR)) == 0 &&
	    MK_DATADIR[slash - MK_BINDIR] == '/') {
		int n = snprintf(dir, sizeof dir, "%s/..%s", exe, &MK_DATADIR[slash - MK_BINDIR]);
		found = n > 0 && (size_t)n < sizeof dir && rp_try_example(buf, size, dir, "/examples", name);
	}
	if (found) { /* a clean path for the commands the report prints */
		char *real = realpath(buf, NULL);
		if (real && strlen(real) < size)
			memcpy(buf, real, strlen(real) + 1);
		free(real);
	}
	return found;
}

typedef struct rp_tisa {
	int n;
	char *file[TISA_MAX];
	const char *dataset[TISA_MAX]; /* FILE.h5:/path's path (into file's buffer), or NULL */
	char label[TISA_MAX][RP_LABEL_MAX];
	char *cmd[TISA_CMDS];
	int ncmd;
	double values[3 * TISA_MAX]; /* per file: R^2 whole, first 128, F_P's mean over heads */
} rp_tisa;

/* The synthetic models, written into DIR/data when no --weights is given. */
static int rp_tisa_synthetic(report *r, rp_tisa *t, char *reason, size_t size)
{
	static const char *const layout[] = {"tf", "torch"};
	const char *py = getenv("PYTHON");
	char script[4096], dir[8192];

	if (!rp_find_example("make_tf_model.py", script, sizeof script)) {
		snprintf(reason, size, "no --weights given and examples/make_tf_model.py not found "
			 "(set MASKKIT_EXAMPLES to maskkit's examples directory)");
		return MK_EIO;
	}
	if (rp_path(r, "data", dir, sizeof dir) || (mkdir(dir, 0777) != 0 && errno != EEXIST)) {
		snprintf(reason, size, "cannot make %.300s: %s", dir, strerror(errno));
		return MK_EIO;
	}
	for (int k = 0; k < 2; k++) {
		char out[64], seed[8];
		snprintf(out, sizeof out, "data/synthetic_%s_model.h5", layout[k]);
		snprintf(seed, sizeof seed, "%d", k);
		const char *argv[] = {py && *py ? py : "python3", script, out, "--layout", layout[k],
				      "--seed", seed, NULL};
		int ret = rp_run_program(r, argv, NULL, &t->cmd[t->ncmd++], reason, size);
		if (ret) {
			char why[RP_REASON_MAX];
			snprintf(why, sizeof why, "%s", reason);
			snprintf(reason, size, "examples/make_tf_model.py (run by %s, the PYTHON "
				 "variable) failed: %.300s", argv[0], why);
			return ret;
		}
		t->file[t->n] = strdup(out);
		if (!t->file[t->n])
			return MK_ENOMEM;
		snprintf(t->label[t->n++], RP_LABEL_MAX, "synthetic (%s layout)", layout[k]);
	}
	return MK_OK;
}

/* x with 4 decimals, or a dash when there is no value. */
static const char *rp_fmt4(double x, char buf[16])
{
	if (!isfinite(x))
		return "–";
	snprintf(buf, 16, "%.4f", x);
	return buf;
}

static void rp_tisa_one(report *r, rp_tisa *t, int k, FILE *r2, FILE *heads)
{
	char p_png[64], h_png[64], f_png[64], reason[RP_REASON_MAX], b[3][16];
	rp_item *ip, *ih, *ifit;
	double *v = t->values + 3 * k;
	cJSON *j = NULL;

	snprintf(p_png, sizeof p_png, "figures/tisa_P_%d.png", k + 1);
	snprintf(h_png, sizeof h_png, "figures/tisa_heads_%d.png", k + 1);
	snprintf(f_png, sizeof f_png, "figures/tisa_profiles_%d.png", k + 1);
	ip = rp_promise(r, p_png);
	ih = rp_promise(r, h_png);
	ifit = rp_promise(r, f_png);
	v[0] = v[1] = v[2] = NAN;
	{
		const char *argv[] = {"toeplitz", t->file[k], "--first", "128", "--png", p_png,
				      "--json", t->dataset[k] ? "--dataset" : NULL, t->dataset[k], NULL};
		if (rp_run_json(r, argv, &j, &t->cmd[t->ncmd++], reason, sizeof reason)) {
			rp_fail(r, ip, reason);
		} else {
			v[0] = rp_json_num(j, "r2");
			v[1] = rp_json_num(cJSON_GetObjectItemCaseSensitive(j, "first"), "r2");
			rp_csv_field(r2, t->label[k]);
			fputc(',', r2);
			rp_csv_field(r2, t->file[k]);
			fprintf(r2, ",%.0f,%.0f,%.9f,%.9f", rp_json_num(j, "n"), rp_json_num(j, "d"),
				v[0], v[1]);
		}
		cJSON_Delete(j);
	}
	{
		/* the heatmaps (libpng) and the fits' plot (gnuplot) apart, so that
		 * one failing does not take the other with it */
		const char *argv[] = {"positional", t->file[k], "--layer", "0", "--png", h_png,
				      "--json", NULL};
		const char *fit[] = {"positional", t->file[k], "--layer", "0", "--fit", "2",
				     "--profile", f_png, NULL};
		const cJSON *h;
		int count = 0;
		if (rp_run(r, fit, NULL, &t->cmd[t->ncmd++], reason, sizeof reason))
			rp_fail(r, ifit, reason);
		if (rp_run_json(r, argv, &j, &t->cmd[t->ncmd++], reason, sizeof reason)) {
			rp_fail(r, ih, reason);
		} else {
			v[2] = 0;
			cJSON_ArrayForEach(h, cJSON_GetObjectItemCaseSensitive(j, "per_head")) {
				rp_csv_field(heads, t->label[k]);
				fprintf(heads, ",%d,%.9f\n", count, rp_json_num(h, "r2"));
				v[2] += rp_json_num(h, "r2");
				count++;
			}
			v[2] = count ? v[2] / count : NAN;
		}
		cJSON_Delete(j);
	}
	if (ip->ok)
		fprintf(r2, ",%.9f\n", v[2]);
	rp_md(r, "#### ");
	rp_md_text(r, t->label[k]);
	rp_md(r, "\n\nR² of P's Toeplitz fit: %s (whole), %s (first 128 positions); "
	      "layer 0's positional term F_P, mean R² over heads: %s.\n\n",
	      rp_fmt4(v[0], b[0]), rp_fmt4(v[1], b[1]), rp_fmt4(v[2], b[2]));
	rp_md(r, "P = E_P E_Pᵀ (position i down, j across; viridis):\n\n");
	rp_md_figure(r, ip, "P = E_P E_P^T");
	rp_md(r, "F_P of layer 0, one heatmap per head (head 0 first, left to right):\n\n");
	rp_md_figure(r, ih, "F_P per head, layer 0");
	rp_md_figure(r, ifit, "Toeplitz profiles and TISA fits per head");
}

void rp_section_tisa(report *r)
{
	static const char *const series[] = {"P, all positions", "P, first 128",
					     "F_P of layer 0, mean over heads"};
	rp_item *ic = rp_promise(r, "tables/tisa_r2.csv"), *ih = rp_promise(r, "tables/tisa_heads.csv"),
		*ib = rp_promise(r, "figures/tisa_r2.png");
	rp_tisa *t = calloc(1, sizeof *t);
	char reason[RP_REASON_MAX] = "out of memory";
	const char *groups[TISA_MAX];
	rp_buf r2 = {0}, heads = {0};
	bool any = false;

	if (!t || !rp_buf_open(&r2) || !rp_buf_open(&heads) ||
	    (r->nweights == 0 && rp_tisa_synthetic(r, t, reason, sizeof reason))) {
		rp_fail(r, ic, reason);
		rp_fail(r, ih, reason);
		rp_fail(r, ib, reason);
		rp_md(r, "> **Section not made:** ");
		rp_md_text(r, reason);
		rp_md(r, "\n\n");
		rp_buf_discard(&r2);
		rp_buf_discard(&heads);
		goto done;
	}
	if (r->nweights == 0)
		rp_md(r, "**These models are synthetic** (no `--weights` given): written by "
		      "`examples/make_tf_model.py` with sinusoidal position embeddings plus noise that "
		      "grows past position 128, and heads that peak at fixed offsets. Give "
		      "`--weights tf_model.h5` to analyse a trained model.\n\n");
	for (int k = 0; k < r->nweights && t->n < TISA_MAX; k++) {
		const char *base = strrchr(r->weights[k], '/');
		char *colon;
		if (!(t->file[t->n] = strdup(r->weights[k])))
			break;
		/* FILE.h5:/path names the position embeddings for toeplitz */
		colon = strstr(t->file[t->n], ".h5:");
		if (colon) {
			colon[3] = '\0';
			t->dataset[t->n] = colon + 4;
		}
		snprintf(t->label[t->n++], RP_LABEL_MAX, "%s", base ? base + 1 : r->weights[k]);
	}
	fprintf(r2.f, "label,file,n,d,r2,r2_first128,positional_r2_mean\n");
	fprintf(heads.f, "label,head,r2\n");
	for (int k = 0; k < t->n; k++) {
		groups[k] = t->label[k];
		if (t->file[k])
			rp_tisa_one(r, t, k, r2.f, heads.f);
		any |= isfinite(t->values[3 * k]);
	}
	if (!any) {
		rp_fail(r, ic, "no weights file could be analysed");
		rp_fail(r, ih, "no weights file could be analysed");
	}
	rp_buf_write(r, &r2, ic);
	rp_buf_write(r, &heads, ih);
	if (!any)
		rp_fail(r, ib, "no weights file could be analysed");
	else
		rp_plot_bars(r, ib, "Toeplitz R² (1: translation invariant)", "R²", groups, t->n,
			     series, 3, t->values);
	rp_md(r, "#### R² of every model\n\n");
	rp_md_figure(r, ib, "R^2 chart");
	if (ic->ok && ih->ok)
		rp_md(r, "Numbers: [`%s`](%s), per head: [`%s`](%s).\n", ic->file, ic->file, ih->file,
		      ih->file);
done:
	if (t) {
		rp_md_commands(r, (const char *const *)t->cmd, t->ncmd);
		for (int k = 0; k < t->ncmd; k++)
			free(t->cmd[k]);
		for (int k = 0; k < t->n; k++)
			free(t->file[k]);
	}
	free(t);
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

	rp_md(r, "#### Fig. 1: explaining away\n\n");
	rp_explain_random(r, &cmd[0]);
	rp_md(r, "#### Fig. 6: mode collapse\n\n");
	rp_explain_toy(r, "collapse", "Fig. 6: mode collapse", &cmd[2]);
	rp_md(r, "#### Fig. 7: centre distance after one step\n\n");
	rp_explain_toy(r, "distance", "Fig. 7: centre distances", &cmd[4]);
	rp_md_commands(r, (const char *const *)cmd, 6);
	for (int k = 0; k < 6; k++)
		free(cmd[k]);
}
