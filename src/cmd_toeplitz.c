/*
 * maskkit toeplitz: how translation invariant are a model's position
 * embeddings?  Reads E_P (n x d) from HDF5, forms P = E_P E_P^T and reports
 * the R^2 of its least-squares Toeplitz fit (Wennberg & Henter, 2021), for
 * the whole matrix and its leading K x K block; optionally a heatmap of P
 * and a plot of the fitted profile against rows of P.
 */
#include "config.h"
#include <cJSON.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

#define TOEP_DEFAULT_FIRST 128
#define TOEP_PROFILE_ROWS 4

enum { TOEP_OPT_DATASET = 512, TOEP_OPT_FIRST, TOEP_OPT_PNG, TOEP_OPT_PROFILE };

typedef struct toep_opts {
	cli_mask_opts m;
	const char *dataset, *png, *profile;
	int64_t first;
	bool json;
} toep_opts;

typedef struct toep_result {
	const char *file;
	char *dataset;
	int64_t n, d;
	mk_toeplitz all, first; /* first.k == 0: no smaller leading block */
} toep_result;

static int toep_option(int opt, const char *arg, void *ctx)
{
	toep_opts *o = ctx;
	switch (opt) {
	case TOEP_OPT_DATASET:
		o->dataset = arg;
		return MK_OK;
	case TOEP_OPT_FIRST:
		return cli_i64(arg, "--first", 1, MK_N_MAX, &o->first);
	case TOEP_OPT_PNG:
		o->png = arg;
		return MK_OK;
	case TOEP_OPT_PROFILE:
		o->profile = arg;
		return MK_OK;
	case CLI_OPT_JSON:
		o->json = true;
		return MK_OK;
	default:
		return mk_error_set(MK_EINVAL, "unexpected option");
	}
}

/* Several inputs need one output name each: '{}' stands for the input's
 * name without directory and extension. */
static int toep_check_outputs(const toep_opts *o, int files)
{
	const char *outs[2] = {o->png, o->profile}, *names[2] = {"--png", "--profile"};
	for (int k = 0; k < 2; k++)
		if (outs[k] && files > 1 && !strstr(outs[k], "{}"))
			return cli_usage(&mk_cmd_toeplitz, "with several files, %s needs '{}' in its "
					 "name (replaced by each file's name)", names[k]);
	return -1;
}

