/*
 * maskkit attn-stats: where attention goes, per layer and head, in a data
 * set of attention probabilities -- the mean on the diagonal and off it, on
 * the first and last real token, row entropy, row mass, and the mean by
 * offset j - i (SparseBERT's profile), over each sample's real tokens; as a
 * table, CSV or JSON, with the profile as CSV and as a gnuplot figure.
 */
#include "config.h"
#include <errno.h>
#include <cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "plot.h"

typedef struct as_opts {
	mk_dataset_opts d; /* --dataset, --lengths, --axes, --mpi-io */
	const char *csv, *profile_csv, *png;
	int64_t max_offset;
	bool json, progress;
} as_opts;

/* What was read, for the reports. */
typedef struct as_source {
	const mk_dataset_info *in;
	const int64_t *lengths;
	int64_t k; /* offsets shown: -k..k */
} as_source;

/* --lengths and --axes take '' too (no lengths; no leading axes). */
static int as_opt_lengths(void *opts, const char *arg)
{
	((as_opts *)opts)->d.lengths = arg;
	return MK_OK;
}

static int as_opt_axes(void *opts, const char *arg)
{
	((as_opts *)opts)->d.axes = arg;
	return MK_OK;
}

static int as_opt_mpi_io(void *opts, const char *arg)
{
	return cli_mpi_io(arg, &((as_opts *)opts)->d.collective);
}

static const struct cli_opt as_table[] = {
	CLI_OPT_STRING("dataset", 0, as_opts, d.dataset, "PATH",
		       "the probabilities (default: see below); FILE.h5:/PATH too"),
	CLI_OPT_CALL("lengths", 0, as_opt_lengths, "L",
		     NULL, "the lengths [samples] in FILE (default 'lengths' when present; "
		     "'' or none: every sample is N long)"),
	CLI_OPT_CALL("axes", 0, as_opt_axes, "AXES", NULL,
		     "the leading axes in order, from 's' samples, 'l' layers, 'h' heads "
		     "(default by rank: slh, lh, h, none)"),
	CLI_OPT_OUT("csv", 0, as_opts, csv, "FILE",
		     "one CSV row per (layer, head): layer, head, diag, off, first, last, entropy, "
		     "mass_min, mass_max ('-': standard output, instead of the table)"),
	CLI_OPT_FLAG("json", 0, as_opts, json,
		     "everything as JSON on stdout, with the profiles of offsets -K..K per layer "
		     "and head"),
	CLI_OPT_WRITE("profile-csv", 0, as_opts, profile_csv, "FILE",
		     "the profile over offsets -K..K: offset, count, the mean over heads of each "
		     "layer, then each head"),
	CLI_OPT_WRITE("png", 0, as_opts, png, "FILE.png",
		     "gnuplot figure of each layer's mean profile over offsets -K..K (log scale "
		     "when all values are > 0)"),
	CLI_OPT_OLD("plot", "png"),
	CLI_OPT_INT("max-offset", 0, as_opts, max_offset, "K", 1, MK_N_MAX, "32",
		    "offsets shown in --json, --profile-csv and --png (at most N - 1)"),
	CLI_OPT_SIZE("max-memory", 0, as_opts, d.max_memory, "SIZE", "4G",
		     "limit for one block and the sums"),
	CLI_OPT_FLAG("progress", 0, as_opts, progress,
		     "report progress on stderr (when it is a terminal, or under mpirun)"),
	CLI_OPT_CALL("mpi-io", 0, as_opt_mpi_io, "MODE", "independent",
		     "under mpirun: independent or collective reads"),
	CLI_OPT_END,
};

static void as_progress(int64_t done, int64_t total, void *arg)
{
	(void)arg;
	/* a line per percent: a million samples must not mean a million writes */
	if (done < total && (100 * done) / total == (100 * (done - 1)) / total)
		return;
	fprintf(stderr, "\rmaskkit: attn-stats: %" PRId64 "/%" PRId64 " samples (%.0f%%)%s",
		done, total, 100.0 * (double)done / (double)total, done >= total ? "\n" : "");
}

/* ---- reports --------------------------------------------------------------- */

static void as_print_head(const char *label_l, const char *label_h, const mk_attn_head_summary *s)
{
	printf("%5s %5s %11.6g %11.6g %11.6g %11.6g %9.4f %9.6f\n", label_l, label_h, s->diag,
	       s->off, s->first, s->last, s->entropy, s->mass_min);
}

