/* maskkit report: what each head does, from `maskkit heads` on the attention
 * the model produced on the text (report_model.c runs encode once).  The
 * text under the figure is made from the numbers: how many heads have each
 * role, which ones, and the strongest previous-token head. */
#include "config.h"
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "maskkit.h"
#include "report.h"

#define RH_LIST 8 /* heads named per role, at most */

/* The measure that decides each role, in mk_head_role order (mixed: none). */
static const char *const rh_measure[MK_ROLE_COUNT] = {"prev", "next", "band", NULL,
						      "entropy_norm", NULL};

static double rh_score(const cJSON *h, int role)
{
	if (role == MK_ROLE_SINK)
		return rp_json_num(h, "cls") + rp_json_num(h, "sep");
	return rh_measure[role] ? rp_json_num(h, rh_measure[role]) : NAN;
}

/* One table row: the role, its count, and its first heads with the number
 * that gave them the role (the list comes sorted by layer and head). */
static void rh_role_row(report *r, const cJSON *heads, int role, double count)
{
	const char *name = mk_head_role_name((mk_head_role)role);
	const cJSON *h;
	int shown = 0;

	rp_md(r, "| %s | %.0f | ", name, count);
	cJSON_ArrayForEach(h, heads) {
		const cJSON *rn = cJSON_GetObjectItemCaseSensitive(h, "role");
		if (!cJSON_IsString(rn) || strcmp(rn->valuestring, name))
			continue;
		if (shown < RH_LIST && role != MK_ROLE_MIXED) {
			rp_md(r, "%sL%.0f H%.0f (%.2f)", shown ? ", " : "", rp_json_num(h, "layer"),
			      rp_json_num(h, "head"), rh_score(h, role));
		}
		shown++;
	}
	if (role == MK_ROLE_MIXED || shown == 0)
		rp_md(r, "–");
	else if (shown > RH_LIST)
		rp_md(r, ", and %d more", shown - RH_LIST);
	rp_md(r, " |\n");
}

/* The head putting the most attention on the token before it. */
static void rh_strongest_prev(report *r, const cJSON *heads, double threshold)
{
	const cJSON *h, *best = NULL;

	cJSON_ArrayForEach(h, heads)
		if (!best || rp_json_num(h, "prev") > rp_json_num(best, "prev"))
			best = h;
	if (!best || isnan(rp_json_num(best, "prev")))
		return;
	rp_md(r, "The strongest previous-token attention is layer %.0f, head %.0f: on average "
	      "%.2f%% of each query's attention goes to the token just before it%s.",
	      rp_json_num(best, "layer"), rp_json_num(best, "head"),
	      100 * rp_json_num(best, "prev"),
	      rp_json_num(best, "prev") >= threshold ? "" : ", below the threshold, so no head "
	      "is named previous-token");
}

/* Where the mixed heads look: their mean mass on [CLS] and in the band. */
static void rh_mixed(report *r, const cJSON *heads, double window)
{
	const cJSON *h;
	double cls = 0, band = 0;
	int n = 0;

	cJSON_ArrayForEach(h, heads) {
		const cJSON *rn = cJSON_GetObjectItemCaseSensitive(h, "role");
		if (cJSON_IsString(rn) && !strcmp(rn->valuestring, mk_head_role_name(MK_ROLE_MIXED))) {
			cls += rp_json_num(h, "cls");
			band += rp_json_num(h, "band");
			n++;
		}
	}
	if (n)
		rp_md(r, " The %d mixed heads put on average %.0f%% of their attention on [CLS] "
		      "and %.0f%% within %.0f tokens of the query.", n, 100 * cls / n,
		      100 * band / n, window);
	rp_md(r, "\n\n");
}

static void rh_text(report *r, const cJSON *j)
{
	const cJSON *heads = cJSON_GetObjectItemCaseSensitive(j, "by_head"),
		    *roles = cJSON_GetObjectItemCaseSensitive(j, "roles"),
		    *t = cJSON_GetObjectItemCaseSensitive(j, "thresholds");

	rp_md(r, "Each of the %.0f × %.0f heads gets a role from its attention over every "
	      "real token of the %.0f sentences (after Clark et al. 2019 and Kovaleva et al. "
	      "2019; the first test that holds): previous-token when at least %.2f of a "
	      "query's attention is on the token before it, next-token likewise (%.2f) for the "
	      "token after, local-band when %.2f is within %.0f tokens, cls-sep-sink when "
	      "[CLS] and [SEP] together hold %.2f, broad when the row entropy is at least "
	      "%.2f of ln N (uniform attention: 1), else mixed.\n\n| role | heads | which "
	      "(layer, head, and the number that decided) |\n|---|---:|---|\n",
	      rp_json_num(j, "layers"), rp_json_num(j, "heads"), rp_json_num(j, "samples"),
	      rp_json_num(t, "prev"), rp_json_num(t, "next"), rp_json_num(t, "band"),
	      rp_json_num(j, "window"), rp_json_num(t, "sink"), rp_json_num(t, "broad"));
	for (int k = 0; k < MK_ROLE_COUNT; k++)
		rh_role_row(r, heads, k, rp_json_num(roles, mk_head_role_name((mk_head_role)k)));
	rp_md(r, "\n");
	rh_strongest_prev(r, heads, rp_json_num(t, "prev"));
	rh_mixed(r, heads, rp_json_num(j, "window"));
}

void rp_section_heads(report *r)
{
	rp_item *ip = rp_promise(r, "figures/heads.png"), *ic = rp_promise(r, "tables/heads.csv");
	char *cmd = NULL, reason[RP_REASON_MAX];
	const char *attn = rp_model_attn(r, reason, sizeof reason);
	cJSON *j = NULL;

	if (!attn) {
		rp_fail(r, ip, reason);
		rp_fail(r, ic, reason);
		rp_md(r, "> **Section not made:** ");
		rp_md_text(r, reason);
		rp_md(r, "\n\n");
		return;
	}
	const char *argv[] = {"heads", attn, "--png", ip->file, "--csv", ic->file, "--json", "-q",
			      NULL};
	if (rp_run_json(r, argv, &j, &cmd, reason, sizeof reason)) {
		rp_fail(r, ip, reason);
		rp_fail(r, ic, reason);
	} else {
		rh_text(r, j);
	}
	cJSON_Delete(j);
	rp_md_figure(r, ip, "what each head does: a layer x head grid coloured by role");
	if (ic->ok)
		rp_md(r, "Every head's numbers: [`%s`](%s).\n\n", ic->file, ic->file);
	rp_model_commands(r, &cmd, 1);
	free(cmd);
}
