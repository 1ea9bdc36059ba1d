/* maskkit report: the sections on the attention a model produces on real
 * text (report_model.c runs `maskkit encode` once): attention statistics,
 * Eq. 9 on the real maps, SparseBERT-style DAM pruning of the mean map,
 * AAA-style axis masks, and Ding et al.'s column sums on the real Q and K. */
#include "config.h"
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "maskkit.h"
#include "report.h"

#define RA_MAX_LAYERS 48
#define RP_ATTN_FILE "data/attn.h5" /* rp_model_attn's output */
#define RA_CMDS (2 * RA_MAX_LAYERS + 4)

/* The data, or NULL after marking the items failed and saying why. */
static const char *ra_data(report *r, rp_item **items, int n)
{
	char reason[RP_REASON_MAX];
	const char *attn = rp_model_attn(r, reason, sizeof reason);

	if (attn) {
		rp_model_md(r);
		return attn;
	}
	for (int k = 0; k < n; k++)
		rp_fail(r, items[k], reason);
	rp_md(r, "> **Section not made:** ");
	rp_md_text(r, reason);
	rp_md(r, "\n\n");
	return NULL;
}

static void ra_free(char **cmds, int n)
{
	for (int k = 0; k < n; k++)
		free(cmds[k]);
}

static int64_t ra_layers(const report *r)
{
	int64_t l = r->model.layers;
	return l < 1 ? 1 : l > RA_MAX_LAYERS ? RA_MAX_LAYERS : l;
}

/* ---- attention statistics ------------------------------------------------- */

/* The offset where layer l's profile peaks (INT_MIN when it has none). */
static int ra_peak(const cJSON *j, const cJSON *layer)
{
	const cJSON *offs = cJSON_GetObjectItemCaseSensitive(j, "offsets");
	const cJSON *prof = cJSON_GetObjectItemCaseSensitive(layer, "profile");
	int best = INT_MIN, k = 0;
	double top = -INFINITY;
	const cJSON *v;

	cJSON_ArrayForEach(v, prof) {
		const cJSON *o = cJSON_GetArrayItem(offs, k++);
		if (cJSON_IsNumber(v) && cJSON_IsNumber(o) && v->valuedouble > top) {
			top = v->valuedouble;
			best = o->valueint;
		}
	}
	return best;
}

/* The caption of the profile, from the numbers: where each layer peaks, and
 * whether the diagonal (offset 0) is that peak; SparseBERT argues it is the
 * least needed part of a mask, which a model need not bear out. */
static void ra_profile_caption(report *r, const cJSON *j)
{
	int peaks[RA_MAX_LAYERS], n = 0, at0 = 0;
	const cJSON *l;

	cJSON_ArrayForEach(l, cJSON_GetObjectItemCaseSensitive(j, "per_layer"))
		if (n < RA_MAX_LAYERS)
			peaks[n++] = ra_peak(j, l);
	rp_md(r, "Mean attention by offset j − i, per layer. Its peak:");
	for (int k = 0; k < n; k++) {
		if (peaks[k] == INT_MIN)
			rp_md(r, "%s layer %d none", k ? "," : "", k);
		else
			rp_md(r, peaks[k] ? "%s layer %d at %+d" : "%s layer %d at %d", k ? "," : "", k,
			      peaks[k]);
		at0 += peaks[k] == 0;
	}
	rp_md(r, ". The diagonal (offset 0) is the peak in %d of %d layers; SparseBERT "
	      "argues that it is the least needed part of a mask.\n\n", at0, n);
}

/* The mean attention map of one layer, drawn per head. */
static void ra_mean_picture(report *r, int64_t layer, char **cmd)
{
	char png[64], lb[24], reason[RP_REASON_MAX];
	rp_item *it;

	snprintf(png, sizeof png, "figures/attn_mean_L%" PRId64 ".png", layer);
	snprintf(lb, sizeof lb, "%" PRId64, layer);
	it = rp_promise(r, png);
	const char *argv[] = {"attn-derive", RP_ATTN_FILE, "--mean-map", "data/mean_map.h5",
			      "--png", png, "--layer", lb, NULL};
	if (rp_run(r, argv, NULL, cmd, reason, sizeof reason))
		rp_fail(r, it, reason);
	rp_md(r, "Layer %" PRId64 ":\n\n", layer);
	rp_md_figure(r, it, "mean attention map per head");
}

