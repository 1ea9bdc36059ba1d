/*
 * maskkit explain: the "explaining away" statistics of softmax against
 * doubly-normalised attention (Ding et al.), on real or random Q/K, and the
 * paper's toy models (--toy, cmd_explain_toy.c).
 */
#include "config.h"
#include <string.h>
#include "cli.h"
#include "cmd_explain.h"

static bool explain_wants_toy(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			return false;
		if (!strcmp(argv[i], "--toy") || !strncmp(argv[i], "--toy=", 6))
			return true;
	}
	return false;
}

static int explain_run(int argc, char **argv)
{
	if (explain_wants_toy(argc, argv))
		return explain_toy_main(argc, argv);
	return cli_fail(mk_error_set(MK_EINVAL, "explain: not written yet"));
}

const struct mk_cmd mk_cmd_explain = {
	.name = "explain",
	.summary = "explaining away: column sums of softmax vs doubly-normalised attention",
	.usage =
"usage: maskkit explain INPUT [options]\n"
"\n"
EXPLAIN_TOY_USAGE,
	.run = explain_run,
};
