/*
 * maskkit attn-stats: where attention goes, per layer and head, in a data
 * set of attention probabilities -- the mean on the diagonal and off it, on
 * the first and last real token, row entropy, row mass, and the mean by
 * offset j - i (SparseBERT's profile), over each sample's real tokens; as a
 * table, CSV or JSON, with the profile as CSV and as a gnuplot figure.
 */
#include "config.h"
#include <cJSON.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

#define AS_DEFAULT_MAX_OFFSET 32

enum {
	AS_OPT_DATASET = 512, AS_OPT_LENGTHS, AS_OPT_AXES, AS_OPT_CSV, AS_OPT_PROFILE_CSV,
	AS_OPT_PLOT, AS_OPT_MAX_OFFSET, AS_OPT_MPIIO
};

typedef struct as_opts {
	cli_mask_opts m;
	mk_dataset_opts d;
	const char *profile_csv, *plot;
	int64_t max_offset; /* 0: the default */
	bool csv, json;
} as_opts;

/* What was read, for the reports. */
typedef struct as_source {
	const mk_dataset_info *in;
	const int64_t *lengths;
	int64_t k; /* offsets shown: -k..k */
} as_source;

static int as_option(int opt, const char *arg, void *ctx)
{
	as_opts *o = ctx;
	switch (opt) {
	case AS_OPT_DATASET:
		o->d.dataset = arg;
		return *arg ? MK_OK : mk_error_set(MK_EINVAL, "--dataset needs a dataset path");
	case AS_OPT_LENGTHS:
		o->d.lengths = arg;
		return MK_OK;
	case AS_OPT_AXES:
		o->d.axes = arg;
		return MK_OK;
	case AS_OPT_CSV:
		o->csv = true;
		return MK_OK;
	case CLI_OPT_JSON:
		o->json = true;
		return MK_OK;
	case AS_OPT_PROFILE_CSV:
		o->profile_csv = arg;
		return MK_OK;
	case AS_OPT_PLOT:
		o->plot = arg;
		return MK_OK;
	case AS_OPT_MPIIO:
		return cli_mpi_io(arg, &o->d.collective);
	case AS_OPT_MAX_OFFSET:
		return cli_i64(arg, "--max-offset", 1, MK_N_MAX, &o->max_offset);
	default:
		return mk_error_set(MK_EINVAL, "unexpected option");
	}
}