void rp_section_attention(report *r)
{
	rp_item *ip = rp_promise(r, "figures/attn_profile.png"),
		*ic = rp_promise(r, "tables/attn_stats.csv"), *items[] = {ip, ic};
	const char *attn = ra_data(r, items, 2);
	char *cmds[3] = {0}, reason[RP_REASON_MAX];
	const cJSON *l;
	cJSON *j = NULL;

	if (!attn)
		return;
	const char *argv[] = {"attn-stats", attn, "--max-offset", "16", "--png", ip->file,
			      "--csv", ic->file, "--json", NULL};
	if (rp_run_json(r, argv, &j, &cmds[0], reason, sizeof reason)) {
		rp_fail(r, ip, reason);
		rp_fail(r, ic, reason);
	} else {
		rp_md(r, "Per layer, the mean over heads and over every real query of each "
		      "sentence (padding never counts): attention on the query itself (diag), "
		      "on another token (off), on [CLS] (the first token), on the sentence's "
		      "[SEP] (its last), and the row entropy in nats (ln N for uniform "
		      "attention).\n\n| layer | diag | off | [CLS] | [SEP] | entropy |\n"
		      "|---:|---:|---:|---:|---:|---:|\n");
		cJSON_ArrayForEach(l, cJSON_GetObjectItemCaseSensitive(j, "per_layer"))
			rp_md(r, "| %.0f | %.4f | %.4f | %.4f | %.4f | %.3f |\n",
			      rp_json_num(l, "layer"), rp_json_num(l, "diag"), rp_json_num(l, "off"),
			      rp_json_num(l, "first"), rp_json_num(l, "last"),
			      rp_json_num(l, "entropy"));
		rp_md(r, "\n");
		ra_profile_caption(r, j);
	}
	cJSON_Delete(j);
	rp_md_figure(r, ip, "attention by offset");
	if (ic->ok)
		rp_md(r, "Per head: [`%s`](%s).\n\n", ic->file, ic->file);
	rp_md(r, "The attention maps themselves: each head's mean over the sentences, on "
	      "their first M tokens (M the median length; query down, key across). Column 0 "
	      "is [CLS], which takes several times any other key's attention: each head's "
	      "colours run from the 1st to the 99th percentile of its other columns, and "
	      "[CLS] is drawn in the top colour wherever it is above that.\n\n");
	ra_mean_picture(r, 0, &cmds[1]);
	ra_mean_picture(r, ra_layers(r) - 1, &cmds[2]);
	rp_model_commands(r, cmds, 3);
	ra_free(cmds, 3);
}

/* ---- Eq. 9 on the real maps ------------------------------------------------- */

void rp_eq9_real(report *r)
{
	static const char *const series[] = {"Eq. 9 (each sample at its own length; this layer)"};
	rp_item *ip = rp_promise(r, "figures/eq9_real.png"), *items[] = {ip};
	const char *attn, *rules[2][2] = {{"--threshold", "0.05"}, {"--top-p", "0.9"}};
	char *cmds[2] = {0}, reason[RP_REASON_MAX], names[RA_MAX_LAYERS][16];
	const char *groups[RA_MAX_LAYERS];
	double values[RA_MAX_LAYERS], classic = NAN;
	char classic_name[96];
	int ngroups = 0;

	rp_md(r, "#### Eq. 9 on the attention of a real model\n\n");
	if (!(attn = ra_data(r, items, 1)))
		return;
	rp_md(r, "An attention map kept as a mask: the cells with p ≥ 0.05, or per row the "
	      "fewest keys holding 90%% of the row's mass (top-p).\n\n| rule | ρ at N_max (%%) | "
	      "ρ by Eq. 9 (%%) | ρ by Eq. 9 per layer (%%) |\n|---|---:|---:|---|\n");
	for (int k = 0; k < 2; k++) {
		const char *argv[] = {"measure", attn, rules[k][0], rules[k][1], "--json", NULL};
		const cJSON *v;
		cJSON *j = NULL;
		if (rp_run_json(r, argv, &j, &cmds[k], reason, sizeof reason)) {
			if (k == 0)
				rp_fail(r, ip, reason);
			rp_md(r, "| `%s %s` | – | – | not measured: ", rules[k][0], rules[k][1]);
			rp_md_text(r, reason);
			rp_md(r, " |\n");
			continue;
		}
		rp_md(r, "| `%s %s` | %.2f | %.2f |", rules[k][0], rules[k][1],
		      100 * rp_json_num(j, "sparsity_classic"), 100 * rp_json_num(j, "sparsity"));
		int layer = 0;
		cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(j, "by_layer")) {
			rp_md(r, " %.1f", 100 * v->valuedouble);
			if (k == 0 && layer < RA_MAX_LAYERS) {
				snprintf(names[layer], sizeof names[layer], "layer %d", layer);
				groups[layer] = names[layer];
				values[layer] = 100 * v->valuedouble;
				ngroups = ++layer;
			}
		}
		rp_md(r, " |\n");
		if (k == 0)
			classic = 100 * rp_json_num(j, "sparsity_classic");
		cJSON_Delete(j);
	}
	rp_md(r, "\nThe classic column treats every sentence as N_max long, so the padding "
	      "counts as skipped; Eq. 9 measures each sentence at its own length. "
	      "`maskkit measure` gives the classic figure once, over all layers, so the "
	      "figure draws it as one "
	      "line across the layers' Eq. 9 bars.\n\n");
	snprintf(classic_name, sizeof classic_name, "classic, all layers (every sample N_max long): "
		 "%.2f%%", classic);
	if (ip->ok && ngroups)
		rp_plot_bars_ref(r, ip, "Real attention kept at p >= 0.05: Eq. 9 per layer vs classic",
				 "sparsity rho (%)", groups, ngroups, series, 1, values, classic,
				 classic_name);
	rp_md_figure(r, ip, "Eq. 9 on real attention");
	rp_model_commands(r, cmds, 2);
	ra_free(cmds, 2);
}

