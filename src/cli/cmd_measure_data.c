/*
 * maskkit measure on data sets: the Eq. 9 sparsity of masks or thresholded
 * attention maps stored per sample, layer and head in HDF5, or of patterns
 * (one per head with --heads-file) at each sample's own length, with the
 * classic figure at the maximum length beside it and per-layer, per-head and
 * per-sample breakdowns as a table, CSV or JSON, and a PNG heatmap.
 */
#include "config.h"
#include <cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"

typedef struct data_source {
	char describe[1400];  /* what was measured, for the report */
	char lengths[1300];   /* where the lengths came from */
	const char *rule;     /* the keep rule, as text */
	char rule_text[64];
	bool file;            /* a data file (else patterns) */
	bool no_toeplitz;     /* not checked (top-p keeps per row) */
} data_source;

static int data_double(const char *s, const char *opt, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(v))
		return mk_error_set(MK_EINVAL, "%s expects a number, got '%s'", opt, s);
	*out = v;
	return MK_OK;
}

int cli_data_option(int opt, const char *arg, cli_data_opts *o)
{
	int ret = MK_OK;

	switch (opt) {
	case CLI_OPT_DATASET: o->dataset = arg; break;
	case CLI_OPT_LENGTHS: o->lengths = arg; break;
	case CLI_OPT_AXES: o->axes = arg; break;
	case CLI_OPT_PNG: o->png = arg; break;
	case CLI_OPT_HEADS: o->heads_file = arg; break;
	case CLI_OPT_CSV: o->csv = true; break;
	case CLI_OPT_MPIIO: /* not a data-set option of its own: patterns refuse it */
		o->mpi_io_given = true;
		ret = cli_mpi_io(arg, &o->collective);
		return ret ? ret : 1;
	case CLI_OPT_THRESHOLD:
	case CLI_OPT_TOPP:
		if (o->keep.rule != MK_KEEP_NONZERO)
			return mk_error_set(MK_EINVAL, "give one of --threshold and --top-p");
		o->keep.rule = opt == CLI_OPT_TOPP ? MK_KEEP_TOP_P : MK_KEEP_THRESHOLD;
		ret = data_double(arg, opt == CLI_OPT_TOPP ? "--top-p" : "--threshold",
				  &o->keep.value);
		if (ret == MK_OK && opt == CLI_OPT_TOPP && !(o->keep.value > 0 && o->keep.value <= 1))
			ret = mk_error_set(MK_EINVAL, "--top-p must be in (0, 1], got '%s'", arg);
		break;
	case CLI_OPT_BY:
		if (strcmp(arg, "layer") && strcmp(arg, "head") && strcmp(arg, "sample"))
			return mk_error_set(MK_EINVAL, "--by takes layer, head or sample, not '%s'", arg);
		o->by = arg[0] == 'l' ? 'l' : arg[0] == 'h' ? 'h' : 's';
		break;
	default:
		return 0;
	}
	o->any = true;
	return ret ? ret : 1;
}

/* The file part of "FILE.h5" or "FILE.h5:/dataset" (length), 0 if arg
 * names no such file. */
static size_t data_h5_file(const char *arg)
{
	size_t n = strlen(arg);
	const char *colon = strstr(arg, ".h5:") ? strstr(arg, ".h5:") + 3
			  : strstr(arg, ".hdf5:") ? strstr(arg, ".hdf5:") + 5 : NULL;
	char file[1024];
	struct stat st;

	if (colon)
		n = (size_t)(colon - arg);
	else if (!((n > 3 && !strcmp(arg + n - 3, ".h5")) || (n > 5 && !strcmp(arg + n - 5, ".hdf5"))))
		return 0;
	if (n >= sizeof file)
		return 0;
	memcpy(file, arg, n);
	file[n] = '\0';
	return stat(file, &st) == 0 && S_ISREG(st.st_mode) ? n : 0;
}