static void as_print(const mk_attn_summary *r, const as_source *src)
{
	const mk_dataset_info *in = src->in;
	int64_t lo = src->lengths[0], hi = lo;
	double sum = 0.0;

	for (int64_t i = 0; i < in->samples; i++) {
		lo = src->lengths[i] < lo ? src->lengths[i] : lo;
		hi = src->lengths[i] > hi ? src->lengths[i] : hi;
		sum += (double)src->lengths[i];
	}
	printf("data       %s:%s (%s, %" PRId64 " samples x %" PRId64 " layers x %" PRId64
	       " heads x %" PRId64 " x %" PRId64 ")\n", in->path, in->name, mk_dtype_name(in->dtype), in->samples,
	       in->layers, in->heads, in->n, in->n);
	if (in->lengths_name)
		printf("lengths    %s: min %" PRId64 ", mean %.2f, max %" PRId64 "\n",
		       in->lengths_name, lo, sum / (double)in->samples, hi);
	else
		printf("lengths    none: every sample is N = %" PRId64 " long\n", in->n);
	printf("rows       %" PRIu64 " real rows per head; means pool all samples' real cells\n\n",
	       r->rows[0]);
	printf("%5s %5s %11s %11s %11s %11s %9s %9s\n", "layer", "head", "diag", "off", "first",
	       "last", "entropy", "mass_min");
	for (int64_t l = 0; l < r->layers; l++) {
		char ls[24], hs[24];
		snprintf(ls, sizeof ls, "%" PRId64, l);
		for (int64_t h = 0; h < r->heads; h++) {
			snprintf(hs, sizeof hs, "%" PRId64, h);
			as_print_head(ls, hs, &r->head[l * r->heads + h]);
		}
		if (r->heads > 1)
			as_print_head(ls, "mean", &r->layer[l]);
	}
}

/* A CSV field: %.17g, empty for NaN. */
static void as_csv_num(FILE *f, double v, const char *end)
{
	if (isnan(v))
		fputs(end, f);
	else
		fprintf(f, "%.17g%s", v, end);
}

/* The table as CSV (--csv FILE or -). */
static int as_write_csv(void *file, void *arg)
{
	const mk_attn_summary *r = arg;
	FILE *f = file;

	fprintf(f, "layer,head,diag,off,first,last,entropy,mass_min,mass_max\n");
	for (int64_t k = 0; k < r->layers * r->heads; k++) {
		const mk_attn_head_summary *s = &r->head[k];
		fprintf(f, "%" PRId64 ",%" PRId64 ",", k / r->heads, k % r->heads);
		as_csv_num(f, s->diag, ",");
		as_csv_num(f, s->off, ",");
		as_csv_num(f, s->first, ",");
		as_csv_num(f, s->last, ",");
		as_csv_num(f, s->entropy, ",");
		as_csv_num(f, s->mass_min, ",");
		as_csv_num(f, s->mass_max, "\n");
	}
	return ferror(f) ? mk_error_set(MK_ESYS, "write error: %s", strerror(errno ? errno : EIO)) : MK_OK;
}

/* JSON has no NaN: null stands for "no cells". */
static void as_json_num(cJSON *o, const char *key, double v)
{
	if (isfinite(v))
		cJSON_AddNumberToObject(o, key, v);
	else
		cJSON_AddNullToObject(o, key);
}

/* The entries of offsets -k..k of a profile of r->width entries. */
static cJSON *as_json_profile(const double *prof, int64_t n, int64_t k)
{
	cJSON *a = cJSON_CreateArray();
	for (int64_t x = n - 1 - k; x <= n - 1 + k; x++)
		cJSON_AddItemToArray(a, isfinite(prof[x]) ? cJSON_CreateNumber(prof[x])
							  : cJSON_CreateNull());
	return a;
}

/* key: "layer" or "head", whose number is index. */
static cJSON *as_json_stats(const char *key, int64_t index, const mk_attn_head_summary *s,
			    const double *prof, const mk_attn_summary *r, int64_t k)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, key, (double)index);
	as_json_num(o, "diag", s->diag);
	as_json_num(o, "off", s->off);
	as_json_num(o, "first", s->first);
	as_json_num(o, "last", s->last);
	as_json_num(o, "entropy", s->entropy);
	as_json_num(o, "mass_min", s->mass_min);
	as_json_num(o, "mass_max", s->mass_max);
	cJSON_AddItemToObject(o, "profile", as_json_profile(prof, r->n, k));
	return o;
}

