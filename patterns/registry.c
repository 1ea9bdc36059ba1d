/*
 * The table of pattern families, lookup by name, and terms: one use of a
 * pattern with its parameter values (defaults parsed from the table's text).
 */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "pattern.h"
#include "result.h"

/* The order is the order `maskkit patterns` lists them in. */
static const mk_pattern_def *const registry_defs[] = {
	&mk_pat_full, &mk_pat_none, &mk_pat_diag, &mk_pat_causal,
	&mk_pat_local, &mk_pat_diagonal, &mk_pat_global, &mk_pat_axis,
	&mk_pat_random, &mk_pat_star, &mk_pat_logsparse, &mk_pat_strided,
	&mk_pat_fixed, &mk_pat_longformer, &mk_pat_bigbird, &mk_pat_prefix,
	&mk_pat_document,
};

#define REGISTRY_LEN (sizeof registry_defs / sizeof registry_defs[0])

size_t mk_pattern_def_count(void)
{
	return REGISTRY_LEN;
}

const mk_pattern_def *mk_pattern_def_get(size_t k)
{
	return k < REGISTRY_LEN ? registry_defs[k] : NULL;
}

const mk_pattern_def *mk_pattern_def_find(const char *name)
{
	if (!name)
		return NULL;
	for (size_t k = 0; k < REGISTRY_LEN; k++)
		if (strcmp(registry_defs[k]->info.name, name) == 0)
			return registry_defs[k];
	return NULL;
}

size_t mk_pattern_count(void)
{
	return REGISTRY_LEN;
}

const mk_pattern_info *mk_pattern_get(size_t k)
{
	return k < REGISTRY_LEN ? &registry_defs[k]->info : NULL;
}

const mk_pattern_info *mk_pattern_find(const char *name)
{
	const mk_pattern_def *def = mk_pattern_def_find(name);
	return def ? &def->info : NULL;
}

const char *mk_param_kind_name(mk_param_kind k)
{
	switch (k) {
	case MK_PARAM_INT:
		return "int";
	case MK_PARAM_BOOL:
		return "bool";
	case MK_PARAM_LIST:
		return "list";
	}
	return "?";
}

int mk_term_param_index(const mk_pattern_def *def, const char *name)
{
	if (!def || !name)
		return -1;
	for (size_t k = 0; k < def->info.nparams; k++)
		if (strcmp(def->info.params[k].name, name) == 0)
			return (int)k;
	return -1;
}

/* One integer of a default; *end is left after it.  Defaults are written by
 * us, so a malformed one is a bug (MK_EINTERNAL), not a user error. */
static int registry_parse_int(const char *s, const char **end, int64_t *out)
{
	char *e;
	long long v;
	errno = 0;
	v = strtoll(s, &e, 10);
	if (errno || e == s)
		return MK_EINTERNAL;
	*end = e;
	*out = (int64_t)v;
	return MK_OK;
}

static int registry_parse_list(const char *s, mk_pval *v)
{
	size_t cap = 1;
	const char *end;
	for (const char *c = s; *c; c++)
		cap += *c == ',';
	v->list = calloc(cap, sizeof *v->list);
	if (!v->list)
		return mk_error_set(MK_ENOMEM, "out of memory for a parameter list");
	while (*s) {
		if (registry_parse_int(s, &end, &v->list[v->len]))
			return MK_EINTERNAL;
		v->len++;
		s = end;
		if (*s == ',')
			s++;
		else if (*s)
			return MK_EINTERNAL;
	}
	return MK_OK;
}

static int registry_parse_default(const mk_param_info *pi, mk_pval *v)
{
	const char *s = pi->def ? pi->def : "";
	const char *end;
	if (pi->kind == MK_PARAM_LIST)
		return registry_parse_list(s, v);
	if (!*s)
		return MK_OK;
	if (registry_parse_int(s, &end, &v->i) || *end)
		return MK_EINTERNAL;
	if (pi->kind == MK_PARAM_BOOL && v->i != 0 && v->i != 1)
		return MK_EINTERNAL;
	return MK_OK;
}

int mk_term_init(mk_term *t, const mk_pattern_def *def)
{
	int ret;
	memset(t, 0, sizeof *t);
	t->def = def;
	t->block = 1;
	if (def->info.nparams > MK_MAX_PARAMS)
		return mk_error_set(MK_EINTERNAL, "pattern '%s' has too many parameters",
				    def->info.name);
	for (size_t k = 0; k < def->info.nparams; k++) {
		const mk_param_info *pi = &def->info.params[k];
		ret = registry_parse_default(pi, &t->p[k]);
		if (ret == MK_EINTERNAL)
			mk_error_set(ret, "bad default '%s' for parameter '%s' of '%s'",
				     pi->def ? pi->def : "", pi->name, def->info.name);
		if (ret) {
			mk_term_release(t);
			return ret;
		}
	}
	return MK_OK;
}

