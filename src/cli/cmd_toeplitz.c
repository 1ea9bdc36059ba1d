/*
 * maskkit toeplitz: how translation invariant are a model's position
 * embeddings?  Reads E_P (n x d) from a model (mk_weights_open), forms P = E_P E_P^T and reports
 * the R^2 of its least-squares Toeplitz fit (Wennberg & Henter, 2021), for
 * the whole matrix and its leading K x K block; optionally a heatmap of P
 * and a plot of the fitted profile against rows of P.
 */
#include "config.h"
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "plot.h"

#define TOEP_DEFAULT_FIRST 128
#define TOEP_PROFILE_ROWS 4

typedef struct toep_opts {
	const char *dataset, *png, *profile;
	int64_t first;
	uint64_t max_memory;
	bool json;
	char **out[2]; /* per input: the --png and --profile names (or NULL) */
	mk_range range; /* --png's colours */
} toep_opts;

static int toep_opt_range(void *opts, const char *arg)
{
	return mk_range_parse(arg, &((toep_opts *)opts)->range);
}

static const struct cli_opt toep_table[] = {
	CLI_OPT_STRING("dataset", 0, toep_opts, dataset, "PATH",
		       "the dataset to read (e.g. /bert/embeddings/pos:0); FILE.h5:/PATH too"),
	CLI_OPT_INT("first", 0, toep_opts, first, "K", 2, MK_N_MAX, "128",
		    "also fit the leading K x K block, K >= 2 (skipped, '-' or null, when K >= n)"),
	CLI_OPT_WRITE("png", 0, toep_opts, png, "FILE.png",
		     "heatmap of P (viridis; one pixel per entry up to n = 1024, block means beyond)"),
	CLI_OPT_CALL("range", 0, toep_opt_range, "RANGE", MK_RANGE_DEFAULT,
		     "--png's colours: pN (N-th to (100-N)-th percentile), minmax or LO:HI"),
	CLI_OPT_WRITE("profile", 0, toep_opts, profile, "P.png",
		     "plot (gnuplot) of the fitted profile t(d) with rows 0, n/4, n/2, 3n/4 of P "
		     "aligned on the diagonal"),
	CLI_OPT_FLAG("json", 0, toep_opts, json, "machine-readable output (an array for several files)"),
	CLI_OPT_SIZE("max-memory", 0, toep_opts, max_memory, "SIZE", "4G", "limit for the matrices held"),
	CLI_OPT_END,
};

/* Several inputs need one output name each ('{}' and '{dir}'), and no two
 * outputs may share a name: the later would silently replace the earlier. */
static int toep_name_outputs(toep_opts *o, char **files, int count)
{
	const char *pats[2] = {o->png, o->profile}, *opts[2] = {"--png", "--profile"};
	int ret;

	for (int k = 0; k < 2; k++) {
		if (!pats[k])
			continue;
		if (count > 1 && !strstr(pats[k], "{}") && !strstr(pats[k], "{dir}"))
			return cli_usage_error(&mk_cmd_toeplitz, "with several files, %s needs '{}' "
					       "or '{dir}' in its name", opts[k]);
		if (!(o->out[k] = calloc((size_t)count, sizeof *o->out[k])))
			return mk_error_set(MK_ENOMEM, "out of memory");
		for (int f = 0; f < count; f++)
			if ((ret = cli_output_name(pats[k], files[f], &o->out[k][f])))
				return ret;
	}
	for (int a = 0; a < 2 * count; a++)
		for (int b = a + 1; b < 2 * count; b++) {
			const char *x = o->out[a % 2] ? o->out[a % 2][a / 2] : NULL;
			const char *y = o->out[b % 2] ? o->out[b % 2][b / 2] : NULL;
			if (x && y && !strcmp(x, y) && a / 2 == b / 2)
				return cli_usage_error(&mk_cmd_toeplitz, "--png and --profile name the "
						       "same file '%s'", x);
			if (x && y && !strcmp(x, y))
				return cli_usage_error(&mk_cmd_toeplitz, "two outputs would both be '%s' "
						       "(for '%s' and '%s'); use '{dir}' or other names",
						       x, files[a / 2], files[b / 2]);
		}
	return MK_OK;
}