static cJSON *as_json(const mk_attn_summary *r, const as_source *src)
{
	const mk_dataset_info *in = src->in;
	cJSON *o = cJSON_CreateObject(), *a, *layers;
	int64_t k = src->k;

	cJSON_AddStringToObject(o, "file", in->path);
	cJSON_AddStringToObject(o, "dataset", in->name);
	cJSON_AddStringToObject(o, "dtype", mk_dtype_name(in->dtype));
	if (in->lengths_name)
		cJSON_AddStringToObject(o, "lengths", in->lengths_name);
	else
		cJSON_AddNullToObject(o, "lengths");
	cJSON_AddNumberToObject(o, "samples", (double)in->samples);
	cJSON_AddNumberToObject(o, "layers", (double)in->layers);
	cJSON_AddNumberToObject(o, "heads", (double)in->heads);
	cJSON_AddNumberToObject(o, "n", (double)in->n);
	cJSON_AddNumberToObject(o, "rows", (double)r->rows[0]);
	cJSON_AddStringToObject(o, "weighting", "cells");
	cJSON_AddNumberToObject(o, "max_offset", (double)k);
	a = cJSON_AddArrayToObject(o, "offsets");
	for (int64_t d = -k; d <= k; d++)
		cJSON_AddItemToArray(a, cJSON_CreateNumber((double)d));
	a = cJSON_AddArrayToObject(o, "count");
	for (int64_t d = -k; d <= k; d++)
		cJSON_AddItemToArray(a, cJSON_CreateNumber((double)r->count[d + r->n - 1]));
	layers = cJSON_AddArrayToObject(o, "per_layer");
	for (int64_t l = 0; l < r->layers; l++) {
		cJSON *x = as_json_stats("layer", l, &r->layer[l], r->layer_profile + l * r->width,
					 r, k);
		cJSON *heads = cJSON_CreateArray();
		for (int64_t h = 0; h < r->heads; h++) {
			int64_t lh = l * r->heads + h;
			cJSON_AddItemToArray(heads, as_json_stats("head", h, &r->head[lh],
								  r->profile + lh * r->width, r, k));
		}
		cJSON_AddItemToObject(x, "heads", heads);
		cJSON_AddItemToArray(layers, x);
	}
	return o;
}

static int as_emit_json(const mk_attn_summary *r, const as_source *src)
{
	return cli_json_out(as_json(r, src));
}

/* ---- the profile as CSV and as a figure ------------------------------------ */

typedef struct as_profile_arg {
	const mk_attn_summary *r;
	int64_t k;
} as_profile_arg;

/* offset, count, then each layer's mean over heads, then every head. */
static int as_write_profile(void *file, void *arg)
{
	const as_profile_arg *p = arg;
	const mk_attn_summary *r = p->r;
	FILE *f = file;

	fprintf(f, "offset,count");
	for (int64_t l = 0; l < r->layers; l++)
		fprintf(f, ",layer%" PRId64, l);
	for (int64_t lh = 0; lh < r->layers * r->heads; lh++)
		fprintf(f, ",layer%" PRId64 "_head%" PRId64, lh / r->heads, lh % r->heads);
	fputc('\n', f);
	for (int64_t x = r->n - 1 - p->k; x <= r->n - 1 + p->k; x++) {
		fprintf(f, "%" PRId64 ",%" PRIu64, x - (r->n - 1), r->count[x]);
		for (int64_t l = 0; l < r->layers; l++) {
			fputc(',', f);
			as_csv_num(f, r->layer_profile[l * r->width + x], "");
		}
		for (int64_t lh = 0; lh < r->layers * r->heads; lh++) {
			fputc(',', f);
			as_csv_num(f, r->profile[lh * r->width + x], "");
		}
		fputc('\n', f);
	}
	return ferror(f) ? mk_error_set(MK_ESYS, "write error: %s", strerror(errno ? errno : EIO)) : MK_OK;
}

/* Columns offset, layer_0, layer_1, ...; a log scale when every value shown
 * is positive (zeros and missing offsets would vanish from it). */
