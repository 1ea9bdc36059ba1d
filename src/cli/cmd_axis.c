/*
 * maskkit axis: the learned pattern of Adaptive Axis Attention.  From row
 * and column importance indicators per sample and layer (HDF5), builds each
 * sample's axis mask B_jk = r_j + c_k - r_j c_k OR-ed with a local pattern,
 * and reports its Eq. 9 sparsity and the percentage of row-wise and
 * column-wise important tokens per layer (the AAA paper's Table 6), as a
 * table, CSV or JSON; optionally writes one sample's masks.
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

typedef struct axis_cli {
	const char *rows, *cols, *local, *lengths, *lengths_file, *csv, *out;
	double threshold;
	uint64_t seed, max_memory;
	int64_t sample;
	int by; /* 'l', 'h' or 's' */
	bool json, progress;
	mk_axis_opts a; /* what the library gets, from the above */
} axis_cli;

/* --lengths takes '' too (as none). */
static int axis_opt_lengths(void *opts, const char *arg)
{
	((axis_cli *)opts)->lengths = arg;
	return MK_OK;
}

static int axis_opt_by(void *opts, const char *arg)
{
	if (strcmp(arg, "layer") && strcmp(arg, "head") && strcmp(arg, "sample"))
		return mk_error_set(MK_EINVAL, "--by takes layer, head or sample, not '%s'", arg);
	((axis_cli *)opts)->by = arg[0];
	return MK_OK;
}

static const struct cli_opt axis_table[] = {
	CLI_OPT_STRING("rows", 0, axis_cli, rows, "PATH",
		       "the row indicators (default: 'rows', else 'row')"),
	CLI_OPT_STRING("cols", 0, axis_cli, cols, "PATH",
		       "the column indicators (default: 'cols', 'columns', else 'col')"),
	CLI_OPT_CALL("lengths", 0, axis_opt_lengths, "L", NULL,
		     "the lengths N_i [samples] in FILE.h5 (default: 'lengths' when present, else "
		     "every sample is N long; 'none' ignores them)"),
	CLI_OPT_READ_AS("lengths-file", 0, CLI_STRING, axis_cli, lengths_file, "SPEC",
		       "lengths from another file: F.h5, F.h5:/path, F.npy or a text file of "
		       "integers"),
	CLI_OPT_DOUBLE("threshold", 0, axis_cli, threshold, "T", -INFINITY, INFINITY, 0, "0.5",
		       "float indicators: important when >= T (integers and booleans: nonzero)"),
	CLI_OPT_READ_AS("with", 0, CLI_STRING, axis_cli, local, "EXPR",
		       "the local pattern (default local2, as the paper pairs them; 'none' for the "
		       "axis part alone)"),
	CLI_OPT_UINT("seed", 0, axis_cli, seed, "SEED", "0", "seed for random terms of EXPR without seed="),
	CLI_OPT_CALL("by", 0, axis_opt_by, "WHAT", "layer", "the table's groups: layer, head or sample"),
	CLI_OPT_FLAG("json", 0, axis_cli, json,
		     "machine-readable output (by_layer always; by_head or by_sample with --by)"),
	CLI_OPT_OUT("csv", 0, axis_cli, csv, "FILE",
		     "the groups as CSV ('-': standard output, instead of the table)"),
	CLI_OPT_WRITE("output", 'o', axis_cli, out, "FILE",
		     "also write sample K's masks B: uint8 [layers, heads, N_K, N_K] (heads 1 "
		     "without a heads axis), which maskkit measure F.h5 reads layer by layer"),
	CLI_OPT_INT("sample", 0, axis_cli, sample, "K", 0, (double)(INT64_C(1) << 62), NULL,
		    "the sample written with -o (0-based)"),
	CLI_OPT_SIZE("max-memory", 0, axis_cli, max_memory, "SIZE", "4G",
		     "limit for one sample's indicators"),
	CLI_OPT_FLAG("progress", 0, axis_cli, progress,
		     "report progress on stderr (the default, when it is a terminal)"),
	CLI_OPT_END,
};