static int toep_parse(int argc, char **argv, toep_opts *o)
{
	static const struct option longopts[] = {
		{"dataset", required_argument, NULL, TOEP_OPT_DATASET},
		{"first", required_argument, NULL, TOEP_OPT_FIRST},
		{"png", required_argument, NULL, TOEP_OPT_PNG},
		{"profile", required_argument, NULL, TOEP_OPT_PROFILE},
		{"json", no_argument, NULL, CLI_OPT_JSON},
		{"max-memory", required_argument, NULL, CLI_OPT_MAXMEM},
		{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
	int ret = cli_parse(&mk_cmd_toeplitz, argc, argv, longopts, &o->m, toep_option, o);
	if (ret >= 0)
		return ret;
	if (o->m.out || o->m.bind.n)
		return cli_usage(&mk_cmd_toeplitz, "-n and -o are not options of toeplitz");
	if (optind >= argc)
		return cli_usage(&mk_cmd_toeplitz, "missing FILE.h5");
	return toep_check_outputs(o, argc - optind);
}

/* out gets pattern with '{}' replaced by file's base name sans extension. */
static int toep_output_name(const char *pattern, const char *file, char **out)
{
	const char *hole = strstr(pattern, "{}"), *base = strrchr(file, '/');
	size_t stem, len;

	base = base ? base + 1 : file;
	stem = strcspn(base, ".");
	if (!stem)
		stem = strlen(base);
	len = strlen(pattern) + stem + 1;
	if (!(*out = malloc(len)))
		return mk_error_set(MK_ENOMEM, "out of memory");
	if (!hole)
		snprintf(*out, len, "%s", pattern);
	else
		snprintf(*out, len, "%.*s%.*s%s", (int)(hole - pattern), pattern, (int)stem, base,
			 hole + 2);
	return MK_OK;
}

static int toep_png(const char *pattern, const char *file, const mk_matrix *p)
{
	const double *mats[1] = {p->data};
	char *path = NULL;
	int ret = toep_output_name(pattern, file, &path);
	if (ret == MK_OK)
		ret = mk_png_matrices(path, mats, 1, p->rows, p->rows, 1, 0);
	free(path);
	return ret;
}

/* Columns d, t(d), then P[i][i + d] for a few rows i spread over P. */
static int toep_profile_plot(const char *pattern, const toep_result *r, const mk_matrix *p,
			     const double *t)
{
	int64_t n = p->rows, rows = 2 * n - 1, shown[TOEP_PROFILE_ROWS];
	char names[TOEP_PROFILE_ROWS][32];
	const char *cols[TOEP_PROFILE_ROWS + 2] = {"d", "t"};
	int ncols = 2, ret;
	char *path = NULL, title[160];
	double *data = NULL;

	for (int k = 0; k < TOEP_PROFILE_ROWS; k++) {
		shown[k] = n * k / TOEP_PROFILE_ROWS;
		if (k && shown[k] == shown[k - 1])
			continue;
		snprintf(names[k], sizeof names[k], "row_%" PRId64, shown[k]);
		cols[ncols++] = names[k];
	}
	if ((ret = toep_output_name(pattern, r->file, &path)))
		return ret;
	if (!(data = malloc((size_t)rows * (size_t)ncols * sizeof *data))) {
		ret = mk_error_set(MK_ENOMEM, "out of memory for the profile plot");
		goto out;
	}
	for (int64_t x = 0; x < rows; x++) {
		double *row = data + x * ncols;
		int64_t d = x - (n - 1);
		row[0] = (double)d;
		row[1] = t[x];
		for (int c = 2, k = 0; c < ncols; c++, k++) {
			int64_t i = n * k / TOEP_PROFILE_ROWS, j = i + d;
			row[c] = j >= 0 && j < n ? p->data[i * n + j] : NAN;
		}
	}
	snprintf(title, sizeof title, "Toeplitz profile of P = E_P E_P^T (n = %" PRId64
		 ", R^2 = %.4f)", n, r->all.r2);
	ret = mk_plot_run(&(mk_plot){.template_name = "toeplitz_profile", .output = path,
				     .title = title, .data = data, .rows = rows, .ncols = ncols,
				     .col_names = cols, .panels = 1});
out:
	free(data);
	free(path);
	return ret;
}

static int toep_find(mk_weights *w, const toep_opts *o, toep_result *r)
{
	int ret;

	if (o->dataset) {
		/* shown as found by a search would show it: from the root */
		size_t len = strlen(o->dataset) + 2;
		if (!(r->dataset = malloc(len)))
			return mk_error_set(MK_ENOMEM, "out of memory");
		snprintf(r->dataset, len, "%s%s", o->dataset[0] == '/' ? "" : "/", o->dataset);
		return MK_OK;
	}
	ret = mk_weights_find(w, "position_embeddings", "the position embeddings", &r->dataset);
	if (ret == MK_EFORMAT) {
		char msg[512];
		snprintf(msg, sizeof msg, "%s", mk_error());
		ret = mk_error_set(ret, "%s (give --dataset PATH)", msg);
	}
	return ret;
}

static int toep_analyse(const char *file, const toep_opts *o, toep_result *r)
{
	mk_weights *w = NULL;
	mk_matrix e = {0}, p = {0};
	double *t = NULL; /* the profile, for --profile */
	int ret;

	memset(r, 0, sizeof *r);
	r->file = file;
	if ((ret = mk_weights_open(file, &w)) || (ret = toep_find(w, o, r)) ||
	    (ret = mk_weights_read(w, r->dataset, 2, o->m.bind.max_memory, &e)))
		goto out;
	r->n = e.rows;
	r->d = e.cols;
	if (e.rows < 2) {
		ret = mk_error_set(MK_EFORMAT, "'%s': dataset '%s' has n = %" PRId64 " position; "
				   "the Toeplitz fit needs at least 2", file, r->dataset, e.rows);
		goto out;
	}
	if (o->profile && !(t = malloc((size_t)(2 * e.rows - 1) * sizeof *t))) {
		ret = mk_error_set(MK_ENOMEM, "out of memory for the profile");
		goto out;
	}
	if ((ret = mk_matrix_gram(&e, o->m.bind.max_memory, &p)) ||
	    (ret = mk_toeplitz_fit(p.data, p.rows, p.rows, true, t, &r->all)))
		goto out;
	if (o->first < r->n &&
	    (ret = mk_toeplitz_fit(p.data, p.rows, o->first, true, NULL, &r->first)))
		goto out;
	if (o->png && (ret = toep_png(o->png, file, &p)))
		goto out;
	if (o->profile)
		ret = toep_profile_plot(o->profile, r, &p, t);
out:
	free(t);
	mk_matrix_release(&p);
	mk_matrix_release(&e);
	mk_weights_close(w);
	return ret;
}

static void toep_print(const toep_result *r)
{
	printf("file        %s\ndataset     %s\n", r->file, r->dataset);
	printf("n x d       %" PRId64 " x %" PRId64 "\n", r->n, r->d);
	printf("R^2         %.9f   (Toeplitz fit of P = E_P E_P^T)\n", r->all.r2);
	printf("RSS         %.6e\nTSS         %.6e\n", r->all.rss, r->all.tss);
	if (r->first.k) {
		char label[32];
		snprintf(label, sizeof label, "R^2 [:%" PRId64 "]", r->first.k);
		printf("%-11s %.9f   (leading %" PRId64 " x %" PRId64 " block)\n", label,
		       r->first.r2, r->first.k, r->first.k);
	}
}

static void toep_row(const toep_result *r, bool header)
{
	if (header)
		printf("%-32s %7s %6s %12s %12s %12s %12s\n", "file", "n", "d", "R^2", "RSS", "TSS",
		       "R^2 first");
	printf("%-32s %7" PRId64 " %6" PRId64 " %12.9f %12.5e %12.5e ", r->file, r->n, r->d,
	       r->all.r2, r->all.rss, r->all.tss);
	if (r->first.k)
		printf("%12.9f [:%" PRId64 "]\n", r->first.r2, r->first.k);
	else
		printf("%12s\n", "-");
}

static cJSON *toep_fit_json(const mk_toeplitz *t)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "k", (double)t->k);
	cJSON_AddNumberToObject(o, "r2", t->r2);
	cJSON_AddNumberToObject(o, "rss", t->rss);
	cJSON_AddNumberToObject(o, "tss", t->tss);
	cJSON_AddNumberToObject(o, "mean", t->mean);
	return o;
}

