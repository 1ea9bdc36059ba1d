/*
 * maskkit positional: the positional part of the attention scores of one
 * layer, head by head (Wennberg & Henter, 2021): how Toeplitz it is, and
 * how well the TISA kernel function f(d) = sum_s a_s exp(-|b_s| (d - c_s)^2)
 * with a handful of parameters reproduces it.
 */
#include "config.h"
#include <cJSON.h>
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

typedef struct pos_report {
	const char *file;
	mk_positional r;
	mk_tisa *fits; /* heads, when --fit */
} pos_report;

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
	CLI_OPT_CALL("layout", 0, pos_opt_layout, "X", "auto",
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

/* Fits each head's profile, weighting diagonal d by its length n - |d| so
 * that the fit is the least-squares fit of f(j - i) to the whole matrix. */
static int pos_fit_heads(const pos_opts *o, pos_report *rep)
{
	const mk_positional *r = &rep->r;
	int64_t n = r->n, m = 2 * n - 1;
	double *w = malloc((size_t)m * sizeof *w);
	int ret = MK_OK;

	rep->fits = calloc((size_t)r->heads, sizeof *rep->fits);
	if (!w || !rep->fits) {
		free(w);
		return mk_error_set(MK_ENOMEM, "out of memory for the fits");
	}
	for (int64_t x = 0; x < m; x++)
		w[x] = (double)(n - llabs(x - (n - 1)));
	for (int64_t h = 0; h < r->heads && ret == MK_OK; h++)
		ret = mk_tisa_fit(r->profile + h * m, w, m, -(n - 1), (int)o->fit, &rep->fits[h]);
	free(w);
	return ret;
}

/* One line on stderr naming the heads whose fit stopped at the iteration cap,
 * one naming those with trend kernels: the table alone would not show it. */
static void pos_fit_warnings(const pos_report *rep)
{
	static const char *const what[2] = {
		"the TISA fit stopped at its iteration cap before converging",
		"trend kernels, centred outside the positions: smooth trends over them, "
		"not local bumps"};

	for (int kind = 0; kind < 2; kind++) {
		char list[512] = "";
		size_t len = 0;
		int64_t count = 0;
		for (int64_t h = 0; h < rep->r.heads; h++) {
			const mk_tisa *f = &rep->fits[h];
			if ((kind ? f->outside > 0 : f->capped) && len < sizeof list - 32)
				len += (size_t)snprintf(list + len, sizeof list - len, "%s%" PRId64,
							count ? ", " : "", h);
			count += kind ? f->outside > 0 : f->capped;
		}
		if (count)
			fprintf(stderr, "maskkit: warning: head%s %s%s (%" PRId64 " of %" PRId64
				"): %s\n", count > 1 ? "s" : "", list,
				len >= sizeof list - 32 ? ", ..." : "", count, rep->r.heads, what[kind]);
	}
}

/* R^2 of the TISA function as a model of the whole matrix: the Toeplitz
 * projection is orthogonal, so its residual and the fit's add up. */
static double pos_matrix_r2(const mk_toeplitz *t, const mk_tisa *f)
{
	return t->tss > 0.0 ? 1.0 - (t->rss + f->wrss) / t->tss : 1.0;
}

/* Each panel is labelled with its head; the title names the layer. */
static int pos_png(const pos_opts *o, const mk_positional *r)
{
	const double **mats = malloc((size_t)r->heads * sizeof *mats);
	char **labels = calloc((size_t)r->heads, sizeof *labels), title[96];
	int ret = MK_OK;

	for (int64_t h = 0; mats && labels && h < r->heads; h++) {
		mats[h] = r->f + h * r->n * r->n;
		if (!(labels[h] = malloc(32)))
			break;
		snprintf(labels[h], 32, "head %" PRId64, h);
	}
	if (!mats || !labels || !labels[r->heads - 1])
		ret = mk_error_set(MK_ENOMEM, "out of memory");
	snprintf(title, sizeof title, "positional term F_P, layer %" PRId64 ", n = %" PRId64,
		 o->p.layer, r->n);
	if (ret == MK_OK)
		ret = mk_png_heatmaps(o->png, mats, (int)r->heads, r->n, r->n, (int)o->columns,
				      &(mk_heatmap_opts){.range = o->range, .title = title,
							 .labels = (const char *const *)labels});
	for (int64_t h = 0; labels && h < r->heads; h++)
		free(labels[h]);
	free(labels);
	free(mats);
	return ret;
}

/* Panel h: columns d, t(d), fit(d) (NaN without --fit). */
static int pos_profile_plot(const pos_opts *o, const pos_report *rep)
{
	const mk_positional *r = &rep->r;
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

static void pos_print_datasets(const mk_positional *r)
{
	for (int role = 0; role < MK_POS_NROLES; role++)
		if (r->used[role])
			printf("%-16s %s\n", mk_positional_role(role), r->used[role]);
}

static void pos_print(const pos_opts *o, const pos_report *rep)
{
	const mk_positional *r = &rep->r;
	printf("file             %s\n", rep->file);
	if (r->layers)
		printf("layer            %" PRId64 " (%" PRId64 " layers with query weights)\n",
		       o->p.layer, r->layers);
	else
		printf("layer            %" PRId64 " (layer count unknown: no query weights named "
		       "by layer)\n", o->p.layer);
	printf("positions        %" PRId64 ", embedding size %" PRId64 ", %" PRId64
	       " heads of d_k = %" PRId64 "\n", r->n, r->e, r->heads, r->dk);
	printf("biases           %s\n", o->p.no_bias ? "left out (--no-bias)" :
	       r->used[MK_POS_QUERY_BIAS] || r->used[MK_POS_KEY_BIAS] ? "included" : "none found");
	pos_print_datasets(r);
	printf("\n%4s %12s %12s %12s", "head", "R^2", "RSS", "TSS");
	if (rep->fits)
		printf(" %10s %10s  theta (a, |b|, c per kernel)", "fit R^2", "TISA R^2");
	printf("\n");
	for (int64_t h = 0; h < r->heads; h++) {
		const mk_toeplitz *t = &r->fit[h];
		printf("%4" PRId64 " %12.9f %12.5e %12.5e", h, t->r2, t->rss, t->tss);
		for (int s = 0; rep->fits && s < rep->fits[h].kernels; s++) {
			const mk_tisa *f = &rep->fits[h];
			if (!s)
				printf(" %10.6f %10.6f ", f->r2, pos_matrix_r2(t, f));
			printf(" (%.4g, %.4g, %.4g)", f->a[s], f->b[s], f->c[s]);
		}
		printf("\n");
	}
	if (rep->fits && r->layers)
		printf("\npositional parameters 3 S H L = 3 x %" PRId64 " x %" PRId64 " x %" PRId64
		       " = %" PRId64 "\n", o->fit, r->heads, r->layers, 3 * o->fit * r->heads *
		       r->layers);
	else if (rep->fits)
		printf("\npositional parameters 3 S H = 3 x %" PRId64 " x %" PRId64 " = %" PRId64
		       " per layer\n", o->fit, r->heads, 3 * o->fit * r->heads);
}

static cJSON *pos_fit_json(const mk_toeplitz *t, const mk_tisa *f)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddItemToObject(o, "a", cJSON_CreateDoubleArray(f->a, f->kernels));
	cJSON_AddItemToObject(o, "b", cJSON_CreateDoubleArray(f->b, f->kernels));
	cJSON_AddItemToObject(o, "c", cJSON_CreateDoubleArray(f->c, f->kernels));
	cJSON_AddNumberToObject(o, "r2", f->r2);
	cJSON_AddNumberToObject(o, "r2_matrix", pos_matrix_r2(t, f));
	cJSON_AddNumberToObject(o, "starts", f->starts);
	cJSON_AddNumberToObject(o, "iterations", f->iterations);
	cJSON_AddBoolToObject(o, "capped", f->capped);
	cJSON_AddNumberToObject(o, "trend_kernels", f->outside);
	return o;
}

static cJSON *pos_json(const pos_opts *o, const pos_report *rep)
{
	const mk_positional *r = &rep->r;
	cJSON *j = cJSON_CreateObject(), *ds, *heads;
	cJSON_AddStringToObject(j, "file", rep->file);
	cJSON_AddNumberToObject(j, "layer", (double)o->p.layer);
	if (r->layers)
		cJSON_AddNumberToObject(j, "layers", (double)r->layers);
	else
		cJSON_AddNullToObject(j, "layers");
	cJSON_AddNumberToObject(j, "n", (double)r->n);
	cJSON_AddNumberToObject(j, "embedding", (double)r->e);
	cJSON_AddNumberToObject(j, "hidden", (double)r->hidden);
	cJSON_AddNumberToObject(j, "heads", (double)r->heads);
	cJSON_AddNumberToObject(j, "dk", (double)r->dk);
	cJSON_AddBoolToObject(j, "bias", r->used[MK_POS_QUERY_BIAS] || r->used[MK_POS_KEY_BIAS]);
	ds = cJSON_AddObjectToObject(j, "datasets");
	for (int role = 0; role < MK_POS_NROLES; role++)
		if (r->used[role])
			cJSON_AddStringToObject(ds, mk_positional_role(role), r->used[role]);
	heads = cJSON_AddArrayToObject(j, "per_head");
	for (int64_t h = 0; h < r->heads; h++) {
		cJSON *x = cJSON_CreateObject();
		cJSON_AddNumberToObject(x, "head", (double)h);
		cJSON_AddNumberToObject(x, "r2", r->fit[h].r2);
		cJSON_AddNumberToObject(x, "rss", r->fit[h].rss);
		cJSON_AddNumberToObject(x, "tss", r->fit[h].tss);
		if (rep->fits)
			cJSON_AddItemToObject(x, "fit", pos_fit_json(&r->fit[h], &rep->fits[h]));
		cJSON_AddItemToArray(heads, x);
	}
	if (rep->fits) {
		cJSON_AddNumberToObject(j, "positional_parameters_per_layer",
					(double)(3 * o->fit * r->heads));
		if (r->layers)
			cJSON_AddNumberToObject(j, "positional_parameters",
						(double)(3 * o->fit * r->heads * r->layers));
		else
			cJSON_AddNullToObject(j, "positional_parameters");
	}
	return j;
}

static int pos_exec(void *opts, const cli_args *a)
{
	pos_opts *o = opts;
	pos_report rep = {0};
	int ret;

	if (a->argc < 1)
		return cli_usage_error(&mk_cmd_positional, "missing MODEL");
	if (a->argc > 1)
		return cli_usage_error(&mk_cmd_positional, "one MODEL at a time (got %d)", a->argc);
	rep.file = a->argv[0];
	if (rep.file[mk_tensor_file_len(rep.file)])
		return cli_usage_error(&mk_cmd_positional, "'%s': positional reads several datasets "
				       "of FILE.h5; name them with --position, --query, --key...",
				       rep.file);
	ret = mk_positional_compute(rep.file, &o->p, &rep.r);
	if (ret == MK_OK && o->fit && (ret = pos_fit_heads(o, &rep)) == MK_OK)
		pos_fit_warnings(&rep);
	if (ret == MK_OK && o->png)
		ret = pos_png(o, &rep.r);
	if (ret == MK_OK && o->profile)
		ret = pos_profile_plot(o, &rep);
	if (ret == MK_OK && o->json)
		ret = cli_json_out(pos_json(o, &rep));
	else if (ret == MK_OK)
		pos_print(o, &rep);
	free(rep.fits);
	mk_positional_release(&rep.r);
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