static bool data_is_h5(const char *arg) { return data_h5_file(arg) > 0; }

/* An operand named like an HDF5 file that is not there: MK_EIO, rather than
 * reading it as a pattern expression. */
static int data_missing_h5(const char *arg)
{
	const char *ext = strstr(arg, ".h5") ? strstr(arg, ".h5") : strstr(arg, ".hdf5");
	size_t len = ext ? (size_t)(ext - arg) + (ext[1] == 'h' && ext[2] == '5' ? 3 : 5) : 0;
	struct stat st;
	char file[1024];

	if (!ext || (arg[len] && arg[len] != ':') || len >= sizeof file)
		return MK_OK;
	memcpy(file, arg, len);
	file[len] = '\0';
	if (stat(file, &st) != 0)
		return mk_error_errno(errno, "'%s'", file);
	if (!S_ISREG(st.st_mode))
		return mk_error_set(MK_EIO, "'%s': not a regular file", file);
	return MK_OK;
}

bool cli_data_mode(const char *arg, const cli_data_opts *o)
{
	mk_dataset *d = NULL;
	bool deep;

	if (o->any || !arg)
		return true;
	if (!data_is_h5(arg))
		return false;
	if (arg[data_h5_file(arg)])
		return true; /* FILE.h5:/dataset */
	/* a look at the shape only: no lengths are read, nothing is allocated */
	if (mk_dataset_open(arg, &(mk_dataset_opts){.max_memory = UINT64_MAX, .shape_only = true},
			    &d) != MK_OK)
		return true; /* its error is the data set's */
	/* a plain 2-D mask keeps the single-mask report (structure, tiles) */
	deep = mk_dataset_get_info(d)->rank > 2 || mk_dataset_get_info(d)->lengths_name;
	mk_dataset_close(d);
	return deep;
}

int cli_data_choose(const char *arg, const cli_data_opts *o, bool *data)
{
	int ret = MK_OK, mode;

	*data = false;
	if (mk_par_size() > 1 && arg && (ret = mk_par_agree(data_missing_h5(arg), NULL)))
		return ret;
	*data = cli_data_mode(arg, o);
	mode = *data;
	return mk_par_same(&mode, sizeof mode, "whether the operand is a data set differs from "
			   "the other ranks (every node must see the same files)");
}

/* ---- measuring ------------------------------------------------------------- */

static void data_progress(int64_t done, int64_t total, void *arg)
{
	(void)arg;
	fprintf(stderr, "\rmaskkit: %" PRId64 "/%" PRId64 " samples (%.0f%%)%s", done, total,
		100.0 * (double)done / (double)total, done >= total ? "\n" : "");
}

static void data_rule_text(const mk_keep *k, data_source *src)
{
	if (k->rule == MK_KEEP_THRESHOLD)
		snprintf(src->rule_text, sizeof src->rule_text, "p >= %g", k->value);
	else if (k->rule == MK_KEEP_TOP_P)
		snprintf(src->rule_text, sizeof src->rule_text, "top-p %g per row", k->value);
	else
		snprintf(src->rule_text, sizeof src->rule_text, "nonzero");
	src->rule = src->rule_text;
}

