/*
 * maskkit compose: combines masks (files or expressions) with OR, AND or
 * AND-NOT, left to right, and writes the result as gen does; with
 * --heads-file, each head's expression is the first operand and the heads'
 * masks are written as one HDF5 stack.
 */
#include "config.h"
#include <getopt.h>
#include <string.h>
#include "cli.h"

enum { COMPOSE_OPT_HEADS = 512 };

struct compose_opts {
	int op;
	const char *heads; /* --heads-file */
};

static int compose_option(int opt, const char *s, void *ctx)
{
	struct compose_opts *c = ctx;
	if (opt == COMPOSE_OPT_HEADS) {
		c->heads = s;
		return MK_OK;
	}
	if (!strcmp(s, "or"))
		c->op = MK_OP_OR;
	else if (!strcmp(s, "and"))
		c->op = MK_OP_AND;
	else if (!strcmp(s, "minus") || !strcmp(s, "andnot"))
		c->op = MK_OP_ANDNOT;
	else
		return mk_error_set(MK_EINVAL, "unknown --op '%s' (use or, and or minus)", s);
	return MK_OK;
}

/* Joins the operands left to right: ((a op b) op c) ... */
static int compose_build(int op, char **args, int nargs, mk_expr **out)
{
	mk_expr *acc = NULL, *next = NULL;
	int ret;
	*out = NULL;
	if ((ret = cli_operand(args[0], &acc)))
		return ret;
	for (int k = 1; k < nargs; k++) {
		if ((ret = cli_operand(args[k], &next))) {
			mk_expr_free(acc);
			return ret;
		}
		if ((ret = mk_expr_join(op, acc, next, &acc)))
			return ret;
	}
	*out = acc;
	return MK_OK;
}

static int compose_run(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_MASK_LONGOPTS, {"op", required_argument, NULL, CLI_OPT_OP},
		{"heads-file", required_argument, NULL, COMPOSE_OPT_HEADS}, {NULL, 0, NULL, 0}};
	struct compose_opts c = {.op = MK_OP_OR};
	cli_mask_opts o;
	mk_expr *e = NULL;
	int ret;
	cli_mask_defaults(&o);
	if ((ret = cli_parse(&mk_cmd_compose, argc, argv, longopts, &o, compose_option, &c)) >= 0)
		return ret;
	if (c.heads)
		return cli_heads_emit(c.heads, c.op, argv + optind, argc - optind, &o);
	if (argc - optind < 1)
		return cli_usage(&mk_cmd_compose, "give at least one mask");
	if ((ret = compose_build(c.op, argv + optind, argc - optind, &e)) ||
	    (ret = mk_expr_bind(e, &o.bind))) {
		mk_expr_free(e);
		return cli_fail(ret);
	}
	ret = cli_emit(e, &o);
	mk_expr_free(e);
	return ret;
}

const struct mk_cmd mk_cmd_compose = {
	.name = "compose",
	.summary = "combine masks with OR, AND or AND-NOT",
	.run = compose_run,
	.usage =
"usage: maskkit compose MASK... [--op or|and|minus] [-o FILE] [options]\n"
"       maskkit compose --heads-file H.json [MASK...] [--op OP] [-o FILE.h5]\n"
"\n"
"Combines the masks left to right: ((M1 op M2) op M3) ...  Each MASK is a\n"
"mask file (.json .h5 .npy .txt, or any existing file) or an expression as in\n"
"'maskkit gen'.  All masks must have the same n; expressions take n from\n"
"--n or from the files.  The result is written as 'maskkit gen' writes it.\n"
"\n"
"options:\n"
"      --op OP          or (default), and, minus (AND-NOT: M1 without M2 ...)\n"
"      --heads-file H   one mask per head: head k's mask is\n"
"                       ((H_k op MASK1) op MASK2) ..., where H_k is its\n"
"                       expression in H, written as 'maskkit gen --heads-file'\n"
"                       writes them (see 'maskkit gen --help'); e.g.\n"
"                       --heads-file H.json causal --op and: every head causal\n"
"  -n, --n N            sequence length for expression operands\n"
"      --seed S         seed for random terms without seed= (default 0)\n"
"  -o, --output FILE    write to FILE (atomically)\n"
"      --format F       txt, json, png, h5, npy or blocks\n"
"      --block B        block size of the blocks format (default 128)\n"
"      --max-memory S   limit for materialised data (default 4G)\n"
"      --progress       report progress on stderr\n"
"  -h, --help           this help\n"
"\n"
"exit status: 0 success, 2 bad input, 1 internal or system error.\n",
};