/* What holds once the options are read. */
static int axis_check(const axis_cli *c, const cli_args *a)
{
	const struct mk_cmd *cmd = &mk_cmd_axis;
	bool csv_out = c->csv && !strcmp(c->csv, "-");

	if (a->argc < 1)
		return cli_usage_error(cmd, "missing FILE.h5");
	if (a->argc > 1)
		return cli_usage_error(cmd, "one FILE.h5 at a time (got %d operands)", a->argc);
	if (a->argv[0][mk_tensor_file_len(a->argv[0])])
		return cli_usage_error(cmd, "'%s': axis reads two datasets of FILE.h5; name them "
				       "with --rows and --cols", a->argv[0]);
	if (c->json && csv_out)
		return cli_usage_error(cmd, "give one of --json and --csv - (both write to "
				       "standard output)");
	if (c->lengths && c->lengths_file)
		return cli_usage_error(cmd, "give one of --lengths and --lengths-file");
	if (!!c->out != cli_given(a, "sample"))
		return cli_usage_error(cmd, c->out ? "-o needs --sample K (the sample whose masks "
				       "to write)" : "--sample K is for -o MASKS.h5");
	if (c->csv && !csv_out && c->out && !strcmp(c->csv, c->out))
		return cli_usage_error(cmd, "--csv and -o name the same file '%s'", c->csv);
	return MK_OK;
}

static void axis_progress(int64_t done, int64_t total, void *arg)
{
	(void)arg;
	if (done % 256 == 0 || done == total)
		fprintf(stderr, "\rmaskkit: %" PRId64 "/%" PRId64 " samples (%.0f%%)%s", done, total,
			100.0 * (double)done / (double)total, done >= total ? "\n" : "");
}

/* ---- output ---------------------------------------------------------------- */

static void axis_shape(const mk_axis_result *r, char *buf, size_t cap)
{
	if (r->rank == 4)
		snprintf(buf, cap, "%" PRId64 " samples x %" PRId64 " layers x %" PRId64 " heads x N = %"
			 PRId64, r->samples, r->layers, r->heads, r->n);
	else
		snprintf(buf, cap, "%" PRId64 " samples x %" PRId64 " layer%s x N = %" PRId64,
			 r->samples, r->layers, r->layers == 1 ? "" : "s", r->n);
}

static void axis_print_head(const char *file, const axis_cli *c, const mk_axis_result *r)
{
	char shape[160];

	axis_shape(r, shape, sizeof shape);
	printf("file         %s\n", file);
	printf("indicators   rows %s, cols %s (%s; %s)\n", r->rows_name, r->cols_name, mk_dtype_name(r->dtype),
	       shape);
	if (r->is_float)
		printf("important    p >= %g\n", c->a.threshold);
	printf("lengths      %s: min %" PRId64 ", mean %.2f, max %" PRId64 "\n",
	       *r->lengths_name ? r->lengths_name : c->lengths_file ? c->lengths_file
	       : "none (every sample is N long)", r->len_min, r->len_mean, r->len_max);
	printf("local        %s\n", r->local ? r->local : "none");
	printf("sparsity     %.6f   (Eq. 9: axis + local, mean over %" PRId64 " blocks of "
	       "1 - |B|/N_i^2)\n", r->all.rho, r->all.blocks);
	printf("  axis only  %.6f\n  local only %.6f\n", r->all.rho_axis, r->all.rho_local);
	printf("row-wise     %.2f%% of real tokens\ncolumn-wise  %.2f%% of real tokens\n\n",
	       r->all.rows_pct, r->all.cols_pct);
}

/* One table or CSV line: the group's labels are already written. */
static void axis_stat_line(FILE *f, const mk_axis_stat *s, bool csv)
{
	if (csv)
		fprintf(f, ",%.9g,%.9g,%.12g,%.12g,%.12g\n", s->rows_pct, s->cols_pct, s->rho,
			s->rho_axis, s->rho_local);
	else
		fprintf(f, " %8.2f %8.2f %10.6f %10.6f %10.6f\n", s->rows_pct, s->cols_pct, s->rho,
			s->rho_axis, s->rho_local);
}

static void axis_print_groups(FILE *f, const mk_axis_result *r, int by, bool csv)
{
	static const char *const tail_csv = ",rows_pct,cols_pct,rho,rho_axis,rho_local\n";
	static const char *const tail = "   rows %   cols %        rho  axis only local only\n";

	if (by == 'h') {
		fprintf(f, csv ? "layer,head%s" : "layer  head%s", csv ? tail_csv : tail);
		for (int64_t b = 0; b < r->layers * r->heads; b++) {
			fprintf(f, csv ? "%" PRId64 ",%" PRId64 : "%5" PRId64 " %5" PRId64,
				b / r->heads, b % r->heads);
			axis_stat_line(f, &r->by_head[b], csv);
		}
	} else if (by == 's') {
		fprintf(f, csv ? "sample,length%s" : "sample  length%s", csv ? tail_csv : tail);
		for (int64_t k = 0; k < r->samples; k++) {
			fprintf(f, csv ? "%" PRId64 ",%" PRId64 : "%6" PRId64 " %7" PRId64, k,
				r->lengths[k]);
			axis_stat_line(f, &r->by_sample[k], csv);
		}
	} else {
		fprintf(f, "layer%s", csv ? tail_csv : tail);
		for (int64_t l = 0; l < r->layers; l++) {
			fprintf(f, csv ? "%" PRId64 : "%5" PRId64, l);
			axis_stat_line(f, &r->by_layer[l], csv);
		}
	}
}