/* ---- SparseBERT: DAM-style masks pruned from the mean map --------------------- */

static void ra_dam_layer(report *r, int64_t layer, char **cmds, int *ncmd, FILE *csv)
{
	char in[64], out[2][64], reason[RP_REASON_MAX];
	double sp[2] = {NAN, NAN}, diagonals = NAN;

	snprintf(in, sizeof in, "data/mean_map.h5:/layer_%" PRId64, layer);
	for (int k = 0; k < 2; k++) {
		snprintf(out[k], sizeof out[k], "data/dam_%s_%" PRId64 ".h5", k ? "s" : "u", layer);
		const char *argv[] = {"prune", in, "--sparsity", "0.9", "-o", out[k], "--json",
				      k ? "--structured" : NULL, "--no-border", NULL};
		const cJSON *lv, *h;
		cJSON *j = NULL;
		if (rp_run_json(r, argv, &j, &cmds[(*ncmd)++], reason, sizeof reason))
			continue;
		lv = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "levels"), 0);
		sp[k] = 0;
		int heads = 0;
		cJSON_ArrayForEach(h, cJSON_GetObjectItemCaseSensitive(lv, "heads")) {
			sp[k] += rp_json_num(h, "sparsity");
			if (k == 1)
				diagonals = heads == 0 ? rp_json_num(h, "diagonals")
						       : diagonals + rp_json_num(h, "diagonals");
			heads++;
		}
		sp[k] = heads ? sp[k] / heads : NAN;
		if (k == 1 && heads)
			diagonals /= heads;
		cJSON_Delete(j);
	}
	rp_md(r, "| %" PRId64 " | %.2f | %.2f | %.1f |\n", layer, 100 * sp[0], 100 * sp[1],
	      diagonals);
	fprintf(csv, "%" PRId64 ",%.9g,%.9g,%.9g\n", layer, sp[0], sp[1], diagonals);
}