static int as_plot(const char *path, const mk_attn_summary *r, const as_source *src)
{
	int64_t rows = 2 * src->k + 1, l, ncols = r->layers + 1;
	char **names = NULL, title[512];
	double *data = NULL;
	bool logy = true;
	int ret = MK_OK;

	if (ncols > 4096)
		return mk_error_set(MK_ERANGE, "--png draws at most 4095 layers, got %" PRId64,
				    r->layers);
	data = malloc((size_t)(rows * ncols) * sizeof *data);
	names = calloc((size_t)ncols, sizeof *names);
	if (!data || !names) {
		ret = mk_error_set(MK_ENOMEM, "out of memory for the plot");
		goto out;
	}
	for (l = 0; l < ncols && ret == MK_OK; l++) {
		size_t len = 32;
		if (!(names[l] = malloc(len)))
			ret = mk_error_set(MK_ENOMEM, "out of memory for the plot");
		else if (l == 0)
			snprintf(names[l], len, "offset");
		else
			snprintf(names[l], len, "layer_%" PRId64, l - 1);
	}
	for (int64_t x = 0; x < rows && ret == MK_OK; x++) {
		int64_t at = r->n - 1 - src->k + x;
		data[x * ncols] = (double)(x - src->k);
		for (l = 0; l < r->layers; l++) {
			double v = r->layer_profile[l * r->width + at];
			data[x * ncols + 1 + l] = v;
			logy = logy && !(v <= 0.0);
		}
	}
	snprintf(title, sizeof title, "mean attention by offset j - i (%s, %" PRId64 " samples, N = %"
		 PRId64 ")", src->in->path, src->in->samples, src->in->n);
	if (ret == MK_OK)
		ret = mk_plot_run(&(mk_plot){.template_name = "attn_profile", .output = path,
					     .title = title, .data = data, .rows = rows,
					     .ncols = (int)ncols, .col_names = (const char *const *)names,
					     .panels = 1, .vars = logy ? "logy = 1" : "logy = 0"});
out:
	for (l = 0; names && l < ncols; l++)
		free(names[l]);
	free(names);
	free(data);
	return ret;
}

/* ---- the command ----------------------------------------------------------- */

static int as_outputs(const mk_attn_summary *r, const as_source *src, const as_opts *o)
{
	bool csv_out = o->csv && !strcmp(o->csv, "-");
	int ret = MK_OK;

	if (o->json)
		ret = as_emit_json(r, src);
	else if (csv_out)
		ret = as_write_csv(stdout, (void *)r);
	else
		as_print(r, src);
	if (ret == MK_OK && o->csv && !csv_out)
		ret = mk_write_atomic(o->csv, as_write_csv, (void *)r);
	if (ret == MK_OK && o->profile_csv)
		ret = mk_write_atomic(o->profile_csv, as_write_profile,
				      &(as_profile_arg){.r = r, .k = src->k});
	if (ret == MK_OK && o->png)
		ret = as_plot(o->png, r, src);
	return ret;
}

/* What holds once the options are read: one input, one report on stdout,
 * and three distinct output files. */
static int as_check(const as_opts *o, const cli_args *a)
{
	const struct mk_cmd *c = &mk_cmd_attn_stats;
	const char *names[3] = {"--png", "--profile-csv", "--csv"};
	const char *files[3] = {o->png, o->profile_csv, o->csv && strcmp(o->csv, "-") ? o->csv
				: NULL};

	if (a->argc < 1)
		return cli_usage_error(c, "missing FILE.h5");
	if (a->argc > 1)
		return cli_usage_error(c, "one FILE.h5 at a time, got %d", a->argc);
	if (files[2] == NULL && o->csv && o->json)
		return cli_usage_error(c, "give one of --csv - and --json (both write to "
				       "standard output)");
	for (int x = 0; x < 3; x++)
		for (int y = x + 1; y < 3; y++)
			if (files[x] && files[y] && !strcmp(files[x], files[y]))
				return cli_usage_error(c, "%s and %s name the same file '%s'", names[x],
						       names[y], files[x]);
	return MK_OK;
}

/* Opens FILE.h5, or FILE.h5:/PATH (the dataset), on every rank together. */
static int as_open(const char *spec, as_opts *o, mk_dataset **d)
{
	size_t flen = mk_tensor_file_len(spec);
	char *file = strndup(spec, flen);
	int ret = file ? MK_OK : mk_error_set(MK_ENOMEM, "out of memory");

	if (ret == MK_OK && spec[flen] && o->d.dataset)
		ret = mk_error_set(MK_EINVAL, "'%s' names a dataset and so does --dataset: give one",
				   spec);
	if (spec[flen])
		o->d.dataset = spec + flen + 1;
	o->d.parallel = true;
	if ((ret = mk_par_agree(ret, NULL)) == MK_OK)
		ret = mk_dataset_open(file, &o->d, d);
	free(file);
	return ret;
}