static void toep_free_outputs(toep_opts *o, int count)
{
	for (int k = 0; k < 2; k++) {
		for (int f = 0; o->out[k] && f < count; f++)
			free(o->out[k][f]);
		free(o->out[k]);
	}
}

static int toep_png(const char *path, const mk_matrix *p, const mk_range *range)
{
	const double *mats[1] = {p->data};
	char title[96];

	/* in words: the heatmap's font has no sub- or superscripts */
	snprintf(title, sizeof title, "P: dot products of the position embeddings, n = %" PRId64,
		 p->rows);
	return mk_png_heatmaps(path, mats, 1, p->rows, p->rows, 1,
			       &(mk_heatmap_opts){.range = *range, .title = title});
}

/* Columns d, t(d), then P[i][i + d] for a few rows i spread over P. */
static int toep_profile_plot(const char *path, const mk_toeplitz_model *r)
{
	const mk_matrix *p = &r->p;
	int64_t n = p->rows, rows = 2 * n - 1, shown[TOEP_PROFILE_ROWS];
	char names[TOEP_PROFILE_ROWS][32];
	const char *cols[TOEP_PROFILE_ROWS + 2] = {"d", "t"};
	int ncols = 2, nshown = 0, ret;
	char title[160];
	double *data = NULL;

	for (int k = 0; k < TOEP_PROFILE_ROWS; k++) {
		int64_t i = n * k / TOEP_PROFILE_ROWS;
		if (nshown && shown[nshown - 1] == i)
			continue; /* small n: fewer distinct rows */
		shown[nshown] = i;
		snprintf(names[nshown], sizeof names[0], "row_%" PRId64, i);
		cols[ncols++] = names[nshown++];
	}
	if (!(data = malloc((size_t)rows * (size_t)ncols * sizeof *data)))
		return mk_error_set(MK_ENOMEM, "out of memory for the profile plot");
	for (int64_t x = 0; x < rows; x++) {
		double *row = data + x * ncols;
		int64_t d = x - (n - 1);
		row[0] = (double)d;
		row[1] = r->profile[x];
		for (int c = 0; c < nshown; c++) {
			int64_t j = shown[c] + d;
			row[2 + c] = j >= 0 && j < n ? p->data[shown[c] * n + j] : NAN;
		}
	}
	snprintf(title, sizeof title, "Toeplitz profile of P, the position embeddings' dot products "
		 "(n = %" PRId64 ", R² = %.4f)", n, r->all.r2);
	ret = mk_plot_run(&(mk_plot){.template_name = "toeplitz_profile", .output = path,
				     .title = title, .data = data, .rows = rows, .ncols = ncols,
				     .col_names = cols, .panels = 1});
	free(data);
	return ret;
}

/* Input number f of the command line: the library's analysis, then the
 * pictures. */
static int toep_analyse(const char *file, int f, const toep_opts *o, mk_toeplitz_model *r)
{
	mk_toeplitz_model_opts mo = {.dataset = o->dataset, .first = o->first,
				     .max_memory = o->max_memory, .keep = o->png || o->profile};
	int ret = mk_toeplitz_model_run(file, &mo, r);

	if (!ret && o->out[0])
		ret = toep_png(o->out[0][f], &r->p, &o->range);
	if (!ret && o->out[1])
		ret = toep_profile_plot(o->out[1][f], r);
	return ret;
}

/* A file that fails is reported and the others still run; the status is
 * the worst. */
