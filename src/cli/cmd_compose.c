/*
 * maskkit compose: combines masks (files or expressions) with OR, AND or
 * AND-NOT, left to right, and writes the result as gen does; with
 * --heads-file, each head's expression is the first operand and the heads'
 * masks are written as one HDF5 stack.
 */
#include "config.h"
#include "cli.h"

typedef struct compose_opts {
	cli_mask_opts m; /* first: cli_mask_opt_n and cli_mask_opt_format need it */
	int op;
	const char *heads; /* --heads-file */
} compose_opts;

/* "andnot": another name of minus */
static const char *const compose_ops[] = {"or", "and", "minus", "andnot", NULL};
static const int compose_op_values[] = {MK_OP_OR, MK_OP_AND, MK_OP_ANDNOT, MK_OP_ANDNOT};

static const struct cli_opt compose_table[] = {
	CLI_OPT_ENUM("op", 0, compose_opts, op, "OP", compose_ops, compose_op_values, "or",
		     "or, and, minus (AND-NOT: M1 without M2 ...)"),
	CLI_OPT_READ("heads-file", 0, compose_opts, heads, "FILE",
		     "one mask per head: head k's mask is ((H_k op MASK1) op MASK2) ..., where "
		     "H_k is its expression in FILE (see below)"),
	CLI_OPT_CALL("n", 'n', cli_mask_opt_n, "N", NULL,
		     "sequence length for expression operands"),
	CLI_MASK_RECT_OPTS,
	CLI_OPT_UINT("seed", 0, compose_opts, m.bind.seed, "SEED", "0",
		     "seed for random terms without seed="),
	CLI_OPT_WRITE("output", 'o', compose_opts, m.out, "FILE", "write to FILE (atomically)"),
	CLI_OPT_CALL("format", 0, cli_mask_opt_format, "F", NULL,
		     "txt, json, png, h5, npy, blocks, flex or flex-py (default: from FILE's "
		     "extension)"),
	CLI_OPT_INT("block", 0, compose_opts, m.block, "B", 1, MK_N_MAX, "128",
		    "block size of the blocks and flex formats"),
	CLI_OPT_FLAG("json", 0, compose_opts, m.json,
		     "print the result's summary as JSON (as 'maskkit gen --json' does) instead "
		     "of the mask"),
	CLI_OPT_SIZE("max-memory", 0, compose_opts, m.bind.max_memory, "SIZE", "4G",
		     "limit for materialised data"),
	CLI_OPT_FLAG("progress", 0, compose_opts, m.progress, "report progress on stderr"),
	CLI_OPT_END,
};

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

static int compose_exec(void *opts, const cli_args *a)
{
	compose_opts *o = opts;
	mk_expr *e = NULL;
	int ret;

	if ((ret = cli_mask_check(&mk_cmd_compose, &o->m)))
		return ret;
	if (o->heads)
		return cli_heads_emit(o->heads, o->op, a->argv, a->argc, &o->m);
	if (a->argc < 1)
		return cli_usage_error(&mk_cmd_compose, "give at least one mask");
	if ((ret = compose_build(o->op, a->argv, a->argc, &e)) == MK_OK &&
	    (ret = mk_expr_bind(e, &o->m.bind)) == MK_OK)
		ret = cli_emit(e, &o->m);
	mk_expr_free(e);
	return ret;
}

const struct mk_cmd mk_cmd_compose = {
	.name = "compose",
	.summary = "combine masks with OR, AND or AND-NOT",
	.synopsis = "MASK... [--op or|and|minus] [-o FILE] [options]\n"
		    "--heads-file FILE [MASK...] [--op OP] [-o FILE.h5|FILE.npz]",
	.opts = compose_table,
	.opts_size = sizeof(compose_opts),
	.init = cli_mask_init,
	.exec = compose_exec,
	.description =
"Combines the masks left to right: ((M1 op M2) op M3) ...  Each MASK is a\n"
"mask file (.json .h5 .npy .txt, or any existing file) or an expression as in\n"
"'maskkit gen'.  All masks must have the same n; expressions take n from\n"
"--n or from the files.  The result is written as 'maskkit gen' writes it,\n"
"and --json describes it as 'maskkit gen --json' does.\n",
	.notes =
"--heads-file H: head k's mask is ((H_k op MASK1) op MASK2) ..., where H_k is\n"
"its expression in H, written as 'maskkit gen --heads-file' writes them (see\n"
"'maskkit gen --help'); e.g. --heads-file H.json causal --op and: every head\n"
"causal.  --op andnot is another name of minus.\n",
	.examples =
"  maskkit compose 'local(w=3)' global1 --n 16\n"
"  maskkit compose bigbird causal --op and --n 1024 -o causal_bigbird.npy --json\n"
"  maskkit compose --heads-file heads.json causal --op and --n 512 -o stack.h5\n",
};