void rp_section_dam(report *r)
{
	rp_item *ic = rp_promise(r, "tables/dam.csv"), *items[] = {ic};
	const char *attn = ra_data(r, items, 1);
	char *cmds[RA_CMDS] = {0}, reason[RP_REASON_MAX];
	rp_buf csv = {0};
	int ncmd = 0;
	cJSON *j = NULL;

	if (!attn)
		return;
	const char *argv[] = {"attn-derive", attn, "--mean-map", "data/mean_map.h5", "--json",
			      NULL};
	if (!rp_buf_open(&csv)) {
		rp_fail(r, ic, "out of memory");
		return;
	}
	fprintf(csv.f, "layer,dam_u_sparsity,dam_s_sparsity,dam_s_diagonals\n");
	if (rp_run_json(r, argv, &j, &cmds[ncmd++], reason, sizeof reason)) {
		rp_fail(r, ic, reason);
		rp_md(r, "> **Section not made:** ");
		rp_md_text(r, reason);
		rp_md(r, "\n\n");
	} else {
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(j, "mean_map");
		rp_md(r, "SparseBERT's DAM learns one mask per head for every input. Its stand-in "
		      "here: each head's mean attention map over the %.0f sentences at least M = "
		      "%.0f tokens long (their first M tokens), pruned to 90%% sparsity — "
		      "unstructured (DAM_u: the 10%% largest cells) and structured (DAM_s: the "
		      "diagonals of largest mean, so the mask is Toeplitz; without the [CLS] and "
		      "[SEP] rows and columns DAM_s also keeps, which alone would exceed 10%% of "
		      "cells at this M).\n\n"
		      "| layer | DAM_u ρ (%%) | DAM_s ρ (%%) | DAM_s diagonals kept (mean over "
		      "heads) |\n|---:|---:|---:|---:|\n", rp_json_num(m, "samples"),
		      rp_json_num(m, "size"));
		for (int64_t l = 0; l < ra_layers(r); l++)
			ra_dam_layer(r, l, cmds, &ncmd, csv.f);
		rp_md(r, "\nThe masks: `data/dam_u_L.h5`, `data/dam_s_L.h5` (`maskkit measure` "
		      "reads them); numbers: [`%s`](%s).\n", ic->file, ic->file);
	}
	cJSON_Delete(j);
	rp_buf_write(r, &csv, ic);
	rp_model_commands(r, cmds, ncmd);
	ra_free(cmds, ncmd);
}

/* ---- Adaptive Axis Attention: indicators read off the real attention ----------- */

void rp_section_axis(report *r)
{
	static const char *const series[] = {"row-wise important (%)", "column-wise important (%)"};
	rp_item *ip = rp_promise(r, "figures/axis_table6.png"), *items[] = {ip};
	const char *attn = ra_data(r, items, 1);
	char *cmds[2] = {0}, reason[RP_REASON_MAX], names[RA_MAX_LAYERS][16];
	const char *groups[RA_MAX_LAYERS];
	double values[2 * RA_MAX_LAYERS];
	int ngroups = 0;
	cJSON *j = NULL;

	if (!attn)
		return;
	const char *derive[] = {"attn-derive", attn, "--indicators", "data/indicators.h5", NULL};
	const char *argv[] = {"axis", "data/indicators.h5", "--lengths-file", attn, "--json", NULL};
	if (rp_run(r, derive, NULL, &cmds[0], reason, sizeof reason) ||
	    rp_run_json(r, argv, &j, &cmds[1], reason, sizeof reason)) {
		rp_fail(r, ip, reason);
		rp_md(r, "> **Section not made:** ");
		rp_md_text(r, reason);
		rp_md(r, "\n\n");
	} else {
		const cJSON *l;
		rp_md(r, "AAA learns which tokens are row-wise important (their query attends to "
		      "everything) and column-wise important (every query attends to them). Here "
		      "they are read off the model's attention (`maskkit attn-derive "
		      "--indicators`): a key receiving at least twice a uniform share, a query "
		      "whose row entropy is at least 0.9 ln N. The axis mask (those rows and "
		      "columns, OR local2) per head and sentence: ρ by Eq. 9 = %.2f%% (axis part "
		      "alone %.2f%%, local2 alone %.2f%%).\n\n| layer | row-wise (%%) | "
		      "column-wise (%%) | ρ (%%) |\n|---:|---:|---:|---:|\n",
		      100 * rp_json_num(j, "rho"), 100 * rp_json_num(j, "rho_axis"),
		      100 * rp_json_num(j, "rho_local"));
		cJSON_ArrayForEach(l, cJSON_GetObjectItemCaseSensitive(j, "by_layer")) {
			rp_md(r, "| %.0f | %.2f | %.2f | %.2f |\n", rp_json_num(l, "layer"),
			      rp_json_num(l, "rows_pct"), rp_json_num(l, "cols_pct"),
			      100 * rp_json_num(l, "rho"));
			if (ngroups < RA_MAX_LAYERS) {
				snprintf(names[ngroups], sizeof names[ngroups], "layer %d", ngroups);
				groups[ngroups] = names[ngroups];
				values[2 * ngroups] = rp_json_num(l, "rows_pct");
				values[2 * ngroups + 1] = rp_json_num(l, "cols_pct");
				ngroups++;
			}
		}
		rp_md(r, "\n");
		rp_plot_bars(r, ip, "Table 6: important tokens per layer (read off real attention)",
			     "tokens (%)", groups, ngroups, series, 2, values);
	}
	cJSON_Delete(j);
	rp_md_figure(r, ip, "Table 6");
	rp_model_commands(r, cmds, 2);
	ra_free(cmds, 2);
}

