/* maskkit patterns: the registered patterns, their parameters and definitions. */
#include "config.h"
#include <cJSON.h>
#include <getopt.h>
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
			printf("%-11s   %-8s %-5s default %-6s %s\n", "", q->name, q->kind,
			       q->def && *q->def ? q->def : "(none)", q->doc);
		}
	}
}

static void patterns_json(void)
{
	cJSON *all = cJSON_CreateArray();
	char *s;
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
			cJSON_AddStringToObject(q, "kind", p->params[m].kind);
			cJSON_AddStringToObject(q, "default", p->params[m].def ? p->params[m].def : "");
			cJSON_AddStringToObject(q, "doc", p->params[m].doc);
			cJSON_AddItemToArray(params, q);
		}
		cJSON_AddItemToArray(all, o);
	}
	s = cJSON_Print(all);
	puts(s);
	free(s);
	cJSON_Delete(all);
}

static int patterns_run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"json", no_argument, NULL, CLI_OPT_JSON}, {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}};
	bool json = false;
	int opt;
	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		if (opt == 'h') {
			cli_help(&mk_cmd_patterns);
			return MK_EXIT_OK;
		}
		if (opt != CLI_OPT_JSON)
			return cli_bad_option(&mk_cmd_patterns, argv, opt);
		json = true;
	}
	if (optind < argc)
		return cli_usage(&mk_cmd_patterns, "unexpected argument '%s'", argv[optind]);
	if (json)
		patterns_json();
	else
		patterns_text();
	return MK_EXIT_OK;
}

const struct mk_cmd mk_cmd_patterns = {
	.name = "patterns",
	.summary = "list the patterns with their parameters and definitions",
	.run = patterns_run,
	.usage =
"usage: maskkit patterns [--json]\n"
"\n"
"Lists every pattern of the expression language: its one-line definition,\n"
"its parameters with defaults, and its numeric shorthand (local2 = local(w=2)).\n"
"\n"
"options:\n"
"      --json     machine-readable list\n"
"  -h, --help     this help\n",
};