typedef struct axis_csv_arg {
	const mk_axis_result *r;
	int by;
} axis_csv_arg;

/* --csv FILE, through mk_write_atomic. */
static int axis_write_csv(void *file, void *arg)
{
	const axis_csv_arg *x = arg;
	axis_print_groups(file, x->r, x->by, true);
	return ferror((FILE *)file) ? mk_error_set(MK_ESYS, "write error: %s", strerror(errno ? errno : EIO)) : MK_OK;
}

static void axis_json_stat(cJSON *o, const mk_axis_stat *s)
{
	cJSON_AddNumberToObject(o, "rows_pct", s->rows_pct);
	cJSON_AddNumberToObject(o, "cols_pct", s->cols_pct);
	cJSON_AddNumberToObject(o, "rows", (double)s->rows);
	cJSON_AddNumberToObject(o, "cols", (double)s->cols);
	cJSON_AddNumberToObject(o, "tokens", (double)s->tokens);
	cJSON_AddNumberToObject(o, "rho", s->rho);
	cJSON_AddNumberToObject(o, "rho_axis", s->rho_axis);
	cJSON_AddNumberToObject(o, "rho_local", s->rho_local);
}

/* A list of groups: keys[0] = index / div, keys[1] = index % div. */
static void axis_json_groups(cJSON *o, const char *name, const mk_axis_stat *s, int64_t count,
			     const char *const keys[2], int64_t div, const int64_t *lengths)
{
	cJSON *list = cJSON_AddArrayToObject(o, name);

	for (int64_t k = 0; k < count; k++) {
		cJSON *x = cJSON_CreateObject();
		cJSON_AddNumberToObject(x, keys[0], (double)(k / div));
		if (keys[1])
			cJSON_AddNumberToObject(x, keys[1], (double)(k % div));
		if (lengths)
			cJSON_AddNumberToObject(x, "length", (double)lengths[k]);
		axis_json_stat(x, &s[k]);
		cJSON_AddItemToArray(list, x);
	}
}

static cJSON *axis_json(const char *file, const axis_cli *c, const mk_axis_result *r)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "file", file);
	cJSON_AddStringToObject(o, "rows_dataset", r->rows_name);
	cJSON_AddStringToObject(o, "cols_dataset", r->cols_name);
	cJSON_AddStringToObject(o, "dtype", mk_dtype_name(r->dtype));
	if (*r->lengths_name || c->lengths_file)
		cJSON_AddStringToObject(o, "lengths_from", *r->lengths_name ? r->lengths_name
					: c->lengths_file);
	else
		cJSON_AddNullToObject(o, "lengths_from");
	if (r->is_float)
		cJSON_AddNumberToObject(o, "threshold", c->a.threshold);
	if (r->local)
		cJSON_AddStringToObject(o, "local", r->local);
	else
		cJSON_AddNullToObject(o, "local");
	cJSON_AddNumberToObject(o, "samples", (double)r->samples);
	cJSON_AddNumberToObject(o, "layers", (double)r->layers);
	cJSON_AddNumberToObject(o, "heads", (double)r->heads);
	cJSON_AddNumberToObject(o, "n", (double)r->n);
	cJSON_AddNumberToObject(o, "length_min", (double)r->len_min);
	cJSON_AddNumberToObject(o, "length_mean", r->len_mean);
	cJSON_AddNumberToObject(o, "length_max", (double)r->len_max);
	axis_json_stat(o, &r->all);
	axis_json_groups(o, "by_layer", r->by_layer, r->layers, (const char *[]){"layer", NULL},
			 1, NULL);
	if (c->by == 'h')
		axis_json_groups(o, "by_head", r->by_head, r->layers * r->heads,
				 (const char *[]){"layer", "head"}, r->heads, NULL);
	if (c->by == 's')
		axis_json_groups(o, "by_sample", r->by_sample, r->samples,
				 (const char *[]){"sample", NULL}, 1, r->lengths);
	return o;
}