static int data_file(const char *path, const cli_data_opts *o, const cli_mask_opts *m,
		     mk_ds_measure *r, data_source *src)
{
	mk_dataset_opts dopts = {.dataset = o->dataset, .lengths = o->lengths, .axes = o->axes,
				 .max_memory = m->bind.max_memory, .parallel = true,
				 .collective = o->collective};
	mk_dataset *d = NULL;
	const mk_dataset_info *in;
	size_t flen = data_h5_file(path);
	char *file = strndup(path, flen);
	int ret = file ? MK_OK : mk_error_set(MK_ENOMEM, "out of memory");

	if (ret == MK_OK && path[flen] && o->dataset)
		ret = mk_error_set(MK_EINVAL, "'%s' names a dataset and so does --dataset: give one",
				   path);
	if (path[flen])
		dopts.dataset = path + flen + 1;
	/* every rank opens the file together, or none does */
	if ((ret = mk_par_agree(ret, NULL)) == MK_OK)
		ret = mk_dataset_open(file, &dopts, &d);
	free(file);
	if (ret)
		return ret;
	in = mk_dataset_get_info(d);
	if (m->bind.n && m->bind.n != in->n)
		ret = mk_error_set(MK_EINVAL, "--n %" PRId64 " does not match the data's N = %" PRId64,
				   m->bind.n, in->n);
	snprintf(src->describe, sizeof src->describe, "%s:%s (%s, %" PRId64 " samples x %" PRId64
		 " layers x %" PRId64 " heads x %" PRId64 " x %" PRId64 ")", in->path, in->name,
		 in->dtype, in->samples, in->layers, in->heads, in->n, in->n);
	snprintf(src->lengths, sizeof src->lengths, "%s", in->lengths_name ? in->lengths_name : "");
	src->file = true;
	data_rule_text(&o->keep, src);
	src->no_toeplitz = o->keep.rule == MK_KEEP_TOP_P;
	if ((ret = mk_par_agree(ret, NULL)) == MK_OK)
		ret = mk_dataset_measure(d, &o->keep, m->progress && (isatty(2) || mk_par_size() > 1) ? data_progress : NULL,
					 NULL, r);
	mk_dataset_close(d);
	return ret;
}

static int data_patterns(const char *expr, const cli_data_opts *o, const cli_mask_opts *m,
			 mk_ds_measure *r, data_source *src)
{
	char **exprs = NULL;
	const char *one[1] = {expr};
	int64_t layers = 0, heads = 1, *len = NULL, count = 0, fixed = m->bind.n;
	int ret = MK_OK;

	if (o->keep.rule != MK_KEEP_NONZERO || o->dataset || o->axes || o->mpi_io_given)
		return mk_error_set(MK_EINVAL, "--threshold, --top-p, --dataset, --axes and --mpi-io are "
				    "for data files (FILE.h5), not patterns");
	if (o->heads_file)
		ret = cli_heads_file(o->heads_file, &exprs, &layers, &heads);
	if (ret == MK_OK && o->lengths)
		ret = mk_lengths_read(o->lengths, m->bind.n, &len, &count);
	else if (ret == MK_OK && !fixed)
		ret = mk_error_set(MK_EINVAL, "give --lengths FILE (or --n N for one length)");
	else if (ret == MK_OK && !(len = malloc(sizeof *len)))
		ret = mk_error_set(MK_ENOMEM, "out of memory");
	else if (ret == MK_OK)
		len[count++] = fixed;
	if (ret == MK_OK)
		ret = mk_lengths_measure(exprs ? (const char *const *)exprs : one, layers ? layers : 1,
					 heads, len, count, fixed, m->bind.seed, m->bind.max_memory, r);
	if (o->heads_file)
		snprintf(src->describe, sizeof src->describe, "%s (%" PRId64 " layers x %" PRId64
			 " heads of patterns)", o->heads_file, layers ? layers : 1, heads);
	else
		snprintf(src->describe, sizeof src->describe, "%s", expr);
	snprintf(src->lengths, sizeof src->lengths, "%s", o->lengths ? o->lengths : "");
	src->rule = "the pattern at each sample's length";
	cli_heads_free(exprs, (size_t)((layers ? layers : 1) * heads));
	free(len);
	return ret;
}

/* ---- output ---------------------------------------------------------------- */

static void data_length_stats(const mk_ds_measure *r, int64_t *lo, double *mean, int64_t *hi)
{
	double sum = 0;

	*lo = *hi = r->lengths[0];
	for (int64_t i = 0; i < r->samples; i++) {
		*lo = r->lengths[i] < *lo ? r->lengths[i] : *lo;
		*hi = r->lengths[i] > *hi ? r->lengths[i] : *hi;
		sum += (double)r->lengths[i];
	}
	*mean = sum / (double)r->samples;
}