/* ---- Ding et al.: column sums on the real Q and K ------------------------------- */

/* The longest sample (the most keys to explain away) of those whose
 * queries and keys the encode kept. */
static int64_t ra_longest(const char *attn_file)
{
	int64_t *len = NULL, count = 0, best = 0;

	if (mk_lengths_read(attn_file, 0, &len, &count) == MK_OK)
		for (int64_t s = 1; s < count && s < RP_QK_SAMPLES; s++)
			if (len[s] > len[best])
				best = s;
	free(len);
	return best;
}

void rp_explain_real(report *r)
{
	rp_item *ic = rp_promise(r, "tables/explain_real.csv"), *items[] = {ic};
	char *cmds[RA_MAX_LAYERS] = {0}, reason[RP_REASON_MAX], path[4096 + 32], sample[24];
	const char *attn;
	rp_buf csv = {0};
	int64_t layers, s;

	rp_md(r, "#### Column sums of a real model's attention\n\n");
	if (!(attn = ra_data(r, items, 1)))
		return;
	layers = ra_layers(r);
	s = rp_path(r, attn, path, sizeof path) ? 0 : ra_longest(path);
	snprintf(sample, sizeof sample, "%" PRId64, s);
	if (!rp_buf_open(&csv)) {
		rp_fail(r, ic, "out of memory");
		return;
	}
	fprintf(csv.f, "layer,norm,keys,explained_away,fraction_away,min_colsum,log10_median\n");
	rp_md(r, "The queries and keys of sentence %s (the longest of the first %d, whose queries "
	      "and keys the encode keeps) at each layer, all "
	      "heads: how many keys softmax explains away (column sum below 10⁻⁸) and the "
	      "smallest column sum, against DNAS.\n\n| layer | normalisation | keys | explained "
	      "away | smallest column sum | median log10 column sum |\n"
	      "|---:|---|---:|---:|---:|---:|\n", sample, RP_QK_SAMPLES);
	for (int64_t l = 0; l < layers; l++) {
		char group[64];
		const cJSON *n;
		cJSON *j = NULL;
		snprintf(group, sizeof group, "%s:/qk/layer_%" PRId64, attn, l);
		const char *argv[] = {"explain", group, "--sample", sample, "--norm", "softmax,dnas",
				      "--json", NULL};
		if (rp_run_json(r, argv, &j, &cmds[l], reason, sizeof reason)) {
			rp_fail(r, ic, reason);
			continue;
		}
		cJSON_ArrayForEach(n, cJSON_GetObjectItemCaseSensitive(j, "norms")) {
			const cJSON *all = cJSON_GetObjectItemCaseSensitive(n, "all");
			const cJSON *name = cJSON_GetObjectItemCaseSensitive(n, "norm");
			const char *nm = cJSON_IsString(name) ? name->valuestring : "?";
			rp_md(r, "| %" PRId64 " | %s | %.0f | %.0f | %.3g | %.3f |\n", l, nm,
			      rp_json_num(all, "keys"), rp_json_num(all, "explained_away"),
			      rp_json_num(all, "min_colsum"), rp_json_num(all, "log10_median"));
			fprintf(csv.f, "%" PRId64 ",%s,%.0f,%.0f,%.9g,%.9g,%.9g\n", l, nm,
				rp_json_num(all, "keys"), rp_json_num(all, "explained_away"),
				rp_json_num(all, "fraction_away"), rp_json_num(all, "min_colsum"),
				rp_json_num(all, "log10_median"));
		}
		cJSON_Delete(j);
	}
	rp_md(r, "\n");
	rp_buf_write(r, &csv, ic);
	if (ic->ok)
		rp_md(r, "Numbers: [`%s`](%s).\n", ic->file, ic->file);
	rp_model_commands(r, cmds, (int)layers);
	ra_free(cmds, (int)layers);
}