static cJSON *toep_json(const toep_result *r)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "file", r->file);
	cJSON_AddStringToObject(o, "dataset", r->dataset);
	cJSON_AddNumberToObject(o, "n", (double)r->n);
	cJSON_AddNumberToObject(o, "d", (double)r->d);
	cJSON_AddNumberToObject(o, "r2", r->all.r2);
	cJSON_AddNumberToObject(o, "rss", r->all.rss);
	cJSON_AddNumberToObject(o, "tss", r->all.tss);
	cJSON_AddNumberToObject(o, "mean", r->all.mean);
	if (r->first.k)
		cJSON_AddItemToObject(o, "first", toep_fit_json(&r->first));
	else
		cJSON_AddNullToObject(o, "first");
	return o;
}

static void toep_emit_json(cJSON *x)
{
	char *s = cJSON_Print(x);
	if (s)
		puts(s);
	free(s);
}

static int toep_run(int argc, char **argv)
{
	toep_opts o = {.first = TOEP_DEFAULT_FIRST};
	cJSON *all = NULL;
	int ret, code = MK_EXIT_OK, files;

	cli_mask_defaults(&o.m);
	if ((ret = toep_parse(argc, argv, &o)) >= 0)
		return ret;
	files = argc - optind;
	if (o.json)
		all = cJSON_CreateArray();
	for (int k = optind; k < argc && code == MK_EXIT_OK; k++) {
		toep_result r;
		if ((ret = toep_analyse(argv[k], &o, &r)))
			code = cli_fail(ret);
		else if (all)
			cJSON_AddItemToArray(all, toep_json(&r));
		else if (files > 1)
			toep_row(&r, k == optind);
		else
			toep_print(&r);
		free(r.dataset);
	}
	if (all && code == MK_EXIT_OK)
		toep_emit_json(files > 1 ? all : cJSON_GetArrayItem(all, 0));
	cJSON_Delete(all);
	return code;
}

const struct mk_cmd mk_cmd_toeplitz = {
	.name = "toeplitz",
	.summary = "translation invariance of position embeddings (Toeplitz R^2)",
	.run = toep_run,
	.usage =
"usage: maskkit toeplitz FILE.h5... [--dataset PATH] [--first K] [--png P.png]\n"
"                        [--profile P.png] [--json]\n"
"\n"
"Reads the position-embedding matrix E_P (n positions x d) from each HDF5\n"
"file, forms P = E_P E_P^T in double precision (BLAS dsyrk) and fits the\n"
"closest Toeplitz matrix T (constant along each diagonal d = j - i, set to\n"
"P's mean along it).  Prints n, d, R^2 = 1 - RSS/TSS with RSS = sum (P - T)^2\n"
"and TSS = sum (P - mean P)^2, and R^2 of the leading K x K block.  R^2 = 1\n"
"means P depends only on j - i: the embeddings are translation invariant\n"
"(Wennberg & Henter, 2021).  Several files print one row each.\n"
"\n"
"The dataset is --dataset PATH, else the one 2-D dataset whose path contains\n"
"'position_embeddings' (HuggingFace tf_model.h5 files of BERT, ALBERT,\n"
"RoBERTa, ELECTRA; h5py dumps of PyTorch state dicts).  float16/32/64 and\n"
"integer datasets are read; NaN or Inf is an error.\n"
"\n"
"options:\n"
"      --dataset PATH   the dataset to read (e.g. /bert/embeddings/pos:0)\n"
"      --first K        also fit the leading K x K block (default 128; skipped\n"
"                       when K >= n)\n"
"      --png P.png      heatmap of P (viridis; one pixel per entry up to\n"
"                       n = 1024, block means beyond)\n"
"      --profile P.png  plot (gnuplot) of the fitted profile t(d) with rows\n"
"                       0, n/4, n/2, 3n/4 of P aligned on the diagonal\n"
"      --json           machine-readable output (an array for several files)\n"
"      --max-memory S   limit for the matrices held (default 4G)\n"
"  -h, --help           this help\n"
"\n"
"With several files, --png and --profile names need '{}', replaced by each\n"
"file's name without directory and extension.  Outputs are written to a\n"
"temporary file and renamed, so a failure leaves an existing file intact.\n"
"\n"
"exit status: 0 success, 2 bad input, 1 internal or system error.\n",
};
