/*
 * maskkit gen: builds the mask an expression names, at a given n, and writes
 * it as text, JSON, PNG, HDF5, .npy or a block layout; with --heads-file,
 * one mask per head (and layer) written as one HDF5 dataset.
 */
#include "config.h"
#include <stdlib.h>
#include "cli.h"

typedef struct gen_opts {
	cli_mask_opts m; /* first: cli_mask_opt_n and cli_mask_opt_format need it */
	const char *heads;
} gen_opts;

static const struct cli_opt gen_table[] = {
	CLI_OPT_CALL("n", 'n', cli_mask_opt_n, "N", NULL,
		     "sequence length (1 .. 1048576); taken from mask files in EXPR when omitted"),
	CLI_MASK_RECT_OPTS,
	CLI_OPT_UINT("seed", 0, gen_opts, m.bind.seed, "SEED", "0",
		     "seed for random terms without seed="),
	CLI_OPT_WRITE("output", 'o', gen_opts, m.out, "FILE",
		     "write to FILE (atomically: an existing FILE is replaced only when writing "
		     "succeeds)"),
	CLI_OPT_CALL("format", 0, cli_mask_opt_format, "F", NULL,
		     "txt, json, png, h5, npy, blocks, flex or flex-py (default: from FILE's "
		     "extension)"),
	CLI_OPT_INT("block", 0, gen_opts, m.block, "B", 1, MK_N_MAX, "128",
		    "block size of the blocks and flex formats"),
	CLI_OPT_FLAG("json", 0, gen_opts, m.json,
		     "print a JSON summary (expr, n, count = |M|, sparsity, output) instead of "
		     "the mask; with -o, after writing FILE"),
	CLI_OPT_SIZE("max-memory", 0, gen_opts, m.bind.max_memory, "SIZE", "4G",
		     "limit for materialised data, e.g. 512M; dense outputs (txt, npy, h5) count "
		     "against it"),
	CLI_OPT_FLAG("progress", 0, gen_opts, m.progress,
		     "report progress on stderr (default: when a terminal)"),
	CLI_OPT_READ("heads-file", 0, gen_opts, heads, "FILE",
		     "one mask per head: FILE is a JSON list of expressions, [\"local2\", "
		     "\"global1+random2\", ...], or a list of such lists, one per layer, all of "
		     "one length; see below"),
	CLI_OPT_END,
};

static int gen_exec(void *opts, const cli_args *a)
{
	gen_opts *o = opts;
	mk_expr *e = NULL;
	int ret;

	if ((ret = cli_mask_check(&mk_cmd_gen, &o->m)))
		return ret;
	if (o->heads && a->argc > 0)
		return cli_usage_error(&mk_cmd_gen, "give EXPR or --heads-file, not both");
	if (o->heads)
		return cli_heads_emit(o->heads, MK_OP_OR, NULL, 0, &o->m);
	if (a->argc != 1)
		return cli_usage_error(&mk_cmd_gen, a->argc < 1 ? "missing EXPR"
							     : "give exactly one EXPR (quote it)");
	if ((ret = cli_operand(a->argv[0], &e)) == MK_OK &&
	    (ret = mk_expr_bind(e, &o->m.bind)) == MK_OK)
		ret = cli_emit(e, &o->m);
	mk_expr_free(e);
	return ret;
}

const struct mk_cmd mk_cmd_gen = {
	.name = "gen",
	.summary = "build a mask from an expression and write it",
	.synopsis = "EXPR --n N [-o FILE] [--format F] [options]\n"
		    "--heads-file FILE --n N [-o FILE.h5|FILE.npz] [options]",
	.opts = gen_table,
	.opts_size = sizeof(gen_opts),
	.init = cli_mask_init,
	.exec = gen_exec,
	.description =
"Builds the n x n mask named by EXPR (row i = query, column j = key) and\n"
"writes it.  The format comes from FILE's extension unless --format is given.\n"
"Without -o, a mask with n <= 64 prints as text ('#' attends, '.' does not);\n"
"a larger one prints a one-line summary.  With --json, a JSON object\n"
"describes the mask instead (expr, params, n, seed, count = |M|, sparsity,\n"
"and output and format: -o's, or null).\n"
"\n"
"EXPR is a pattern ('maskkit patterns'), a mask file (.json .h5 .npy .txt;\n"
"a .npz layout gives the cells of its non-empty blocks), or a combination:\n"
"'+' OR, '&' AND, '-' AND-NOT, '~' NOT, parentheses; e.g.\n"
"  local2+global1+random1   strided-diag   '(local3+global1)&causal'\n"
"  bigbird(w=1,r=2,g=2,block=16)   axis(rows=0,cols=0,7)\n",
	.notes =
"formats: txt '#'/'.' rows; json {n, expr, params, seed, rows: [[cols]...]};\n"
"png heatmap (cells for small n, density-shaded beyond 1024); h5 dataset\n"
"'mask' (uint8 n x n) with attributes expr, seed, sparsity; npy numpy bool;\n"
"blocks FlexAttention-style layout (kv_num_blocks, kv_indices, full_*) as JSON;\n"
"flex (.npz) the same as the int32 arrays of BlockMask.from_kv_blocks;\n"
"flex-py (.py) FlexAttention's mask_mod as Python source needing only torch:\n"
"index arithmetic on q_idx and kv_idx (small tables for random keys, chosen\n"
"tokens, documents), with make_mask_mod(device) and block_mask(block_size).\n"
"\n"
"--heads-file: mask k = layer * heads + head (heads and layers numbered from\n"
"0) is built from its expression at n with seed S + k, where S is --seed, so\n"
"random terms without seed= differ between heads and mask k is what\n"
"'maskkit gen EXPR_k --seed S+k' gives.  With -o FILE.h5 the masks are\n"
"written as one uint8 dataset 'mask' of shape [heads, n, n] (flat list) or\n"
"[layers, heads, n, n] (list of lists), with attributes expr (the\n"
"expressions as a JSON list), n, layers, heads, count (all masks) and\n"
"sparsity (the mean over masks); with -o FILE.npz (--format flex; a flat\n"
"list only), as one block layout with H = heads.  Without -o: |M| and\n"
"sparsity per head; with --json, as a JSON object (heads_file, layers (0: a\n"
"flat list), heads, n, count, sparsity, output, and masks: one object per\n"
"head).\n",
	.examples =
"  maskkit gen local2 --n 8\n"
"  maskkit gen 'bigbird(w=1,r=2,g=2,block=16)' --n 4096 --seed 7 -o bigbird.npy --json\n"
"  maskkit gen --heads-file heads.json --n 512 -o stack.h5\n"
"  maskkit gen '(local128+global4)&causal' --n 16384 -o mask_mod.py\n",
};
