/* maskkit patterns: the registered patterns, their parameters and definitions. */
#include "config.h"
#include <cJSON.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

static void patterns_text(void)
{
	printf("Patterns (i = query, j = key, d = |i - j|). Every pattern also takes block=B:\n"
	       "it is laid out on the grid of B x B blocks and each block expanded.\n\n");
	for (size_t k = 0; k < mk_pattern_count(); k++) {
		const mk_pattern_info *p = mk_pattern_get(k);
		printf("%-11s %s\n", p->name, p->summary);
		if (p->shorthand)
			printf("%-11s shorthand: %s<K> sets %s=K\n", "", p->name, p->shorthand);
		for (size_t m = 0; m < p->nparams; m++) {
			const mk_param_info *q = &p->params[m];
			printf("%-11s   %-8s %-5s default %-6s %s\n", "", q->name, mk_param_kind_name(q->kind),
			       q->def && *q->def ? q->def : "(none)", q->doc);
		}
	}
}

typedef struct patterns_opts {
	bool json;
} patterns_opts;

static const struct cli_opt patterns_table[] = {
	CLI_OPT_FLAG("json", 0, patterns_opts, json,
		     "machine-readable list: [{name, summary, shorthand, params: [{name, kind, "
		     "default, doc}]}]"),
	CLI_OPT_END,
};

static int patterns_json(void)
{
	cJSON *all = cJSON_CreateArray();
	for (size_t k = 0; k < mk_pattern_count(); k++) {
		const mk_pattern_info *p = mk_pattern_get(k);
		cJSON *o = cJSON_CreateObject(), *params = NULL;
		cJSON_AddStringToObject(o, "name", p->name);
		cJSON_AddStringToObject(o, "summary", p->summary);
		if (p->shorthand)
			cJSON_AddStringToObject(o, "shorthand", p->shorthand);
		params = cJSON_AddArrayToObject(o, "params");
		for (size_t m = 0; m < p->nparams; m++) {
			cJSON *q = cJSON_CreateObject();
			cJSON_AddStringToObject(q, "name", p->params[m].name);
			cJSON_AddStringToObject(q, "kind", mk_param_kind_name(p->params[m].kind));
			cJSON_AddStringToObject(q, "default", p->params[m].def ? p->params[m].def : "");
			cJSON_AddStringToObject(q, "doc", p->params[m].doc);
			cJSON_AddItemToArray(params, q);
		}
		cJSON_AddItemToArray(all, o);
	}
	return cli_json_out(all);
}

static int patterns_exec(void *opts, const cli_args *a)
{
	patterns_opts *o = opts;

	if (a->argc > 0)
		return cli_usage_error(&mk_cmd_patterns, "unexpected argument '%s'", a->argv[0]);
	if (o->json)
		return patterns_json();
	patterns_text();
	return MK_OK;
}

const struct mk_cmd mk_cmd_patterns = {
	.name = "patterns",
	.summary = "list the patterns with their parameters and definitions",
	.synopsis = "[--json]",
	.opts = patterns_table,
	.opts_size = sizeof(patterns_opts),
	.exec = patterns_exec,
	.description =
"Lists every pattern of the expression language: its one-line definition,\n"
"its parameters with defaults, and its numeric shorthand (local2 = local(w=2)).\n",
	.examples =
"  maskkit patterns\n"
"  maskkit patterns --json\n",
};
