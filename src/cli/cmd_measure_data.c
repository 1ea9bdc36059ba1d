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
#include "plot.h"

typedef struct data_source {
	char describe[1400];  /* what was measured, for the report */
	char lengths[1300];   /* where the lengths came from */
	const char *rule;     /* the keep rule, as text */
	char rule_text[64];
	bool file;            /* a data file (else patterns) */
	bool no_toeplitz;     /* not checked (top-p keeps per row) */
} data_source;

/* ---- which mode ------------------------------------------------------------ */

/* An operand whose file part ends in .h5 or .hdf5 ("FILE.h5", "FILE.h5:/PATH")
 * must exist in data-set mode: MK_EIO naming it, rather than reading it as a
 * pattern expression. */
static int data_missing_h5(const char *spec)
{
	size_t flen = mk_tensor_file_len(spec);
	char *file;
	struct stat st;
	int ret = MK_OK;

	if (mk_tensor_format(spec) != MK_FMT_H5)
		return MK_OK;
	if (!(file = strndup(spec, flen)))
		return mk_error_set(MK_ENOMEM, "out of memory");
	if (stat(file, &st) != 0)
		ret = mk_error_errno(errno, "'%s'", file);
	else if (!S_ISREG(st.st_mode))
		ret = mk_error_set(MK_EIO, "'%s': not a regular file", file);
	free(file);
	return ret;
}

/* The rule of measure's --help for one operand: true when spec names an
 * HDF5 file (.h5, .hdf5), or a dataset of one (FILE.h5:/PATH), that is not a
 * plain 2-D mask without lengths (a file HDF5 cannot open counts as a data
 * set: its error is then the data set's). */
static bool data_operand(const char *spec)
{
	size_t flen = mk_tensor_file_len(spec);
	mk_dataset *d = NULL;
	const mk_dataset_info *in;
	struct stat st;
	char *file;
	bool deep, there;

	if (mk_tensor_format(spec) != MK_FMT_H5 || strpbrk(spec, " \t|&+()~!"))
		return false; /* not HDF5, or an expression ('local2 & a.h5:/m') */
	if (!(file = strndup(spec, flen)))
		return true; /* out of memory: the data set's error says so */
	there = stat(file, &st) == 0 && S_ISREG(st.st_mode);
	/* a look at the shape only: no lengths are read, nothing is allocated */
	if (!there) {
		deep = spec[flen] != '\0'; /* FILE.h5:/PATH must exist; else an expression */
	} else if (mk_dataset_open(file, &(mk_dataset_opts){.max_memory = UINT64_MAX,
			.shape_only = true, .dataset = spec[flen] ? spec + flen + 1 : NULL}, &d)) {
		deep = true;
	} else {
		in = mk_dataset_get_info(d);
		deep = in->rank > 2 || in->lengths_name;
		mk_dataset_close(d);
	}
	free(file);
	return deep;
}

int cli_data_choose(int argc, char **argv, const cli_data_opts *o, bool *data)
{
	char why[1200] = "";
	int mode;

	*data = o->any || argc == 0;
	for (int k = 0; k < argc && !*data; k++)
		*data = data_operand(argv[k]);
	if (mk_par_size() == 1)
		return MK_OK;
	/* the rank that differs says why: a file it lacks, or one that differs */
	for (int k = 0; k < argc && !*why; k++)
		if (mk_tensor_format(argv[k]) == MK_FMT_H5 && data_missing_h5(argv[k]))
			snprintf(why, sizeof why, "%s", mk_error());
	if (!*why)
		snprintf(why, sizeof why, "whether the operand is a data set differs from the other "
			 "ranks (every node must see the same files)");
	mode = *data;
	return mk_par_same(&mode, sizeof mode, why);
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
	size_t flen = mk_tensor_file_len(path);
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
		 mk_dtype_name(in->dtype), in->samples, in->layers, in->heads, in->n, in->n);
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

static void data_print_head(const mk_ds_measure *r, const data_source *src)
{
	int64_t lo, hi;
	double mean;

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
		printf("empty rows   %" PRIu64 "   (real rows with no key kept)\n", r->empty_rows);
}

