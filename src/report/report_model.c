/* maskkit report: the model the report studies and the attention maps it
 * produces on real text.  The model is a real one (--model, $MASKKIT_MODEL,
 * or the cache tools/fetch-model.sh fills) or, when none is at hand, a
 * synthetic BERT the report writes itself (report_synth.c), labelled as
 * such everywhere.  `maskkit encode` runs once per report over the text and
 * its output, data/attn.h5, feeds the sections on real attention. */
#include "config.h"
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "maskkit.h"
#include "report.h"

#define RP_DEFAULT_TEXT "/usr/share/common-licenses/GPL-3"
#define RP_ATTN "data/attn.h5"

static bool rp_is_model_dir(const char *dir)
{
	char path[4096 + 16];
	struct stat st;
	snprintf(path, sizeof path, "%s/config.json", dir);
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The default model: $MASKKIT_MODEL, else the fetch script's cache. */
static bool rp_default_model(char *buf, size_t size)
{
	const char *env = getenv("MASKKIT_MODEL"), *xdg = getenv("XDG_CACHE_HOME"),
		   *home = getenv("HOME");

	if (env && *env && env[0] != '/') {
		char cwd[2048];
		if (!getcwd(cwd, sizeof cwd))
			return false;
		snprintf(buf, size, "%s/%s", cwd, env);
	} else if (env && *env)
		snprintf(buf, size, "%s", env);
	else if (xdg && *xdg)
		snprintf(buf, size, "%s/maskkit/all-MiniLM-L6-v2", xdg);
	else if (home && *home)
		snprintf(buf, size, "%s/.cache/maskkit/all-MiniLM-L6-v2", home);
	else
		return false;
	return rp_is_model_dir(buf);
}

static void rp_model_label(rp_model *m)
{
	char copy[sizeof m->dir];
	size_t len;
	const char *base;

	snprintf(copy, sizeof copy, "%s", m->dir);
	len = strlen(copy);
	while (len > 1 && copy[len - 1] == '/')
		copy[--len] = '\0';
	base = strrchr(copy, '/');
	snprintf(m->label, sizeof m->label, "%s", base ? base + 1 : copy);
}

/* The model's layers and heads, from its config.json (path: where this
 * process finds it; m->dir is relative to the output directory for the
 * synthetic model). */
static void rp_model_shape(rp_model *m, const char *path)
{
	mk_model_config c;
	if (mk_model_config_read(path, &c) == MK_OK) {
		m->layers = c.layers;
		m->heads = c.heads;
	}
}

const rp_model *rp_model_get(report *r)
{
	rp_model *m = &r->model;
	char synth[4096 + 32];

	if (m->tried)
		return m->ok ? m : NULL;
	m->tried = true;
	/* the model's data (and the synthetic model) go to DIR/data */
	if (rp_path(r, "data", synth, sizeof synth) || (mkdir(synth, 0777) != 0 && errno != EEXIST)) {
		snprintf(m->reason, sizeof m->reason, "cannot make %.300s: %s", synth,
			 strerror(errno));
		return NULL;
	}
	if (r->model_opt && strcmp(r->model_opt, "none")) {
		if (!rp_is_model_dir(r->model_opt)) {
			snprintf(m->reason, sizeof m->reason, "--model %.300s: no config.json there "
				 "(a HuggingFace model directory is needed)", r->model_opt);
			return NULL;
		}
		snprintf(m->dir, sizeof m->dir, "%s", r->model_opt);
		m->real = true;
	} else if (!r->model_opt && rp_default_model(m->dir, sizeof m->dir)) {
		m->real = true;
	}
	if (m->real) {
		rp_model_label(m);
	} else {
		/* relative to the output directory, where the commands run */
		snprintf(m->dir, sizeof m->dir, "data/synthetic-bert");
		if (rp_path(r, m->dir, synth, sizeof synth) ||
		    rp_synthetic_bert(synth, 0, m->reason, sizeof m->reason))
			return NULL;
		snprintf(m->label, sizeof m->label, "synthetic BERT (random weights, no model found)");
	}
	rp_model_shape(m, m->real ? m->dir : synth);
	m->ok = true;
	return m;
}

const char *rp_model_text(const report *r)
{
	return r->text ? r->text : RP_DEFAULT_TEXT;
}

const char *rp_model_attn(report *r, char *reason, size_t size)
{
	rp_model *m = &r->model;
	char limit[24], qk[24];
	cJSON *j = NULL;

	if (!rp_model_get(r)) {
		snprintf(reason, size, "%s", m->reason);
		return NULL;
	}
	if (m->encoded)
		return RP_ATTN;
	if (m->encode_failed) {
		snprintf(reason, size, "%s", m->reason);
		return NULL;
	}
	snprintf(limit, sizeof limit, "%lld", (long long)(r->samples ? r->samples :
							  r->quick ? 48 : 200));
	snprintf(qk, sizeof qk, "%d", RP_QK_SAMPLES);
	const char *argv[] = {"encode", m->dir, "--text", rp_model_text(r), "--sentences",
			      "--limit", limit, "--layout", "ragged", "--dtype", "fp16",
			      "--qk-limit", qk, "-o", RP_ATTN, "--quiet", "--json", NULL};
	if (rp_run_json(r, argv, &j, &m->encode_cmd, m->reason, sizeof m->reason)) {
		m->encode_failed = true;
		snprintf(reason, size, "%s", m->reason);
		return NULL;
	}
	m->samples = (int64_t)rp_json_num(j, "samples");
	m->n = (int64_t)rp_json_num(j, "n");
	m->tokens = (int64_t)rp_json_num(j, "tokens");
	cJSON_Delete(j);
	m->encoded = true;
	return RP_ATTN;
}

void rp_model_md(report *r)
{
	const rp_model *m = &r->model;

	if (!m->ok)
		return;
	if (m->real)
		rp_md(r, "Model: **");
	else
		rp_md(r, "Model: **synthetic** — ");
	rp_md_text(r, m->label);
	rp_md(r, "%s (`", m->real ? "**" : "");
	rp_md_text(r, m->dir);
	rp_md(r, "`; %lld layers × %lld heads)", (long long)m->layers, (long long)m->heads);
	if (m->encoded) {
		rp_md(r, " on the first %lld sentences of `", (long long)m->samples);
		rp_md_text(r, rp_model_text(r));
		rp_md(r, "` (%lld tokens, the longest %lld)", (long long)m->tokens, (long long)m->n);
	}
	rp_md(r, ".%s\n\n", m->real ? "" : " Run `tools/fetch-model.sh` for the real "
	      "all-MiniLM-L6-v2; these figures say nothing about trained models.");
}

void rp_model_commands(report *r, char **cmds, int n)
{
	const char **all = calloc((size_t)n + 1, sizeof *all);

	if (!all)
		return;
	all[0] = r->model.encode_cmd;
	for (int k = 0; k < n; k++)
		all[k + 1] = cmds[k];
	rp_md_commands(r, all, n + 1);
	free(all);
}