static int as_parse(int argc, char **argv, as_opts *o)
{
	static const struct option longopts[] = {
		{"dataset", required_argument, NULL, AS_OPT_DATASET},
		{"lengths", required_argument, NULL, AS_OPT_LENGTHS},
		{"axes", required_argument, NULL, AS_OPT_AXES},
		{"csv", no_argument, NULL, AS_OPT_CSV},
		{"json", no_argument, NULL, CLI_OPT_JSON},
		{"profile-csv", required_argument, NULL, AS_OPT_PROFILE_CSV},
		{"plot", required_argument, NULL, AS_OPT_PLOT},
		{"max-offset", required_argument, NULL, AS_OPT_MAX_OFFSET},
		{"mpi-io", required_argument, NULL, AS_OPT_MPIIO},
		{"max-memory", required_argument, NULL, CLI_OPT_MAXMEM},
		{"progress", no_argument, NULL, CLI_OPT_PROGRESS},
		{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
	int ret = cli_parse(&mk_cmd_attn_stats, argc, argv, longopts, &o->m, as_option, o);
	if (ret >= 0)
		return ret;
	if (o->m.out || o->m.bind.n)
		return cli_usage(&mk_cmd_attn_stats, "-n and -o are not options of attn-stats");
	if (o->csv && o->json)
		return cli_usage(&mk_cmd_attn_stats, "give one of --csv and --json");
	if (optind >= argc)
		return cli_usage(&mk_cmd_attn_stats, "missing FILE.h5");
	if (argc - optind > 1)
		return cli_usage(&mk_cmd_attn_stats, "one FILE.h5 at a time, got %d", argc - optind);
	if (o->plot && o->profile_csv && !strcmp(o->plot, o->profile_csv))
		return cli_usage(&mk_cmd_attn_stats, "--plot and --profile-csv name the same file "
				 "'%s'", o->plot);
	return -1;
}

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
	       " heads x %" PRId64 " x %" PRId64 ")\n", in->path, in->name, in->dtype, in->samples,
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

static void as_print_csv(const mk_attn_summary *r)
{
	printf("layer,head,diag,off,first,last,entropy,mass_min,mass_max\n");
	for (int64_t k = 0; k < r->layers * r->heads; k++) {
		const mk_attn_head_summary *s = &r->head[k];
		printf("%" PRId64 ",%" PRId64 ",", k / r->heads, k % r->heads);
		as_csv_num(stdout, s->diag, ",");
		as_csv_num(stdout, s->off, ",");
		as_csv_num(stdout, s->first, ",");
		as_csv_num(stdout, s->last, ",");
		as_csv_num(stdout, s->entropy, ",");
		as_csv_num(stdout, s->mass_min, ",");
		as_csv_num(stdout, s->mass_max, "\n");
	}
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
	cJSON_AddStringToObject(o, "dtype", in->dtype);
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
	return ferror(f) ? mk_error_set(MK_ESYS, "write error") : MK_OK;
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
		return mk_error_set(MK_ERANGE, "--plot draws at most 4095 layers, got %" PRId64,
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
	int ret = MK_OK;

	if (o->json)
		ret = as_emit_json(r, src);
	else if (o->csv)
		as_print_csv(r);
	else
		as_print(r, src);
	if (ret == MK_OK && o->profile_csv)
		ret = mk_write_atomic(o->profile_csv, as_write_profile,
				      &(as_profile_arg){.r = r, .k = src->k});
	if (ret == MK_OK && o->plot)
		ret = as_plot(o->plot, r, src);
	return ret;
}

static int as_run(int argc, char **argv)
{
	as_opts o = {0};
	mk_dataset *d = NULL;
	mk_attn_summary r = {0};
	as_source src;
	int ret;

	cli_mask_defaults(&o.m);
	if ((ret = cli_par_parsed(as_parse(argc, argv, &o))) >= 0)
		return ret;
	if ((ret = cli_root_check_output_dir(o.plot)) ||
	    (ret = cli_root_check_output_dir(o.profile_csv)))
		return cli_fail(ret);
	o.d.max_memory = o.m.bind.max_memory;
	o.d.parallel = true;
	if ((ret = mk_dataset_open(argv[optind], &o.d, &d)) ||
	    (ret = mk_attn_summary_dataset(d, o.m.bind.max_memory,
					   o.m.progress && (isatty(2) || mk_par_size() > 1) ? as_progress : NULL, NULL, &r)))
		goto out;
	src = (as_source){.in = mk_dataset_get_info(d), .lengths = mk_dataset_lengths(d)};
	src.k = o.max_offset ? o.max_offset : AS_DEFAULT_MAX_OFFSET;
	if (src.k > src.in->n - 1)
		src.k = src.in->n - 1;
	mk_par_done();
	if (mk_par_rank() == 0)
		ret = as_outputs(&r, &src, &o);
out:
	mk_attn_summary_release(&r);
	mk_dataset_close(d);
	return ret ? cli_fail(ret) : MK_EXIT_OK;
}

const struct mk_cmd mk_cmd_attn_stats = {
	.name = "attn-stats",
	.parallel = true,
	.summary = "attention statistics per layer and head (diagonal, offsets, entropy)",
	.run = as_run,
	.usage =
"usage: maskkit attn-stats FILE.h5 [--dataset PATH] [--lengths PATH] [--axes slh]\n"
"                          [--csv | --json] [--profile-csv FILE] [--plot FILE.png]\n"
"                          [--max-offset K] [--progress]\n"
"\n"
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
"in JSON).  Sums are in double and do not depend on the number of threads.\n"
"\n"
"options:\n"
"      --dataset PATH     the probabilities (default: the first of 'masks',\n"
"                         'mask', 'attentions', 'attention' and 'probs', else\n"
"                         the only dataset of rank 2 to 5 besides the lengths)\n"
"      --lengths PATH     the lengths dataset [samples] in FILE (default\n"
"                         'lengths' when present; '' for none: all N long)\n"
"      --axes AXES        the leading axes in order, from 's' samples, 'l'\n"
"                         layers, 'h' heads (default by rank: slh, lh, h, none)\n"
"      --csv              one CSV row per (layer, head): layer, head, diag, off,\n"
"                         first, last, entropy, mass_min, mass_max\n"
"      --json             everything, with the profiles of offsets -K..K per\n"
"                         layer and head\n"
"      --profile-csv FILE the profile over offsets -K..K: offset, count, the\n"
"                         mean over heads of each layer, then each head\n"
"      --plot FILE.png    gnuplot figure of each layer's mean profile over\n"
"                         offsets -K..K (log scale when all values are > 0)\n"
"      --max-offset K     offsets shown in --json, --profile-csv and --plot\n"
"                         (default 32, at most N - 1)\n"
"      --max-memory S     limit for one block and the sums (default 4G)\n"
"      --progress         report progress on stderr (when it is a terminal, or\n"
"                         under mpirun)\n"
"      --mpi-io MODE      under mpirun: independent (default) or collective reads\n"
"  -h, --help             this help\n"
"\n"
"Under mpirun/srun (a build with MPI) the ranks share the (sample, layer)\n"
"blocks; each block is summed from zero and rank 0 adds the blocks in order,\n"
"so the output is the same, bit for bit, for any number of ranks.\n"
"\n"
"Integer data (masks) are refused: attn-stats needs probabilities.  Negative,\n"
"NaN or infinite values in a real cell are an error naming the cell.  Outputs\n"
"are written to a temporary file and renamed, so a failure leaves an existing\n"
"file intact.\n"
"\n"
"exit status: 0 success, 2 bad input, 1 internal or system error.\n",
};
