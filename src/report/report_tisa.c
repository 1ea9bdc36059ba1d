/* maskkit report: TISA's position analysis (Wennberg & Henter) — P = E_P
 * E_Pᵀ and its Toeplitz R², then the positional term F_P of every layer's
 * heads with two-kernel TISA fits — for the report's model (real, or the
 * synthetic fallback) and every --weights file. */
#include "config.h"
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "maskkit.h"
#include "report.h"

#define TISA_MAX 16
#define TISA_LAYERS 48
#define TISA_CMDS (TISA_MAX * (1 + 2 * TISA_LAYERS))
#define TISA_LABEL 160

typedef struct rp_tisa {
	int n;
	char *file[TISA_MAX];
	const char *dataset[TISA_MAX]; /* FILE.h5:/path's path (into file's buffer), or NULL */
	char label[TISA_MAX][TISA_LABEL];
	char *cmd[TISA_CMDS];
	int ncmd;
	double values[3 * TISA_MAX]; /* per file: R^2 whole, first 128, F_P's mean over heads
				      * and layers */
} rp_tisa;

/* x with 4 decimals, or a dash when there is no value. */
static const char *rp_fmt4(double x, char buf[16])
{
	if (!isfinite(x))
		return "–";
	snprintf(buf, 16, "%.4f", x);
	return buf;
}

static double tisa_toeplitz(report *r, rp_tisa *t, int k, rp_item *ip, FILE *r2)
{
	const char *argv[] = {"toeplitz", t->file[k], "--first", "128", "--png", ip->file, "--json",
			      t->dataset[k] ? "--dataset" : NULL, t->dataset[k], NULL};
	char reason[RP_REASON_MAX];
	cJSON *j = NULL;

	if (rp_run_json(r, argv, &j, &t->cmd[t->ncmd++], reason, sizeof reason)) {
		rp_fail(r, ip, reason);
		return NAN;
	}
	t->values[3 * k] = rp_json_num(j, "r2");
	t->values[3 * k + 1] = rp_json_num(cJSON_GetObjectItemCaseSensitive(j, "first"), "r2");
	rp_csv_field(r2, t->label[k]);
	fputc(',', r2);
	rp_csv_field(r2, t->file[k]);
	fprintf(r2, ",%.0f,%.0f,%.9f,%.9f", rp_json_num(j, "n"), rp_json_num(j, "d"),
		t->values[3 * k], t->values[3 * k + 1]);
	cJSON_Delete(j);
	return t->values[3 * k];
}

/* One layer's F_P: the heatmaps (libpng) and the fits' plot (gnuplot) by
 * commands of their own, so that one failing does not take the other with
 * it.  Returns the mean R² over heads (NaN on failure); *layers gets the
 * layers the file has. */
static double tisa_layer(report *r, rp_tisa *t, int k, int64_t layer, FILE *heads,
			 int64_t *layers)
{
	char h_png[64], f_png[64], lb[24], reason[RP_REASON_MAX];
	rp_item *ih, *ifit;
	const cJSON *h;
	double mean = NAN;
	int count = 0;
	cJSON *j = NULL;

	snprintf(lb, sizeof lb, "%" PRId64, layer);
	snprintf(h_png, sizeof h_png, "figures/tisa_heads_%d_L%" PRId64 ".png", k + 1, layer);
	snprintf(f_png, sizeof f_png, "figures/tisa_profiles_%d_L%" PRId64 ".png", k + 1, layer);
	ih = rp_promise(r, h_png);
	ifit = rp_promise(r, f_png);
	const char *argv[] = {"positional", t->file[k], "--layer", lb, "--png", h_png, "--json",
			      NULL};
	const char *fit[] = {"positional", t->file[k], "--layer", lb, "--fit", "2", "--profile",
			     f_png, NULL};
	if (rp_run(r, fit, NULL, &t->cmd[t->ncmd++], reason, sizeof reason))
		rp_fail(r, ifit, reason);
	if (rp_run_json(r, argv, &j, &t->cmd[t->ncmd++], reason, sizeof reason)) {
		rp_fail(r, ih, reason);
	} else {
		*layers = (int64_t)rp_json_num(j, "layers");
		mean = 0;
		cJSON_ArrayForEach(h, cJSON_GetObjectItemCaseSensitive(j, "per_head")) {
			rp_csv_field(heads, t->label[k]);
			fprintf(heads, ",%" PRId64 ",%d,%.9f\n", layer, count, rp_json_num(h, "r2"));
			mean += rp_json_num(h, "r2");
			count++;
		}
		mean = count ? mean / count : NAN;
	}
	cJSON_Delete(j);
	rp_md(r, "Layer %" PRId64 ": F_P per head (mean R² %.4f), then its Toeplitz profile "
	      "with a two-kernel TISA fit (each panel's y axis spans the profile over the "
	      "offsets of at least n/32 cells; a triangle on the axis marks a corner offset, "
	      "the mean of a few cells, beyond it):\n\n", layer, mean);
	rp_md_figure(r, ih, "F_P per head");
	rp_md_figure(r, ifit, "Toeplitz profiles and TISA fits per head");
	return mean;
}

