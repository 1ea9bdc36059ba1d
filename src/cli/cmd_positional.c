/*
 * maskkit positional: the positional part of the attention scores of one
 * layer, head by head (Wennberg & Henter, 2021): how Toeplitz it is, and
 * how well the TISA kernel function f(d) = sum_s a_s exp(-|b_s| (d - c_s)^2)
 * with a handful of parameters reproduces it.
 */
#include "config.h"
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "plot.h"

typedef struct pos_opts {
	mk_positional_opts p;
	int64_t fit, columns;
	const char *png, *profile;
	bool json;
	mk_range range; /* --png's colours */
} pos_opts;

static int pos_opt_range(void *opts, const char *arg)
{
	return mk_range_parse(arg, &((pos_opts *)opts)->range);
}

static int pos_opt_layout(void *opts, const char *arg)
{
	mk_layout *out = &((pos_opts *)opts)->p.layout;

	if (!strcmp(arg, "auto"))
		*out = MK_LAYOUT_AUTO;
	else if (!strcmp(arg, "in-out") || !strcmp(arg, "tf"))
		*out = MK_LAYOUT_IN_OUT;
	else if (!strcmp(arg, "out-in") || !strcmp(arg, "torch"))
		*out = MK_LAYOUT_OUT_IN;
	else
		return mk_error_set(MK_EINVAL, "unknown --layout '%s' (use auto, in-out or out-in)",
				    arg);
	return MK_OK;
}

#define POS_ROLE(n, r, h) CLI_OPT_STRING(n, 0, pos_opts, p.dataset[r], "PATH", h)

static const struct cli_opt pos_table[] = {
	CLI_OPT_INT("layer", 0, pos_opts, p.layer, "L", 0, 100000, "0", "the layer, counted from 0"),
	CLI_OPT_INT("heads", 0, pos_opts, p.heads, "H", 1, 100000, NULL,
		    "heads (default: config.json's num_attention_heads)"),
	CLI_OPT_FLAG("no-bias", 0, pos_opts, p.no_bias, "leave the query and key biases out"),
	CLI_OPT_CALL("layout", 0, pos_opt_layout, "LAYOUT", "auto",
		     "weights stored auto (from the name: 'kernel' in-out, 'weight' out-in), "
		     "in-out (tf) or out-in (torch)"),
	POS_ROLE("position", MK_POS_POSITION, "dataset of the position embeddings"),
	POS_ROLE("word", MK_POS_WORD, "dataset of the word embeddings"),
	POS_ROLE("query", MK_POS_QUERY, "dataset of layer L's query weights"),
	POS_ROLE("key", MK_POS_KEY, "dataset of layer L's key weights"),
	POS_ROLE("query-bias", MK_POS_QUERY_BIAS, "dataset of layer L's query bias"),
	POS_ROLE("key-bias", MK_POS_KEY_BIAS, "dataset of layer L's key bias"),
	POS_ROLE("projection", MK_POS_PROJ, "dataset of the embedding projection (ALBERT)"),
	POS_ROLE("projection-bias", MK_POS_PROJ_BIAS, "dataset of the embedding projection's bias"),
	CLI_OPT_INT("fit", 0, pos_opts, fit, "S", 1, MK_TISA_MAX_KERNELS, NULL,
		    "fit S kernels (1..8) per head"),
	CLI_OPT_WRITE("png", 0, pos_opts, png, "FILE.png", "heatmaps of every head's F_P in a grid"),
	CLI_OPT_CALL("range", 0, pos_opt_range, "RANGE", MK_RANGE_DEFAULT,
		     "--png's colours: pN (N-th to (100-N)-th percentile), minmax or LO:HI"),
	CLI_OPT_INT("columns", 0, pos_opts, columns, "C", 1, 64, "4",
		    "heads per row in --png and --profile"),
	CLI_OPT_WRITE("profile", 0, pos_opts, profile, "P.png",
		     "plot (gnuplot) of every head's profile (and fit)"),
	CLI_OPT_FLAG("json", 0, pos_opts, json, "machine-readable output"),
	CLI_OPT_SIZE("max-memory", 0, pos_opts, p.max_memory, "SIZE", "4G",
		     "limit for the matrices held"),
	CLI_OPT_END,
};