void mk_term_release(mk_term *t)
{
	if (t->def && t->def->release)
		t->def->release(t);
	for (size_t k = 0; k < MK_MAX_PARAMS; k++)
		free(t->p[k].list);
	memset(t, 0, sizeof *t);
}

/* ---- the list, described once ---------------------------------------------- */

int mk_pattern_list_get(mk_pattern_list *out)
{
	size_t np = 0, q = 0;

	memset(out, 0, sizeof *out);
	for (size_t k = 0; k < REGISTRY_LEN; k++)
		np += registry_defs[k]->info.nparams;
	out->patterns = calloc(REGISTRY_LEN, sizeof *out->patterns);
	out->params = calloc(np ? np : 1, sizeof *out->params);
	if (!out->patterns || !out->params) {
		mk_pattern_list_release(out);
		return mk_error_set(MK_ENOMEM, "out of memory for the list of patterns");
	}
	out->count = REGISTRY_LEN;
	out->nparams = np;
	for (size_t k = 0; k < REGISTRY_LEN; k++) {
		const mk_pattern_info *in = &registry_defs[k]->info;
		out->patterns[k] = (mk_pattern_row){.name = in->name, .summary = in->summary,
						    .shorthand = in->shorthand,
						    .params = out->params + q,
						    .nparams = (int64_t)in->nparams};
		for (size_t m = 0; m < in->nparams; m++, q++) {
			const mk_param_info *pi = &in->params[m];
			out->params[q] = (mk_pattern_param_row){
				.pattern = in->name, .name = pi->name,
				.kind = mk_param_kind_name(pi->kind), .def = pi->def ? pi->def : "",
				.doc = pi->doc};
		}
	}
	return MK_OK;
}

void mk_pattern_list_release(mk_pattern_list *l)
{
	if (!l)
		return;
	free(l->patterns);
	free(l->params);
	memset(l, 0, sizeof *l);
}

static void registry_show_shorthand(const void *rec, char *buf, size_t cap)
{
	const mk_pattern_row *p = rec;
	snprintf(buf, cap, "%s<K>: %s=K", p->name, p->shorthand);
}

static void registry_show_default(const void *rec, char *buf, size_t cap)
{
	const char *def = ((const mk_pattern_param_row *)rec)->def;
	snprintf(buf, cap, "%s", *def ? def : "(none)");
}

static const mk_field registry_param_fields[] = {
	{MK_FIELD(mk_pattern_param_row, pattern, "pattern", MK_FT_STR), .flags = MK_FF_TEXT},
	{MK_FIELD(mk_pattern_param_row, name, "name", MK_FT_STR), .label = "parameter"},
	{MK_FIELD(mk_pattern_param_row, kind, "kind", MK_FT_STR), .help = "int, bool or list"},
	{MK_FIELD(mk_pattern_param_row, def, "default", MK_FT_STR),
	 .show = registry_show_default, .help = "as text; empty when required"},
	{MK_FIELD(mk_pattern_param_row, doc, "doc", MK_FT_STR), .label = "description"},
};
const mk_record mk_pattern_param_record =
	MK_RECORD("pattern_param", mk_pattern_param_row, registry_param_fields);

static const mk_field registry_fields[] = {
	{MK_FIELD(mk_pattern_row, name, "name", MK_FT_STR), .label = "pattern"},
	{MK_FIELD(mk_pattern_row, shorthand, "shorthand_text", MK_FT_STR), .label = "shorthand",
	 .flags = MK_FF_TEXT, .show = registry_show_shorthand},
	{MK_FIELD(mk_pattern_row, summary, "summary", MK_FT_STR), .label = "definition"},
	{MK_FIELD(mk_pattern_row, shorthand, "shorthand", MK_FT_STR),
	 .flags = MK_FF_OMIT | MK_FF_NOTEXT,
	 .help = "the parameter a numeric suffix sets (local2 = local(w=2))"},
	{MK_FIELD(mk_pattern_row, params, "params", MK_FT_LIST), .sub = &mk_pattern_param_record,
	 .count_offset = offsetof(mk_pattern_row, nparams)},
};
const mk_record mk_pattern_record = MK_RECORD("pattern", mk_pattern_row, registry_fields);
