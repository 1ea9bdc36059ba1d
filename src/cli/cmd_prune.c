/*
 * maskkit prune: from an importance matrix P per head to masks of a target
 * sparsity (SparseBERT's DAM_u per entry, DAM_s per diagonal, one mask per
 * level for progressive pruning), or a mask sampled from logits with the
 * Gumbel-sigmoid.  The masks go to HDF5 as [heads, n, n] or [n, n].
 */
#include "config.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

#define PRUNE_MAX_LEVELS 1000
#define PRUNE_NAME_LEN 16 /* "0.10" and a margin */

typedef struct prune_opts {
	const char *out, *input;
	double levels[PRUNE_MAX_LEVELS];
	size_t nlevels;
	char (*names)[PRUNE_NAME_LEN]; /* each level as it appears in file names */
	char **outputs;                /* one per level (one for --gumbel) */
	bool structured, no_border, gumbel, json;
	double tau;
	uint64_t seed, max_memory;
} prune_opts;

/* ---- options ------------------------------------------------------------------ */

static int prune_opt_sparsity(void *opts, const char *arg)
{
	prune_opts *o = opts;
	return cli_sparsities(arg, "--sparsity", o->levels, PRUNE_MAX_LEVELS, &o->nlevels);
}

static int prune_opt_tau(void *opts, const char *arg)
{
	prune_opts *o = opts;
	char *end;

	errno = 0;
	o->tau = strtod(arg, &end);
	if (end == arg || *end || errno || !isfinite(o->tau) || !(o->tau > 0.0))
		return mk_error_set(MK_EINVAL, "--tau must be a positive number, got '%s'", arg);
	return MK_OK;
}

static const struct cli_opt prune_table[] = {
	CLI_OPT_CALL("sparsity", 0, prune_opt_sparsity, "S",  NULL,
		     "target sparsity 1 - |M|/n^2: S, S1,S2,... or A..B[:STEP], percentages (90, "
		     "50..90:20, 90%) or fractions (0.9); each level is pruned from P (see below)"),
	CLI_OPT_WRITE("output", 'o', prune_opts, out, "FILE",
		     "the output; with several levels it must hold '{}' (see below)"),
	CLI_OPT_FLAG("structured", 0, prune_opts, structured,
		     "prune whole diagonals (DAM_s) instead of entries"),
	CLI_OPT_FLAG("no-border", 0, prune_opts, no_border,
		     "with --structured: do not keep the first and last rows and columns"),
	CLI_OPT_FLAG("gumbel", 0, prune_opts, gumbel, "sample a mask from logits instead of pruning"),
	CLI_OPT_CALL("tau", 0, prune_opt_tau, "T", "1", "Gumbel temperature T > 0 (no change to the mask: see above)"),
	CLI_OPT_UINT("seed", 0, prune_opts, seed, "SEED", "0", "Gumbel seed"),
	CLI_OPT_FLAG("json", 0, prune_opts, json, "machine-readable report"),
	CLI_OPT_SIZE("max-memory", 0, prune_opts, max_memory, "SIZE", "4G",
		     "limit for the input and the masks held"),
	CLI_OPT_END,
};

/* Option combinations that make no sense, before any work. */
static int prune_check_modes(const prune_opts *o, const cli_args *a)
{
	bool levels = cli_given(a, "sparsity");

	if (o->gumbel && (levels || o->structured))
		return cli_usage_error(&mk_cmd_prune, "--gumbel samples a mask: it takes no "
				       "--sparsity or --structured");
	if (!o->gumbel && (cli_given(a, "seed") || cli_given(a, "tau")))
		return cli_usage_error(&mk_cmd_prune, "--tau and --seed are for --gumbel");
	if (!o->gumbel && !levels)
		return cli_usage_error(&mk_cmd_prune, "missing --sparsity S (or --gumbel)");
	if (o->no_border && !o->structured)
		return cli_usage_error(&mk_cmd_prune, "--no-border is for --structured");
	if (!o->out)
		return cli_usage_error(&mk_cmd_prune, "missing -o OUT.h5");
	if (mk_format_from_path(o->out) != MK_FMT_H5)
		return cli_usage_error(&mk_cmd_prune, "-o '%s': prune writes HDF5, name it .h5",
				       o->out);
	if (a->argc < 1)
		return cli_usage_error(&mk_cmd_prune, "missing the importance file P.h5");
	if (a->argc > 1)
		return cli_usage_error(&mk_cmd_prune, "one input file at a time, got '%s' and '%s'",
				       a->argv[0], a->argv[1]);
	return MK_OK;
}