static int toep_exec(void *opts, const cli_args *a)
{
	toep_opts *o = opts;
	mk_toeplitz_model *r = NULL;
	int ret, code = MK_EXIT_OK;
	size_t done = 0;

	if (a->argc < 1)
		return cli_usage_error(&mk_cmd_toeplitz, "missing MODEL");
	if ((ret = toep_name_outputs(o, a->argv, a->argc)) ||
	    !(r = calloc((size_t)a->argc, sizeof *r))) {
		toep_free_outputs(o, a->argc);
		return ret ? ret : mk_error_set(MK_ENOMEM, "out of memory");
	}
	for (int k = 0; k < a->argc; k++) {
		if ((ret = toep_analyse(a->argv[k], k, o, &r[done]))) {
			int c = cli_fail(ret);
			code = c == MK_EXIT_INTERNAL || code == MK_EXIT_INTERNAL ? MK_EXIT_INTERNAL : c;
			mk_toeplitz_model_release(&r[done]);
		} else {
			done++;
		}
	}
	/* one file: its fields; several: a row each (an array in JSON) */
	if (done || (o->json && a->argc > 1))
		ret = mk_emit(stdout, o->json ? MK_EMIT_JSON : a->argc > 1 ? MK_EMIT_TABLE : MK_EMIT_TEXT,
			      &mk_toeplitz_model_record, r, done, a->argc > 1 ? MK_EMIT_ARRAY : 0);
	for (size_t k = 0; k < done; k++)
		mk_toeplitz_model_release(&r[k]);
	free(r);
	toep_free_outputs(o, a->argc);
	if (ret && code == MK_EXIT_OK)
		return ret;
	return code == MK_EXIT_OK ? MK_OK : code == MK_EXIT_USER ? CLI_DONE_USER : CLI_DONE_SYS;
}

const struct mk_cmd mk_cmd_toeplitz = {
	.name = "toeplitz",
	.summary = "translation invariance of position embeddings (Toeplitz R^2)",
	.synopsis = "MODEL... [--dataset PATH] [--first K] [--png FILE.png]\n"
		     " [--profile P.png] [--json]",
	.opts = toep_table,
	.opts_size = sizeof(toep_opts),
	.exec = toep_exec,
	.description =
"Reads the position-embedding matrix E_P (n positions x d) from each MODEL\n"
"(below), forms P = E_P E_P^T in double precision (BLAS dsyrk) and fits the\n"
"closest Toeplitz matrix T (constant along each diagonal d = j - i, set to\n"
"P's mean along it).  Prints n, d, R^2 = 1 - RSS/TSS with RSS = sum (P - T)^2\n"
"and TSS = sum (P - mean P)^2, and R^2 of the leading K x K block.  R^2 = 1\n"
"means P depends only on j - i: the embeddings are translation invariant\n"
"(Wennberg & Henter, 2021).  Several files print one row each.\n"
"\n"
"MODEL is a HuggingFace model directory (config.json with model.safetensors,\n"
"or model.safetensors.index.json and its shards, or tf_model.h5), a\n"
".safetensors file, an HDF5 file (FILE.h5:/PATH names the dataset) or an .npy\n"
"holding E_P alone.  PyTorch .bin/.pt files are refused with the command that\n"
"converts them to safetensors.  The dataset is FILE.h5:/PATH's or --dataset\n"
"PATH, else the one 2-D dataset whose name contains 'position_embeddings'\n"
"(safetensors names are '/' + the tensor's name, as in\n"
"/embeddings.position_embeddings.weight; HuggingFace tf_model.h5 files of\n"
"BERT, ALBERT, RoBERTa, ELECTRA; h5py dumps of PyTorch state dicts), else\n"
"the file's only 2-D dataset whatever its name.\n"
"float16, bfloat16, float32/64 and integer data are read; NaN or Inf is an\n"
"error.\n",
	.notes =
"With several files, --png and --profile names need '{}' (each file's name\n"
"without directory and extension) or '{dir}' (its directory's name), as in\n"
"--png 'P-{dir}.png' for runs/v1/tf_model.h5 and runs/v2/tf_model.h5; names\n"
"that would collide are an error.  A file that fails is reported on stderr\n"
"and the others still run (exit status 2 then).  Outputs are written to a\n"
"temporary file and renamed, so a failure leaves an existing file intact.\n",
	.examples =
"  maskkit toeplitz ~/models/all-MiniLM-L6-v2 --json\n"
"  maskkit toeplitz tf_model.h5 --png P.png --profile profile.png\n"
"  maskkit toeplitz tf_model.h5:/bert/tf_bert_model/bert/embeddings/position_embeddings/embeddings:0\n"
"  maskkit toeplitz runs/*/tf_model.h5 --first 64\n",
};