static const char *data_toeplitz(const data_source *src, uint8_t level)
{
	if (src->no_toeplitz)
		return "-";
	return level == MK_TOEPLITZ_YES ? "yes" : level == MK_TOEPLITZ_INTERIOR ? "interior" : "no";
}

static void data_print(const mk_ds_measure *r, const data_source *src, char by, bool csv)
{
	int64_t lo, hi;
	double mean;
	const char *sep = csv ? "," : "  ";

	if (!csv) {
		data_length_stats(r, &lo, &mean, &hi);
		printf("data         %s\n", src->describe);
		if (src->lengths[0])
			printf("lengths      %s: min %" PRId64 ", mean %.2f, max %" PRId64 "\n",
			       src->lengths, lo, mean, hi);
		else
			printf("lengths      none: every sample is N = %" PRId64 " long\n", r->n);
		printf("cells        %s\n", src->rule);
		printf("sparsity     %.6f   (Eq. 9: mean over %" PRId64 " samples x %" PRId64
		       " layers x %" PRId64 " heads of 1 - |B|/N_i^2)\n", r->rho, r->samples,
		       r->layers, r->heads);
		printf("classic      %.6f   (every sample counted at N = %" PRId64 ")\n",
		       r->rho_classic, r->n);
		if (src->file)
			printf("empty rows   %" PRIu64 "   (real rows with no key kept)\n",
			       r->empty_rows);
		if (by)
			printf("\n");
	}
	if (by == 'l' || (csv && !by)) {
		printf(csv ? "layer%ssparsity\n" : "layer%s  sparsity\n", sep);
		for (int64_t l = 0; l < r->layers; l++)
			printf(csv ? "%" PRId64 "%s%.9g\n" : "%5" PRId64 "%s%.6f\n", l, sep,
			       r->by_layer[l]);
	} else if (by == 'h') {
		printf(csv ? "layer%shead%ssparsity%stoeplitz\n" : "layer%s head%s  sparsity%stoeplitz\n",
		       sep, sep, sep);
		for (int64_t a = 0; a < r->layers * r->heads; a++)
			printf(csv ? "%" PRId64 "%s%" PRId64 "%s%.9g%s%s\n"
				   : "%5" PRId64 "%s%5" PRId64 "%s%.6f%s%s\n", a / r->heads, sep,
			       a % r->heads, sep, r->by_head[a], sep, data_toeplitz(src, r->toeplitz[a]));
	} else if (by == 's') {
		printf(csv ? "sample%slength%ssparsity\n" : "sample%s length%s  sparsity\n", sep, sep);
		for (int64_t i = 0; i < r->samples; i++)
			printf(csv ? "%" PRId64 "%s%" PRId64 "%s%.9g\n"
				   : "%6" PRId64 "%s%7" PRId64 "%s%.6f\n", i, sep, r->lengths[i], sep,
			       r->by_sample[i]);
	}
}