/* One line on stderr naming the heads whose fit stopped at the iteration cap,
 * one naming those with trend kernels: the table alone would not show it. */
static void pos_fit_warnings(const mk_positional_report *r)
{
	static const char *const what[2] = {
		"the TISA fit stopped at its iteration cap before converging",
		"trend kernels, centred outside the positions: smooth trends over them, "
		"not local bumps"};

	for (int kind = 0; r->fits && kind < 2; kind++) {
		char list[512] = "";
		size_t len = 0;
		int64_t count = 0;
		for (int64_t h = 0; h < r->p.heads; h++) {
			const mk_tisa *f = &r->fits[h];
			if ((kind ? f->outside > 0 : f->capped) && len < sizeof list - 32)
				len += (size_t)snprintf(list + len, sizeof list - len, "%s%" PRId64,
							count ? ", " : "", h);
			count += kind ? f->outside > 0 : f->capped;
		}
		if (count)
			fprintf(stderr, "maskkit: warning: head%s %s%s (%" PRId64 " of %" PRId64
				"): %s\n", count > 1 ? "s" : "", list,
				len >= sizeof list - 32 ? ", ..." : "", count, r->p.heads, what[kind]);
	}
}

/* Each panel is labelled with its head; the title names the layer. */
static int pos_png(const pos_opts *o, const mk_positional *r)
{
	const double **mats = malloc((size_t)r->heads * sizeof *mats);
	const char **labels = malloc((size_t)r->heads * sizeof *labels);
	char (*names)[32] = malloc((size_t)r->heads * sizeof *names), title[96];
	int ret = MK_OK;

	if (!mats || !labels || !names)
		ret = mk_error_set(MK_ENOMEM, "out of memory");
	for (int64_t h = 0; ret == MK_OK && h < r->heads; h++) {
		mats[h] = r->f + h * r->n * r->n;
		snprintf(names[h], sizeof names[h], "head %" PRId64, h);
		labels[h] = names[h];
	}
	snprintf(title, sizeof title, "positional term F_P, layer %" PRId64 ", n = %" PRId64,
		 o->p.layer, r->n);
	if (ret == MK_OK)
		ret = mk_png_heatmaps(o->png, mats, (int)r->heads, r->n, r->n, (int)o->columns,
				      &(mk_heatmap_opts){.range = o->range, .title = title,
							 .labels = labels});
	free(names);
	free(labels);
	free(mats);
	return ret;
}

/* Panel h: columns d, t(d), fit(d) (NaN without --fit). */
static int pos_profile_plot(const pos_opts *o, const mk_positional_report *rep)
{
	const mk_positional *r = &rep->p;
	static const char *const cols[3] = {"d", "t", "fit"};
	int64_t m = 2 * r->n - 1, rows = m * r->heads;
	double *data = malloc((size_t)rows * 3 * sizeof *data);
	char title[200], vars[64];
	int ret;

	if (!data)
		return mk_error_set(MK_ENOMEM, "out of memory for the profile plot");
	for (int64_t h = 0; h < r->heads; h++)
		for (int64_t x = 0; x < m; x++) {
			double *row = data + (h * m + x) * 3, d = (double)(x - (r->n - 1));
			row[0] = d;
			row[1] = r->profile[h * m + x];
			row[2] = rep->fits ? mk_tisa_eval(&rep->fits[h], d) : NAN;
		}
	snprintf(title, sizeof title, "positional term per head, layer %" PRId64 "%s",
		 o->p.layer, rep->fits ? " (profile and TISA fit)" : " (Toeplitz profile)");
	snprintf(vars, sizeof vars, "layout_cols = %" PRId64 "\n", o->columns);
	ret = mk_plot_run(&(mk_plot){.template_name = "tisa_fit", .output = o->profile,
				     .title = title, .data = data, .rows = rows, .ncols = 3,
				     .col_names = cols, .panels = (int)r->heads, .vars = vars});
	free(data);
	return ret;
}

