/*
 * maskkit attn-derive: what other commands need, read off a model's
 * attention probabilities (`maskkit encode` output): the mean map per head
 * (for `maskkit prune`, as SparseBERT prunes DAM's importance) and AAA-style
 * row and column indicators (for `maskkit axis`).
 */
#define _GNU_SOURCE /* realpath */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

typedef struct ad_opts {
	mk_dataset_opts d;
	const char *mean_map, *indicators, *png;
	int64_t size, layer;
	double col_factor, row_entropy;
	bool json;
} ad_opts;

static const struct cli_opt ad_table[] = {
	CLI_OPT_STRING("dataset", 0, ad_opts, d.dataset, "PATH",
		       "the probabilities (default as attn-stats finds them); FILE.h5:/PATH too"),
	CLI_OPT_WRITE("mean-map", 0, ad_opts, mean_map, "OUT.h5",
		     "write the mean map of each layer as dataset layer_L [heads, M, M]"),
	CLI_OPT_INT("size", 0, ad_opts, size, "M", 1, MK_N_MAX, NULL,
		    "the mean map's size (default: the median sample length)"),
	CLI_OPT_WRITE("png", 0, ad_opts, png, "FILE.png",
		     "heatmaps of the mean map of --layer's heads (colours: 1st to 99th "
		     "percentile of each head)"),
	CLI_OPT_INT("layer", 0, ad_opts, layer, "L", 0, 100000, "0",
		    "the layer --png draws (0-based)"),
	CLI_OPT_WRITE("indicators", 0, ad_opts, indicators, "OUT.h5",
		     "write row and column indicators 'rows', 'cols' [samples, layers, heads, N] "
		     "(float32 0/1) for maskkit axis"),
	CLI_OPT_DOUBLE("col-factor", 0, ad_opts, col_factor, "F", 0, 1e9, CLI_LO_OPEN, "2",
		       "a column is important when it receives F times a uniform share"),
	CLI_OPT_DOUBLE("row-entropy", 0, ad_opts, row_entropy, "R", 0, 1, 0, "0.9",
		       "a row is important when its entropy is at least R ln N_i"),
	CLI_OPT_SIZE("max-memory", 0, ad_opts, d.max_memory, "SIZE", "4G",
		     "limit for what is held in memory"),
	CLI_OPT_FLAG("json", 0, ad_opts, json, "machine-readable summary"),
	CLI_OPT_END,
};

/* path with its folder resolved (the file need not exist yet). */
static void ad_canon(const char *path, char *buf, size_t size)
{
	const char *slash = strrchr(path, '/');
	char dir[4096], *real;

	snprintf(dir, sizeof dir, "%.*s", slash ? (slash == path ? 1 : (int)(slash - path)) : 1,
		 slash ? path : ".");
	real = realpath(dir, NULL);
	snprintf(buf, size, "%s/%s", real ? real : dir, slash ? slash + 1 : path);
	free(real);
}

/* The outputs replace whole files: never each other (the parser keeps them
 * off the input). */
static int ad_check_outputs(const ad_opts *o)
{
	const char *outs[3] = {o->mean_map, o->indicators, o->png};
	static const char *const opts[3] = {"--mean-map", "--indicators", "--png"};
	char ca[8192], cb[8192];

	for (int k = 0; k < 3; k++)
		for (int x = 0; x < k && outs[k]; x++) {
			if (!outs[x])
				continue;
			ad_canon(outs[k], ca, sizeof ca);
			ad_canon(outs[x], cb, sizeof cb);
			if (!strcmp(ca, cb))
				return mk_error_set(MK_EINVAL, "%s '%s' and %s '%s' name the same file",
						    opts[x], outs[x], opts[k], outs[k]);
		}
	return MK_OK;
}

static int ad_exec(void *opts, const cli_args *a)
{
	ad_opts *o = opts;
	const struct mk_cmd *c = &mk_cmd_attn_derive;
	mk_attn_derive_opts ao = {.d = o->d, .mean_map = o->mean_map, .size = o->size,
				  .png = o->png, .layer = o->layer, .indicators = o->indicators,
				  .col_factor = o->col_factor, .row_entropy = o->row_entropy,
				  .progress = cli_progress};
	mk_attn_derive r;
	int ret;

	if (a->argc != 1)
		return cli_usage_error(c, a->argc ? "one FILE.h5 at a time" : "missing FILE.h5");
	if (!o->mean_map && !o->indicators)
		return cli_usage_error(c, "nothing to do: give --mean-map, --indicators or both");
	if ((cli_given(a, "size") || o->png || cli_given(a, "layer")) && !o->mean_map)
		return cli_usage_error(c, "--size, --png and --layer are the mean map's: give "
				       "--mean-map");
	if ((ret = ad_check_outputs(o)) || (ret = mk_attn_derive_run(a->argv[0], &ao, &r)))
		return ret;
	return o->json ? mk_emit(stdout, MK_EMIT_JSON, &mk_attn_derive_record, &r, 1, 0) : MK_OK;
}

const struct mk_cmd mk_cmd_attn_derive = {
	.name = "attn-derive",
	.summary = "mean attention maps and AAA-style indicators from attention probabilities",
	.synopsis = "FILE.h5 [--mean-map OUT.h5 [--size M] [--png FILE.png [--layer L]]]\n"
		    " [--indicators OUT.h5 [--col-factor F] [--row-entropy R]] [--json]",
	.opts = ad_table,
	.opts_size = sizeof(ad_opts),
	.exec = ad_exec,
	.description =
"Reads attention probabilities [samples, layers, heads, N, N] and each\n"
"sample's length N_i (as attn-stats does: e.g. `maskkit encode` output) and\n"
"writes what other commands take as input:\n"
"  --mean-map   per layer L the dataset layer_L [heads, M, M]: the mean of\n"
"               P over the samples at least M tokens long, on their leading\n"
"               M x M block.  One importance matrix per head for all inputs,\n"
"               as SparseBERT's DAM learns one mask per head: `maskkit prune\n"
"               OUT.h5:/layer_0 --sparsity 0.9 -o mask.h5` prunes it.\n"
"  --indicators 'rows' and 'cols' [samples, layers, heads, N] (0/1, 0 past\n"
"               N_i), the inputs of `maskkit axis`: token k is column-wise\n"
"               important when the attention it receives, averaged over the\n"
"               real queries, is at least F / N_i (F times a uniform share: a\n"
"               key most queries look at, such as [CLS], [SEP] or a full\n"
"               stop); token j is row-wise important when its attention row\n"
"               has entropy at least R ln N_i (a query that looks almost\n"
"               everywhere).  Adaptive Axis Attention learns its indicators;\n"
"               these are read off a trained model's attention instead.\n",
	.notes =
"Each output is written to a temporary file and renamed when complete.\n"
"Sums are in double; results do not depend on the number of threads.\n",
	.examples =
"  maskkit encode MODEL --text t.txt -o attn.h5\n"
"  maskkit attn-derive attn.h5 --mean-map mean.h5 --indicators ind.h5\n"
"  maskkit prune mean.h5:/layer_0 --sparsity 0.9 -o dam.h5\n"
"  maskkit axis ind.h5 --lengths-file attn.h5 --json\n",
};
