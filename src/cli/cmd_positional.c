/*
 * maskkit positional: the positional part of the attention scores of one
 * layer, head by head (Wennberg & Henter, 2021): how Toeplitz it is, and
 * how well the TISA kernel function f(d) = sum_s a_s exp(-|b_s| (d - c_s)^2)
 * with a handful of parameters reproduces it.
 */
#include "config.h"
#include <cJSON.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

enum {
	POS_OPT_LAYER = 512, POS_OPT_HEADS, POS_OPT_NOBIAS, POS_OPT_LAYOUT, POS_OPT_FIT,
	POS_OPT_PNG, POS_OPT_COLUMNS, POS_OPT_PROFILE, POS_OPT_ROLE /* + MK_POS_* */
};

typedef struct pos_opts {
	cli_mask_opts m;
	mk_positional_opts p;
	int64_t fit, columns;
	const char *png, *profile;
	bool json;
} pos_opts;

typedef struct pos_report {
	const char *file;
	mk_positional r;
	mk_tisa *fits; /* heads, when --fit */
} pos_report;

static int pos_layout_option(const char *arg, mk_layout *out)
{
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

static int pos_option(int opt, const char *arg, void *ctx)
{
	pos_opts *o = ctx;
	if (opt >= POS_OPT_ROLE && opt < POS_OPT_ROLE + MK_POS_NROLES) {
		o->p.dataset[opt - POS_OPT_ROLE] = arg;
		return MK_OK;
	}
	switch (opt) {
	case POS_OPT_LAYER:
		return cli_i64(arg, "--layer", 0, 100000, &o->p.layer);
	case POS_OPT_HEADS:
		return cli_i64(arg, "--heads", 1, 100000, &o->p.heads);
	case POS_OPT_NOBIAS:
		o->p.no_bias = true;
		return MK_OK;
	case POS_OPT_LAYOUT:
		return pos_layout_option(arg, &o->p.layout);
	case POS_OPT_FIT:
		return cli_i64(arg, "--fit", 1, MK_TISA_MAX_KERNELS, &o->fit);
	case POS_OPT_PNG:
		o->png = arg;
		return MK_OK;
	case POS_OPT_COLUMNS:
		return cli_i64(arg, "--columns", 1, 64, &o->columns);
	case POS_OPT_PROFILE:
		o->profile = arg;
		return MK_OK;
	case CLI_OPT_JSON:
		o->json = true;
		return MK_OK;
	default:
		return mk_error_set(MK_EINVAL, "unexpected option");
	}
}

static int pos_parse(int argc, char **argv, pos_opts *o)
{
	static const struct option longopts[] = {
		{"layer", required_argument, NULL, POS_OPT_LAYER},
		{"heads", required_argument, NULL, POS_OPT_HEADS},
		{"no-bias", no_argument, NULL, POS_OPT_NOBIAS},
		{"layout", required_argument, NULL, POS_OPT_LAYOUT},
		{"fit", required_argument, NULL, POS_OPT_FIT},
		{"png", required_argument, NULL, POS_OPT_PNG},
		{"columns", required_argument, NULL, POS_OPT_COLUMNS},
		{"profile", required_argument, NULL, POS_OPT_PROFILE},
		{"position", required_argument, NULL, POS_OPT_ROLE + MK_POS_POSITION},
		{"word", required_argument, NULL, POS_OPT_ROLE + MK_POS_WORD},
		{"query", required_argument, NULL, POS_OPT_ROLE + MK_POS_QUERY},
		{"key", required_argument, NULL, POS_OPT_ROLE + MK_POS_KEY},
		{"query-bias", required_argument, NULL, POS_OPT_ROLE + MK_POS_QUERY_BIAS},
		{"key-bias", required_argument, NULL, POS_OPT_ROLE + MK_POS_KEY_BIAS},
		{"projection", required_argument, NULL, POS_OPT_ROLE + MK_POS_PROJ},
		{"projection-bias", required_argument, NULL, POS_OPT_ROLE + MK_POS_PROJ_BIAS},
		{"json", no_argument, NULL, CLI_OPT_JSON},
		{"max-memory", required_argument, NULL, CLI_OPT_MAXMEM},
		{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
	int ret = cli_parse(&mk_cmd_positional, argc, argv, longopts, &o->m, pos_option, o);
	if (ret >= 0)
		return ret;
	if (o->m.out || o->m.bind.n)
		return cli_usage(&mk_cmd_positional, "-n and -o are not options of positional");
	if (optind >= argc)
		return cli_usage(&mk_cmd_positional, "missing FILE.h5");
	if (argc - optind > 1)
		return cli_usage(&mk_cmd_positional, "one FILE.h5 at a time (got %d)", argc - optind);
	o->p.max_memory = o->m.bind.max_memory;
	return -1;
}

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

/* R^2 of the TISA function as a model of the whole matrix: the Toeplitz
 * projection is orthogonal, so its residual and the fit's add up. */
static double pos_matrix_r2(const mk_toeplitz *t, const mk_tisa *f)
{
	return t->tss > 0.0 ? 1.0 - (t->rss + f->wrss) / t->tss : 1.0;
}

static int pos_png(const pos_opts *o, const mk_positional *r)
{
	const double **mats = malloc((size_t)r->heads * sizeof *mats);
	int ret;

	if (!mats)
		return mk_error_set(MK_ENOMEM, "out of memory");
	for (int64_t h = 0; h < r->heads; h++)
		mats[h] = r->f + h * r->n * r->n;
	ret = mk_png_matrices(o->png, mats, (int)r->heads, r->n, r->n, (int)o->columns, 0);
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

static int pos_run(int argc, char **argv)
{
	pos_opts o = {.columns = 4};
	pos_report rep = {0};
	int ret;

	cli_mask_defaults(&o.m);
	if ((ret = pos_parse(argc, argv, &o)) >= 0)
		return ret;
	rep.file = argv[optind];
	ret = mk_positional_compute(rep.file, &o.p, &rep.r);
	if (ret == MK_OK && o.fit)
		ret = pos_fit_heads(&o, &rep);
	if (ret == MK_OK && o.png)
		ret = pos_png(&o, &rep.r);
	if (ret == MK_OK && o.profile)
		ret = pos_profile_plot(&o, &rep);
	if (ret == MK_OK && o.json) {
		cJSON *j = pos_json(&o, &rep);
		char *s = cJSON_Print(j);
		if (s)
			puts(s);
		free(s);
		cJSON_Delete(j);
	} else if (ret == MK_OK) {
		pos_print(&o, &rep);
	}
	free(rep.fits);
	mk_positional_release(&rep.r);
	return ret ? cli_fail(ret) : MK_EXIT_OK;
}

const struct mk_cmd mk_cmd_positional = {
	.name = "positional",
	.summary = "positional attention term per head, its Toeplitz R^2 and TISA fits",
	.run = pos_run,
	.usage =
"usage: maskkit positional FILE.h5 [--layer L] [--heads H] [--fit S] [--png P.png]\n"
"                          [--profile P.png] [--json] [options]\n"
"\n"
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
"Datasets are found by name (HuggingFace TF tf_model.h5 files and h5py dumps\n"
"of PyTorch state dicts): 'position_embeddings', 'word_embeddings', 'query'\n"
"and 'key' in layer L ('layer_._L', 'layer.L'), their 'bias' beside them.\n"
"\n"
"options:\n"
"      --layer L          the layer, counted from 0 (default 0)\n"
"      --heads H          heads (default: query size / 64)\n"
"      --no-bias          leave the query and key biases out\n"
"      --layout X         weights stored auto (from the name: 'kernel' in-out,\n"
"                         'weight' out-in), in-out (TF) or out-in (PyTorch)\n"
"      --position PATH    dataset of the position embeddings (also --word,\n"
"                         --query, --key, --query-bias, --key-bias,\n"
"                         --projection, --projection-bias)\n"
"      --fit S            fit S kernels (1..8) per head\n"
"      --png P.png        heatmaps of every head's F_P in a grid\n"
"      --columns C        heads per row in --png and --profile (default 4)\n"
"      --profile P.png    plot (gnuplot) of every head's profile (and fit)\n"
"      --json             machine-readable output\n"
"      --max-memory S     limit for the matrices held (default 4G)\n"
"  -h, --help             this help\n"
"\n"
"exit status: 0 success, 2 bad input, 1 internal or system error.\n",
};