static void tisa_one(report *r, rp_tisa *t, int k, FILE *r2, FILE *heads)
{
	char p_png[64], b[3][16];
	rp_item *ip;
	int64_t layers = 1, done = 0;
	double sum = 0;

	snprintf(p_png, sizeof p_png, "figures/tisa_P_%d.png", k + 1);
	ip = rp_promise(r, p_png);
	t->values[3 * k] = t->values[3 * k + 1] = t->values[3 * k + 2] = NAN;
	rp_md(r, "#### ");
	rp_md_text(r, t->label[k]);
	rp_md(r, "\n\n");
	tisa_toeplitz(r, t, k, ip, r2);
	rp_md(r, "R² of P's Toeplitz fit: %s (whole), %s (first 128 positions).\n\n"
	      "P = E_P E_Pᵀ (position i down, j across):\n\n",
	      rp_fmt4(t->values[3 * k], b[0]), rp_fmt4(t->values[3 * k + 1], b[1]));
	rp_md_figure(r, ip, "P, the dot products of the position embeddings");
	for (int64_t l = 0; l < layers && l < TISA_LAYERS; l++) {
		double m = tisa_layer(r, t, k, l, heads, &layers);
		if (isfinite(m)) {
			sum += m;
			done++;
		}
	}
	t->values[3 * k + 2] = done ? sum / (double)done : NAN;
	if (ip->ok)
		fprintf(r2, ",%.9f\n", t->values[3 * k + 2]);
	rp_md(r, "F_P's R², mean over heads and layers: %s.\n\n",
	      rp_fmt4(t->values[3 * k + 2], b[2]));
}

/* The entries: the report's model, then each --weights file. */
static void tisa_entries(report *r, rp_tisa *t)
{
	const rp_model *m = rp_model_get(r);

	if (m && (t->file[t->n] = strdup(m->dir)))
		snprintf(t->label[t->n++], TISA_LABEL, "%s", m->label);
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
		snprintf(t->label[t->n++], TISA_LABEL, "%s", base && base[1] ? base + 1 : r->weights[k]);
	}
}

void rp_section_tisa(report *r)
{
	static const char *const series[] = {"P, all positions", "P, first 128",
					     "F_P, mean over heads and layers"};
	rp_item *ic = rp_promise(r, "tables/tisa_r2.csv"), *ih = rp_promise(r, "tables/tisa_heads.csv"),
		*ib = rp_promise(r, "figures/tisa_r2.png");
	rp_tisa *t = calloc(1, sizeof *t);
	const char *groups[TISA_MAX];
	rp_buf r2 = {0}, heads = {0};
	bool any = false;

	if (!t || !rp_buf_open(&r2) || !rp_buf_open(&heads)) {
		rp_fail(r, ic, "out of memory");
		rp_fail(r, ih, "out of memory");
		rp_fail(r, ib, "out of memory");
		rp_buf_discard(&r2);
		rp_buf_discard(&heads);
		free(t);
		return;
	}
	tisa_entries(r, t);
	rp_model_md(r);
	if (!r->model.ok) {
		rp_md(r, "> **The model could not be had:** ");
		rp_md_text(r, r->model.reason);
		rp_md(r, "\n\n");
	}
	fprintf(r2.f, "label,file,n,d,r2,r2_first128,positional_r2_mean\n");
	fprintf(heads.f, "label,layer,head,r2\n");
	for (int k = 0; k < t->n; k++) {
		groups[k] = t->label[k];
		tisa_one(r, t, k, r2.f, heads.f);
		any |= isfinite(t->values[3 * k]);
	}
	if (!any) {
		rp_fail(r, ic, "no model could be analysed");
		rp_fail(r, ih, "no model could be analysed");
	}
	rp_buf_write(r, &r2, ic);
	rp_buf_write(r, &heads, ih);
	if (!any)
		rp_fail(r, ib, "no model could be analysed");
	else
		rp_plot_bars(r, ib, t->n > 1 ? "Toeplitz R² of each model (1: translation invariant)"
					     : "Toeplitz R² (1: translation invariant)", "R²", groups,
			     t->n, series, 3, t->values);
	rp_md(r, t->n > 1 ? "#### R² of the %d models\n\n" : "#### R² of the model\n\n", t->n);
	rp_md_figure(r, ib, "R^2 chart");
	if (ic->ok && ih->ok)
		rp_md(r, "Numbers: [`%s`](%s), per layer and head: [`%s`](%s).\n", ic->file, ic->file,
		      ih->file, ih->file);
	rp_md_commands(r, (const char *const *)t->cmd, t->ncmd);
	for (int k = 0; k < t->ncmd; k++)
		free(t->cmd[k]);
	for (int k = 0; k < t->n; k++)
		free(t->file[k]);
	free(t);
}