/* --csv FILE, then the report on stdout (the table, --json or --csv -). */
static int axis_emit(const char *file, const axis_cli *c, const mk_axis_result *r)
{
	bool csv_out = c->csv && !strcmp(c->csv, "-");
	int ret;

	if (c->csv && !csv_out &&
	    (ret = mk_write_atomic(c->csv, axis_write_csv, &(axis_csv_arg){.r = r, .by = c->by})))
		return ret;
	if (c->json)
		return cli_json_out(axis_json(file, c, r));
	if (!csv_out)
		axis_print_head(file, c, r);
	axis_print_groups(stdout, r, c->by, csv_out);
	return MK_OK;
}

/* ---- running ---------------------------------------------------------------- */

static int axis_options(axis_cli *c)
{
	mk_axis_opts *a = &c->a;

	mk_axis_opts_init(a);
	if (c->rows)
		a->rows = c->rows;
	if (c->cols)
		a->cols = c->cols;
	if (c->local)
		a->local = c->local;
	a->lengths = c->lengths && !strcmp(c->lengths, "none") ? "" : c->lengths;
	a->threshold = c->threshold;
	a->seed = c->seed;
	a->max_memory = c->max_memory;
	a->by_sample = c->by == 's';
	/* on a terminal only (--progress is its default there): never into a log */
	a->progress = isatty(STDERR_FILENO) ? axis_progress : NULL;
	if (c->lengths_file) {
		int64_t *len = NULL, count = 0;
		int ret = mk_lengths_read(c->lengths_file, 0, &len, &count);
		if (ret)
			return ret;
		a->given = len;
		a->ngiven = count;
	}
	return MK_OK;
}

static int axis_exec(void *opts, const cli_args *args)
{
	axis_cli *c = opts;
	mk_axis_result r = {0};
	const char *file;
	int ret;

	if ((ret = axis_check(c, args)))
		return ret;
	file = args->argv[0];
	/* the masks and the CSV file are written before anything is printed, so a
	 * failure leaves one error line and no report */
	if (c->out && (ret = cli_check_output_dir(c->out)))
		return ret;
	if (c->csv && strcmp(c->csv, "-") && (ret = cli_check_output_dir(c->csv)))
		return ret;
	if (!(ret = axis_options(c)) && !(ret = mk_axis_measure(file, &c->a, &r)) &&
	    !(c->out && (ret = mk_axis_write(file, &c->a, c->sample, c->out))))
		ret = axis_emit(file, c, &r);
	mk_axis_result_release(&r);
	free((int64_t *)c->a.given);
	return ret;
}

const struct mk_cmd mk_cmd_axis = {
	.name = "axis",
	.summary = "adaptive axis masks (AAA): Eq. 9 sparsity and important tokens per layer",
	.synopsis = "FILE.h5 [--rows PATH] [--cols PATH] [--lengths PATH |\n"
		    " --lengths-file SPEC] [--threshold T] [--with EXPR]\n"
		    " [--by layer|head|sample] [--json] [--csv FILE]\n"
		    " [-o MASKS.h5 --sample K]",
	.opts = axis_table,
	.opts_size = sizeof(axis_cli),
	.exec = axis_exec,
	.description =
"The learned pattern of Adaptive Axis Attention.  FILE.h5 holds row and\n"
"column importance indicators I^r, I^c of shape [samples, layers, N]\n"
"([samples, N] is one layer; [samples, layers, heads, N] has heads), as\n"
"integers or booleans (nonzero: important) or float probabilities\n"
"(important when >= T).  For each sample of real length N_i, layer and head\n"
"the axis mask over the N_i real tokens is\n"
"  B_jk = I^r_j + I^c_k - I^r_j I^c_k   (row j whole, column k whole),\n"
"OR-ed with a local pattern EXPR bound at N_i.  Prints the sparsity of\n"
"Eq. 9, rho = mean over samples, layers and heads of 1 - |B|/N_i^2, the\n"
"same for the axis part and the local pattern alone, and per layer the\n"
"percentage of real tokens that are row-wise and column-wise important\n"
"(the paper's Table 6).  The indicators are read one sample at a time.\n",
	.notes =
"--csv FILE writes the groups as CSV and still prints the table (or --json);\n"
"--csv - prints the CSV instead of the table.  Files are written to a\n"
"temporary name and renamed, so a failure leaves an existing file intact.\n",
	.examples =
"  maskkit axis attn.h5 --by head\n"
"  maskkit axis attn.h5 --with none --by sample --csv -\n"
"  maskkit axis attn.h5 -o masks.h5 --sample 0 --json\n",
};