static cJSON *data_json(const mk_ds_measure *r, const data_source *src)
{
	cJSON *o = cJSON_CreateObject(), *heads;

	cJSON_AddStringToObject(o, "data", src->describe);
	if (src->lengths[0])
		cJSON_AddStringToObject(o, "lengths_from", src->lengths);
	else
		cJSON_AddNullToObject(o, "lengths_from");
	cJSON_AddStringToObject(o, "cells", src->rule);
	cJSON_AddNumberToObject(o, "samples", (double)r->samples);
	cJSON_AddNumberToObject(o, "layers", (double)r->layers);
	cJSON_AddNumberToObject(o, "heads", (double)r->heads);
	cJSON_AddNumberToObject(o, "n", (double)r->n);
	cJSON_AddNumberToObject(o, "sparsity", r->rho);
	cJSON_AddNumberToObject(o, "sparsity_classic", r->rho_classic);
	if (src->file)
		cJSON_AddNumberToObject(o, "empty_rows", (double)r->empty_rows);
	cJSON_AddItemToObject(o, "by_layer", cJSON_CreateDoubleArray(r->by_layer, (int)r->layers));
	heads = cJSON_AddArrayToObject(o, "by_head");
	for (int64_t a = 0; a < r->layers * r->heads; a++) {
		cJSON *x = cJSON_CreateObject();
		cJSON_AddNumberToObject(x, "layer", (double)(a / r->heads));
		cJSON_AddNumberToObject(x, "head", (double)(a % r->heads));
		cJSON_AddNumberToObject(x, "sparsity", r->by_head[a]);
		if (src->no_toeplitz)
			cJSON_AddNullToObject(x, "toeplitz");
		else
			cJSON_AddStringToObject(x, "toeplitz", data_toeplitz(src, r->toeplitz[a]));
		cJSON_AddItemToArray(heads, x);
	}
	cJSON_AddItemToObject(o, "by_sample", cJSON_CreateDoubleArray(r->by_sample,
								       (int)r->samples));
	{
		cJSON *len = cJSON_AddArrayToObject(o, "lengths");
		for (int64_t i = 0; i < r->samples; i++)
			cJSON_AddItemToArray(len, cJSON_CreateNumber((double)r->lengths[i]));
	}
	return o;
}

static int data_emit(const mk_ds_measure *r, const data_source *src, const cli_data_opts *o,
		     bool json)
{
	int ret;

	/* the picture first: when it fails, nothing has been printed */
	if (o->png && (ret = mk_png_heat(o->png, r->by_head, r->layers, r->heads)))
		return ret;
	if (json)
		return cli_json_out(data_json(r, src));
	data_print(r, src, o->by, o->csv);
	return MK_OK;
}

/* -1, or the exit code of a usage error. */
static int data_usage(const cli_data_opts *o, bool json, int argc, const char *arg)
{
	if (argc > 1)
		return cli_usage(&mk_cmd_measure, "a data set is measured on its own (%d operands)",
				 argc);
	if (!arg && !o->heads_file)
		return cli_usage(&mk_cmd_measure, "missing EXPR, FILE.h5 or --heads-file");
	if (arg && o->heads_file)
		return cli_usage(&mk_cmd_measure, "give an expression or --heads-file, not both");
	if (json && o->csv)
		return cli_usage(&mk_cmd_measure, "give one of --json and --csv");
	return -1;
}

int cli_data_measure(const cli_data_opts *o, const cli_mask_opts *m, bool json, int argc,
		     char **argv)
{
	mk_ds_measure r = {0};
	data_source src = {.rule = ""};
	const char *arg = argc > 0 ? argv[0] : NULL;
	int ret;

	if ((ret = cli_par_parsed(data_usage(o, json, argc, arg))) >= 0)
		return ret;
	if ((ret = cli_root_check_output_dir(o->png)))
		return cli_fail(ret);
	if (arg && (ret = data_missing_h5(arg)))
		return cli_fail(ret);
	if (arg && data_is_h5(arg)) {
		ret = data_file(arg, o, m, &r, &src);
	} else {
		/* patterns are measured on rank 0 alone */
		mk_par_done();
		if (mk_par_rank() != 0)
			return MK_EXIT_OK;
		ret = data_patterns(arg, o, m, &r, &src);
	}
	/* a failure not agreed on keeps the job's abort armed (mk_par_end) */
	if (ret == MK_OK)
		mk_par_done();
	if (ret == MK_OK && mk_par_rank() == 0)
		ret = data_emit(&r, &src, o, json);
	mk_ds_measure_free(&r);
	return ret ? cli_fail(ret) : MK_EXIT_OK;
}