/* pattern with each '{}' replaced by level; *out is malloc'd. */
static int prune_output_name(const char *pattern, const char *level, char **out)
{
	size_t cap = strlen(pattern) * (strlen(level) + 1) + 1, used = 0;
	char *buf = malloc(cap);

	if (!(*out = buf))
		return mk_error_set(MK_ENOMEM, "out of memory");
	for (const char *c = pattern; *c;) {
		bool brace = !strncmp(c, "{}", 2);
		const char *s = brace ? level : c;
		size_t len = brace ? strlen(level) : 1;
		memcpy(buf + used, s, len);
		used += len;
		c += brace ? 2 : 1;
	}
	buf[used] = '\0';
	return MK_OK;
}

/* The output name of each level: '{}' in -o becomes the level ("0.10"). */
static int prune_name_outputs(prune_opts *o)
{
	size_t nout = o->gumbel ? 1 : o->nlevels;
	bool braces = strstr(o->out, "{}") != NULL;

	if (o->gumbel && braces)
		return cli_usage_error(&mk_cmd_prune, "'{}' in -o stands for a sparsity level; "
				       "--gumbel writes one file");
	if (nout > 1 && !braces)
		return cli_usage_error(&mk_cmd_prune, "%zu sparsity levels need '{}' in -o (as in "
				       "-o 'mask-{}.h5')", nout);
	o->names = calloc(nout, sizeof *o->names);
	o->outputs = calloc(nout, sizeof *o->outputs);
	if (!o->names || !o->outputs)
		return mk_error_set(MK_ENOMEM, "out of memory");
	for (size_t l = 0; l < nout; l++) {
		int ret;
		snprintf(o->names[l], sizeof o->names[l], "%.2f", o->gumbel ? 0.0 : o->levels[l]);
		for (size_t k = 0; k < l; k++)
			if (!strcmp(o->names[k], o->names[l]))
				return cli_usage_error(&mk_cmd_prune, "levels %g and %g would both "
						       "be written as '%s'", o->levels[k],
						       o->levels[l], o->names[l]);
		if ((ret = prune_output_name(o->out, o->names[l], &o->outputs[l])) ||
		    (ret = cli_check_output_dir(o->outputs[l])))
			return ret;
	}
	return MK_OK;
}

static void prune_opts_release(prune_opts *o)
{
	for (size_t l = 0; o->outputs && l < (o->gumbel ? 1 : o->nlevels); l++)
		free(o->outputs[l]);
	free(o->outputs);
	free(o->names);
}

static int prune_exec(void *opts, const cli_args *a)
{
	prune_opts *o = opts;
	mk_prune_report r = {0};
	mk_prune_run_opts ro = {.levels = o->levels, .nlevels = o->nlevels,
				.mode = o->structured ? MK_PRUNE_DIAGONAL : MK_PRUNE_ENTRY,
				.border = o->structured && !o->no_border, .gumbel = o->gumbel,
				.tau = o->tau, .seed = o->seed, .max_memory = o->max_memory};
	int ret;

	if ((ret = prune_check_modes(o, a)))
		return ret;
	o->input = a->argv[0];
	if ((ret = prune_name_outputs(o)))
		goto out;
	ro.outputs = (const char *const *)o->outputs;
	if ((ret = mk_prune_run(o->input, &ro, &r)))
		goto out;
	if (o->json)
		ret = mk_emit(stdout, MK_EMIT_JSON, &mk_prune_report_record, &r, 1, 0);
	else if (!(ret = mk_emit(stdout, MK_EMIT_TEXT, &mk_prune_report_record, &r, 1, 0)) &&
		 putchar('\n') != EOF)
		ret = mk_emit(stdout, MK_EMIT_TEXT, &mk_prune_level_record, r.levels,
			      (size_t)r.nlevels, MK_EMIT_NO_NOTE);
out:
	mk_prune_report_release(&r);
	prune_opts_release(o);
	return ret;
}