static int as_exec(void *opts, const cli_args *a)
{
	as_opts *o = opts;
	mk_dataset *d = NULL;
	mk_attn_summary r = {0};
	/* by default on a terminal; --progress adds it under mpirun */
	bool progress = (o->progress || isatty(STDERR_FILENO)) &&
			(isatty(STDERR_FILENO) || mk_par_size() > 1);
	const char *csv_file = o->csv && strcmp(o->csv, "-") ? o->csv : NULL;
	as_source src;
	int ret;

	if ((ret = as_check(o, a)) || (ret = cli_root_check_output_dir(o->png)) ||
	    (ret = cli_root_check_output_dir(o->profile_csv)) ||
	    (ret = cli_root_check_output_dir(csv_file)))
		return ret;
	if ((ret = as_open(a->argv[0], o, &d)) ||
	    (ret = mk_attn_summary_dataset(d, o->d.max_memory, progress ? as_progress : NULL,
					   NULL, &r)))
		goto out;
	src = (as_source){.in = mk_dataset_get_info(d), .lengths = mk_dataset_lengths(d)};
	src.k = o->max_offset < src.in->n - 1 ? o->max_offset : src.in->n - 1;
	mk_par_done();
	if (mk_par_rank() == 0)
		ret = as_outputs(&r, &src, o);
out:
	mk_attn_summary_release(&r);
	mk_dataset_close(d);
	return ret;
}

const struct mk_cmd mk_cmd_attn_stats = {
	.name = "attn-stats",
	.parallel = true,
	.summary = "attention statistics per layer and head (diagonal, offsets, entropy)",
	.synopsis = "FILE.h5[:/PATH] [--dataset PATH] [--lengths PATH]\n"
		    " [--axes slh] [--csv FILE] [--json] [--png FILE.png]\n"
		    " [--profile-csv FILE] [--max-offset K] [--progress]",
	.opts = as_table,
	.opts_size = sizeof(as_opts),
	.exec = as_exec,
	.description =
"Reads attention probabilities P [samples, layers, heads, N, N] (float16/32/64,\n"
"used as float32; leading axes may be absent) and each sample's length N_i\n"
"from FILE.h5, and reports per layer and head, over the real N_i x N_i block\n"
"of each sample only (rows i < N_i, keys j < N_i; padding never counts):\n"
"  diag      mean of P[i][i] over real rows\n"
"  off       mean of P[i][j] over real cells with j != i\n"
"  first     mean of P[i][0] over real rows (attention on [CLS])\n"
"  last      mean of P[i][N_i - 1] over real rows (on the sample's [SEP])\n"
"  entropy   mean over real rows of -sum_j P[i][j] ln P[i][j] over real keys\n"
"            (nats, 0 ln 0 = 0; ln N_i for uniform attention)\n"
"  mass_min  the least row sum over real keys (1 when each row is a softmax\n"
"            over the real keys; less means attention leaked onto padding)\n"
"  profile   for each offset k = j - i, the mean of P[i][i+k] over the real\n"
"            cells at that offset, with count, the number of such cells\n"
"            (SparseBERT's argument that the diagonal matters least)\n"
"Means are cell-weighted: all samples' real rows (or cells) are pooled, so a\n"
"sample of length N_i weighs N_i rows, not 1.  A layer's 'mean' row is the\n"
"plain mean over its heads.  A mean over no cells is NaN (empty in CSV, null\n"
"in JSON).  Sums are in double and do not depend on the number of threads.\n",
	.notes =
"The probabilities are FILE.h5:/PATH's dataset, or --dataset's, else the\n"
"first of 'masks', 'mask', 'attentions', 'attention', 'attn' and 'probs', else\n"
"the only dataset of rank 2 to 5 besides the lengths.  --csv FILE writes the\n"
"CSV and still prints the table (or --json); --csv - prints the CSV instead.\n"
"\n"
"Under mpirun/srun (a build with MPI) the ranks share the (sample, layer)\n"
"blocks; each block is summed from zero and rank 0 adds the blocks in order,\n"
"so the output is the same, bit for bit, for any number of ranks.\n"
"\n"
"Integer data (masks) are refused: attn-stats needs probabilities.  Negative,\n"
"NaN or infinite values in a real cell are an error naming the cell.  Outputs\n"
"are written to a temporary file and renamed, so a failure leaves an existing\n"
"file intact.\n",
	.examples =
"  maskkit attn-stats attn.h5 --png profile.png --profile-csv profile.csv\n"
"  maskkit attn-stats attn.h5:/attentions --csv - --max-offset 8\n"
"  mpirun -n 4 maskkit attn-stats attn.h5 --json --mpi-io collective\n",
};
