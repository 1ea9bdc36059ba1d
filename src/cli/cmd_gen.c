/*
 * maskkit gen: builds the mask an expression names, at a given n, and writes
 * it as text, JSON, PNG, HDF5, .npy or a block layout; with --heads-file,
 * one mask per head (and layer) written as one HDF5 dataset.
 */
#include "config.h"
#include <getopt.h>
#include <stdlib.h>
#include "cli.h"

enum { GEN_OPT_HEADS = 512 };

static int gen_option(int opt, const char *arg, void *ctx)
{
	if (opt != GEN_OPT_HEADS)
		return MK_EINVAL;
	*(const char **)ctx = arg;
	return MK_OK;
}

static int gen_run(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_MASK_LONGOPTS, {"heads-file", required_argument, NULL, GEN_OPT_HEADS},
		{NULL, 0, NULL, 0}};
	const char *heads = NULL;
	cli_mask_opts o;
	mk_expr *e = NULL;
	int ret;
	cli_mask_defaults(&o);
	if ((ret = cli_parse(&mk_cmd_gen, argc, argv, longopts, &o, gen_option, &heads)) >= 0)
		return ret;
	if (heads && optind < argc)
		return cli_usage(&mk_cmd_gen, "give EXPR or --heads-file, not both");
	if (heads)
		return cli_heads_emit(heads, MK_OP_OR, NULL, 0, &o);
	if (optind != argc - 1)
		return cli_usage(&mk_cmd_gen, optind >= argc ? "missing EXPR"
							     : "give exactly one EXPR (quote it)");
	if ((ret = cli_operand(argv[optind], &e)) || (ret = mk_expr_bind(e, &o.bind))) {
		mk_expr_free(e);
		return cli_fail(ret);
	}
	ret = cli_emit(e, &o);
	mk_expr_free(e);
	return ret;
}

const struct mk_cmd mk_cmd_gen = {
	.name = "gen",
	.summary = "build a mask from an expression and write it",
	.run = gen_run,
	.usage =
"usage: maskkit gen EXPR --n N [-o FILE] [--format F] [options]\n"
"       maskkit gen --heads-file H.json --n N [-o FILE.h5] [options]\n"
"\n"
"Builds the n x n mask named by EXPR (row i = query, column j = key) and\n"
"writes it.  The format comes from FILE's extension unless --format is given.\n"
"Without -o, a mask with n <= 64 prints as text ('#' attends, '.' does not);\n"
"a larger one prints a one-line summary.\n"
"\n"
"EXPR is a pattern ('maskkit patterns'), a mask file (.json .h5 .npy .txt),\n"
"or a combination: '+' OR, '&' AND, '-' AND-NOT, '~' NOT, parentheses; e.g.\n"
"  local2+global1+random1   strided-diag   '(local3+global1)&causal'\n"
"  bigbird(w=1,r=2,g=2,block=16)   axis(rows=0,cols=0,7)\n"
"\n"
"options:\n"
"  -n, --n N            sequence length (1 .. 1048576); taken from mask files\n"
"                       in EXPR when omitted\n"
"      --seed S         seed for random terms without seed= (default 0)\n"
"  -o, --output FILE    write to FILE (atomically: an existing FILE is replaced\n"
"                       only when writing succeeds)\n"
"      --format F       txt, json, png, h5, npy or blocks\n"
"      --block B        block size of the blocks format (default 128)\n"
"      --max-memory S   limit for materialised data, e.g. 512M (default 4G);\n"
"                       dense outputs (txt, npy, h5) count against it\n"
"      --progress       report progress on stderr (default: when a terminal)\n"
"      --heads-file H   one mask per head: H is a JSON list of expressions,\n"
"                       [\"local2\", \"global1+random2\", ...], or a list of such\n"
"                       lists, one per layer, all of one length; see below\n"
"  -h, --help           this help\n"
"\n"
"formats: txt '#'/'.' rows; json {n, expr, params, seed, rows: [[cols]...]};\n"
"png heatmap (cells for small n, density-shaded beyond 1024); h5 dataset\n"
"'mask' (uint8 n x n) with attributes expr, seed, sparsity; npy numpy bool;\n"
"blocks FlexAttention-style layout (kv_num_blocks, kv_indices, full_*).\n"
"\n"
"--heads-file: mask k = layer * heads + head (heads and layers numbered from\n"
"0) is built from its expression at n with seed S + k, where S is --seed, so\n"
"random terms without seed= differ between heads and mask k is what\n"
"'maskkit gen EXPR_k --seed S+k' gives.  With -o FILE.h5 (HDF5 only) the\n"
"masks are written as one uint8 dataset 'mask' of shape [heads, n, n] (flat\n"
"list) or [layers, heads, n, n] (list of lists), with attributes expr (the\n"
"expressions as a JSON list), n, layers, heads, count (all masks) and\n"
"sparsity (the mean over masks).  Without -o: |M| and sparsity per head.\n"
"\n"
"exit status: 0 success, 2 bad input, 1 internal or system error.\n",
};