const struct mk_cmd mk_cmd_prune = {
	.name = "prune",
	.summary = "masks from importance matrices: top entries, top diagonals, Gumbel samples",
	.synopsis = "P.h5 --sparsity S -o OUT.h5 [--structured [--no-border]] [--json]\n"
		     "ALPHA.h5 --gumbel [--tau T] [--seed SEED] -o OUT.h5 [--json]",
	.opts = prune_table,
	.opts_size = sizeof(prune_opts),
	.exec = prune_exec,
	.description =
"Turns an importance matrix P per head (e.g. the mean attention map, or\n"
"DAM's sigmoid(alpha)) into a binary mask of a target sparsity, as SparseBERT\n"
"(Shi et al., 2021) prunes its learned masks.  P is read as a tensor: FILE.h5\n"
"(its only dataset of rank 2 to 4), FILE.h5:/path or FILE.npy, float32 or\n"
"float64, [n, n] or [heads, n, n]; NaN and Inf are refused.  The masks are\n"
"written as the uint8 dataset \"mask\" of OUT.h5: [heads, n, n] for [heads, n, n]\n"
"input, a plain [n, n] mask for [n, n] input (which `maskkit measure OUT.h5`\n"
"reads like any mask file).\n"
"\n"
"Unstructured (default, DAM_u): each head keeps the k cells of largest P, k\n"
"the integer nearest (1 - S) n^2 (a half goes to the sparser mask, also when\n"
"binary rounding of a decimal S puts it a hair above), so the sparsity is the\n"
"target to within half a cell.  Equal values are taken in index order\n"
"i*n + j (-0 equals +0): the ranking is one total order, and the masks of\n"
"several levels are nested.\n"
"\n"
"Structured (--structured, DAM_s): each diagonal offset d = j - i scores the\n"
"mean of P along it; offsets are ranked by score, ties to the smaller |d| and\n"
"then to the negative d.  Of the 2n masks keeping the m best diagonals\n"
"(m = 0..2n-1) the one with the sparsity nearest the target is written (a tie\n"
"goes to the sparser); 'diagonals' reports m.  The first and last rows and\n"
"columns are always kept, as DAM_s keeps [CLS] and [SEP]: the mask is then\n"
"Toeplitz on its interior (rows and columns 1..n-2) but usually not as a\n"
"whole, so `maskkit measure` says 'toeplitz no'.  With --no-border only the\n"
"diagonals are kept and the mask is exactly Toeplitz (measure says yes).  The\n"
"toeplitz column is checked on the written mask: yes (M[i][j] = M[i+1][j+1]\n"
"everywhere), interior (only away from the border) or no.\n"
"\n"
"Gumbel (--gumbel): reads logits alpha and samples each cell as SparseBERT's\n"
"Gumbel-sigmoid, kept when sigmoid((alpha + G1 - G2) / T) > 0.5 with G =\n"
"-log(-log U), U uniform in (0, 1).  That is alpha + G1 - G2 > 0 for any\n"
"T > 0: T scales the relaxation used in training but does not change the\n"
"thresholded mask; a cell is kept with probability sigmoid(alpha), and\n"
"'expected' is 1 - the mean of sigmoid(alpha).  The noise of head h, row i\n"
"comes from maskkit's generator keyed by (seed, h n + i), so a seed gives the\n"
"same mask on any number of threads.\n",
	.notes = CLI_SPARSITY_NOTE
"So 90, 90% and 0.9 are one level, and 10..90 (or 0.1..0.9) nine.  With\n"
"several levels -o must hold '{}', replaced by the level with two decimals\n"
"(mask-{}.h5: mask-0.10.h5, ...); levels that print alike are an error.\n"
"\n"
"Prints per level and head the achieved sparsity, the cells kept, the\n"
"diagonals kept (--structured) and whether the mask is Toeplitz.  All masks\n"
"are made before the first file is written; each file is written to a\n"
"temporary name and renamed, so a failure leaves an existing file intact.\n",
	.examples =
"  maskkit prune attn.h5:/importance --sparsity 0.9 -o dam_u.h5\n"
"  maskkit prune p.npy --structured --sparsity 50..90:20 -o 'dam_s-{}.h5' --json\n"
"  maskkit prune alpha.npy --gumbel --seed 7 -o sample.h5\n",
};