/* The breakdown `by` ('l', 'h', 's') as a table or as CSV. */
static void data_print_groups(FILE *f, const mk_ds_measure *r, const data_source *src, int by,
			      bool csv)
{
	const char *sep = csv ? "," : "  ";

	if (by == 'l') {
		fprintf(f, csv ? "layer%ssparsity\n" : "layer%s  sparsity\n", sep);
		for (int64_t l = 0; l < r->layers; l++)
			fprintf(f, csv ? "%" PRId64 "%s%.9g\n" : "%5" PRId64 "%s%.6f\n", l, sep,
				r->by_layer[l]);
	} else if (by == 'h') {
		fprintf(f, csv ? "layer%shead%ssparsity%stoeplitz\n"
			       : "layer%s head%s  sparsity%stoeplitz\n", sep, sep, sep);
		for (int64_t a = 0; a < r->layers * r->heads; a++)
			fprintf(f, csv ? "%" PRId64 "%s%" PRId64 "%s%.9g%s%s\n"
				       : "%5" PRId64 "%s%5" PRId64 "%s%.6f%s%s\n", a / r->heads, sep,
				a % r->heads, sep, r->by_head[a], sep,
				data_toeplitz(src, r->toeplitz[a]));
	} else if (by == 's') {
		fprintf(f, csv ? "sample%slength%ssparsity\n" : "sample%s length%s  sparsity\n", sep,
			sep);
		for (int64_t i = 0; i < r->samples; i++)
			fprintf(f, csv ? "%" PRId64 "%s%" PRId64 "%s%.9g\n"
				       : "%6" PRId64 "%s%7" PRId64 "%s%.6f\n", i, sep, r->lengths[i],
				sep, r->by_sample[i]);
	}
}

typedef struct data_csv_arg {
	const mk_ds_measure *r;
	const data_source *src;
	int by;
} data_csv_arg;

/* --csv FILE, through mk_write_atomic. */
static int data_write_csv(void *file, void *arg)
{
	const data_csv_arg *x = arg;
	data_print_groups(file, x->r, x->src, x->by, true);
	return ferror((FILE *)file) ? mk_error_set(MK_ESYS, "write error: %s", strerror(errno ? errno : EIO)) : MK_OK;
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

/* The picture and --csv FILE first (when one fails, nothing has been
 * printed), then the report on stdout: the table, --json or --csv -. */
static int data_emit(const mk_ds_measure *r, const data_source *src, const cli_data_opts *o,
		     bool json)
{
	bool csv_out = o->csv && !strcmp(o->csv, "-");
	int by = o->by ? o->by : o->csv ? 'l' : 0; /* CSV: by layer unless --by */
	int ret;

	if (o->png && (ret = mk_png_heat(o->png, r->by_head, r->layers, r->heads)))
		return ret;
	if (o->csv && !csv_out &&
	    (ret = mk_write_atomic(o->csv, data_write_csv,
				   &(data_csv_arg){.r = r, .src = src, .by = by})))
		return ret;
	if (json)
		return cli_json_out(data_json(r, src));
	if (csv_out) {
		data_print_groups(stdout, r, src, by, true);
		return MK_OK;
	}
	data_print_head(r, src);
	if (o->by) {
		printf("\n");
		data_print_groups(stdout, r, src, o->by, false);
	}
	return MK_OK;
}

/* What holds once the mode is known: the operands, one report on stdout,
 * distinct outputs. */
static int data_usage(const cli_data_opts *o, bool json, int argc, const char *arg)
{
	const struct mk_cmd *c = &mk_cmd_measure;

	if (argc > 1)
		return cli_usage_error(c, "a data set is measured on its own (%d operands)", argc);
	if (!arg && !o->heads_file)
		return cli_usage_error(c, "missing EXPR, FILE.h5 or --heads-file");
	if (arg && o->heads_file)
		return cli_usage_error(c, "give an expression or --heads-file, not both");
	if (json && o->csv && !strcmp(o->csv, "-"))
		return cli_usage_error(c, "give one of --json and --csv - (both write to standard "
				       "output)");
	if (o->png && o->csv && !strcmp(o->png, o->csv))
		return cli_usage_error(c, "--png and --csv name the same file '%s'", o->png);
	return MK_OK;
}

int cli_data_measure(const cli_data_opts *o, const cli_mask_opts *m, bool json, int argc,
		     char **argv)
{
	mk_ds_measure r = {0};
	data_source src = {.rule = ""};
	const char *arg = argc > 0 ? argv[0] : NULL;
	const char *csv_file = o->csv && strcmp(o->csv, "-") ? o->csv : NULL;
	int ret;

	/* the same on every rank; agreed, as the collective steps before it were */
	if ((ret = mk_par_agree(data_usage(o, json, argc, arg), NULL)) ||
	    (ret = cli_root_check_output_dir(o->png)) ||
	    (ret = cli_root_check_output_dir(csv_file)) ||
	    (arg && (ret = mk_par_agree(data_missing_h5(arg), NULL))))
		return ret;
	if (arg && mk_tensor_format(arg) == MK_FMT_H5) {
		ret = data_file(arg, o, m, &r, &src);
	} else {
		/* patterns are measured on rank 0 alone */
		mk_par_done();
		if (mk_par_rank() != 0)
			return MK_OK;
		ret = data_patterns(arg, o, m, &r, &src);
	}
	/* a failure not agreed on keeps the job's abort armed (mk_par_end) */
	if (ret == MK_OK)
		mk_par_done();
	if (ret == MK_OK && mk_par_rank() == 0)
		ret = data_emit(&r, &src, o, json);
	mk_ds_measure_release(&r);
	return ret;
}