static int pos_exec(void *opts, const cli_args *a)
{
	pos_opts *o = opts;
	mk_positional_report r;
	int ret;

	if (a->argc != 1)
		return cli_usage_error(&mk_cmd_positional, a->argc ? "one MODEL at a time (got %d)"
				       : "missing MODEL", a->argc);
	if (a->argv[0][mk_tensor_file_len(a->argv[0])])
		return cli_usage_error(&mk_cmd_positional, "'%s': positional reads several datasets "
				       "of FILE.h5; name them with --position, --query, --key...",
				       a->argv[0]);
	if ((ret = mk_positional_run(a->argv[0], &o->p, (int)o->fit, &r)) == MK_OK)
		pos_fit_warnings(&r);
	if (ret == MK_OK && o->png)
		ret = pos_png(o, &r.p);
	if (ret == MK_OK && o->profile)
		ret = pos_profile_plot(o, &r);
	if (ret == MK_OK)
		ret = mk_emit(stdout, o->json ? MK_EMIT_JSON : MK_EMIT_TEXT, &mk_positional_record,
			      &r, 1, 0);
	mk_positional_report_release(&r);
	return ret;
}

const struct mk_cmd mk_cmd_positional = {
	.name = "positional",
	.summary = "positional attention term per head, its Toeplitz R^2 and TISA fits",
	.synopsis = "MODEL [--layer L] [--heads H] [--fit S]\n"
		    " [--png FILE.png] [--profile P.png] [--json] [options]",
	.opts = pos_table,
	.opts_size = sizeof(pos_opts),
	.exec = pos_exec,
	.description =
"The positional term of layer L's attention scores, per head (Wennberg &\n"
"Henter, 2021, Eq. 9-12): with w the mean word embedding and E_P the\n"
"position embeddings,\n"
"  F_P = (w W_Q W_K^T E_P^T + E_P W_Q W_K^T w^T + E_P W_Q W_K^T E_P^T) / sqrt(d_k)\n"
"and the R^2 of its least-squares Toeplitz fit.  Biases: q_i = a + p_i W_Q,\n"
"k_j = c + p_j W_K with a = w W_Q + b_Q and c = w W_K + b_K, and F_P =\n"
"(q_i.k_j - a.c) / sqrt(d_k): the biases join the mean word (--no-bias drops\n"
"them).  An embedding projection (ALBERT's embedding_hidden_mapping_in) maps\n"
"p to p W_E and w to w W_E + b_E.  LayerNorm and token-type embeddings are\n"
"left out, as in the paper.\n"
"\n"
"--fit S fits f(d) = sum_s a_s exp(-|b_s| (d - c_s)^2), S kernels, to each\n"
"head's Toeplitz profile (GSL nonlinear least squares, several starting\n"
"points; diagonal d weighted by its length, which is the least-squares fit\n"
"to the whole matrix), prints theta = (a, |b|, c), the fit's R^2 against the\n"
"profile, its R^2 as a model of F_P, and the positional parameter count\n"
"3 S H L of a TISA model with H heads in each of L layers.\n"
"\n"
"MODEL is a HuggingFace model directory (config.json with model.safetensors,\n"
"its sharded index, or tf_model.h5), a .safetensors file or an HDF5 file;\n"
"PyTorch .bin/.pt files are refused with the command that converts them.\n"
"Heads: --heads, else config.json's num_attention_heads (in the directory, or\n"
"beside the file); without either, positional asks for --heads rather than\n"
"guess.  A config.json whose sizes or layers disagree with the weights is an\n"
"error.\n"
"\n"
"Datasets are found by name (HuggingFace safetensors and PyTorch names, as\n"
"/bert.encoder.layer.0.attention.self.query.weight; TF tf_model.h5 files and\n"
"h5py dumps of PyTorch state dicts): 'position_embeddings', 'word_embeddings',\n"
"'query' and 'key' in layer L ('layer_._L', 'layer.L'), their 'bias' beside\n"
"them; --position, --word, --query, --key, --query-bias, --key-bias,\n"
"--projection and --projection-bias name them instead.\n",
	.examples =
"  maskkit positional ~/models/all-MiniLM-L6-v2 --layer 0 --fit 2\n"
"  maskkit positional tf_model.h5 --heads 2 --png heads.png --profile fit.png\n"
"  maskkit positional tf_model.h5 --layer 3 --no-bias --json\n",
};
