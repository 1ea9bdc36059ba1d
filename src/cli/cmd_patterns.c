/* maskkit patterns: the registered patterns, their parameters and definitions. */
#include "config.h"
#include "cli.h"

typedef struct patterns_opts {
	bool json;
} patterns_opts;

static const struct cli_opt patterns_table[] = {
	CLI_OPT_FLAG("json", 0, patterns_opts, json,
		     "machine-readable list: [{name, summary, shorthand, params: [{name, kind, "
		     "default, doc}]}]"),
	CLI_OPT_END,
};

static int patterns_exec(void *opts, const cli_args *a)
{
	patterns_opts *o = opts;
	mk_pattern_list l;
	int ret;

	if (a->argc > 0)
		return cli_usage_error(&mk_cmd_patterns, "unexpected argument '%s'", a->argv[0]);
	if ((ret = mk_pattern_list_get(&l)))
		return ret;
	if (o->json) {
		ret = mk_emit(stdout, MK_EMIT_JSON, &mk_pattern_record, l.patterns, l.count, 0);
		goto out;
	}
	printf("Patterns (i = query, j = key, d = |i - j|). Every pattern also takes block=B:\n"
	       "it is laid out on the grid of B x B blocks and each block expanded.\n\n");
	/* the patterns, then all their parameters: two tables */
	if (!(ret = mk_emit(stdout, MK_EMIT_TABLE, &mk_pattern_record, l.patterns, l.count, 0)))
		printf("\n");
	if (!ret)
		ret = mk_emit(stdout, MK_EMIT_TABLE, &mk_pattern_param_record, l.params, l.nparams, 0);
out:
	mk_pattern_list_release(&l);
	return ret;
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
