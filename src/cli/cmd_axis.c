/*
 * maskkit axis: the learned pattern of Adaptive Axis Attention.  From row
 * and column importance indicators per sample and layer (HDF5), builds each
 * sample's axis mask B_jk = r_j + c_k - r_j c_k OR-ed with a local pattern,
 * and reports its Eq. 9 sparsity and the percentage of row-wise and
 * column-wise important tokens per layer (the AAA paper's Table 6), as a
 * table, CSV or JSON; optionally writes one sample's masks.
 */
#include "config.h"
#include <cJSON.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

enum { AXIS_OPT_ROWS = 600, AXIS_OPT_COLS, AXIS_OPT_WITH, AXIS_OPT_LENFILE, AXIS_OPT_SAMPLE };

typedef struct axis_cli {
	cli_mask_opts m;
	cli_data_opts d;   /* --lengths, --threshold, --by, --csv */
	mk_axis_opts a;
	const char *lengths_file;
	int64_t sample;    /* -1: none */
	bool json, threshold_given;
} axis_cli;

static int axis_option(int opt, const char *arg, void *ctx)
{
	axis_cli *c = ctx;

	switch (opt) {
	case AXIS_OPT_ROWS:
		c->a.rows = arg;
		return MK_OK;
	case AXIS_OPT_COLS:
		c->a.cols = arg;
		return MK_OK;
	case AXIS_OPT_WITH:
		c->a.local = arg;
		return MK_OK;
	case AXIS_OPT_LENFILE:
		c->lengths_file = arg;
		return MK_OK;
	case AXIS_OPT_SAMPLE:
		return cli_i64(arg, "--sample", 0, INT64_MAX, &c->sample);
	case CLI_OPT_JSON:
		c->json = true;
		return MK_OK;
	default: {
		int ret = cli_data_option(opt, arg, &c->d);
		return ret < 0 ? ret : ret ? MK_OK : mk_error_set(MK_EINVAL, "unexpected option");
	}
	}
}

/* Returns -1 to go on with the file at argv[optind], else the exit code. */
static int axis_parse(int argc, char **argv, axis_cli *c)
{
	static const struct option longopts[] = {
		{"rows", required_argument, NULL, AXIS_OPT_ROWS},
		{"cols", required_argument, NULL, AXIS_OPT_COLS},
		{"with", required_argument, NULL, AXIS_OPT_WITH},
		{"lengths", required_argument, NULL, CLI_OPT_LENGTHS},
		{"lengths-file", required_argument, NULL, AXIS_OPT_LENFILE},
		{"threshold", required_argument, NULL, CLI_OPT_THRESHOLD},
		{"by", required_argument, NULL, CLI_OPT_BY},
		{"csv", no_argument, NULL, CLI_OPT_CSV},
		{"json", no_argument, NULL, CLI_OPT_JSON},
		{"sample", required_argument, NULL, AXIS_OPT_SAMPLE},
		{"output", required_argument, NULL, 'o'},
		{"seed", required_argument, NULL, CLI_OPT_SEED},
		{"max-memory", required_argument, NULL, CLI_OPT_MAXMEM},
		{"progress", no_argument, NULL, CLI_OPT_PROGRESS},
		{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
	const struct mk_cmd *cmd = &mk_cmd_axis;
	int ret = cli_parse(cmd, argc, argv, longopts, &c->m, axis_option, c);

	if (ret >= 0)
		return ret;
	if (c->m.bind.n)
		return cli_usage(cmd, "-n is not an option of axis (N comes from the file)");
	if (optind >= argc)
		return cli_usage(cmd, "missing FILE.h5");
	if (argc - optind > 1)
		return cli_usage(cmd, "one FILE.h5 at a time (got %d operands)", argc - optind);
	if (c->json && c->d.csv)
		return cli_usage(cmd, "give one of --json and --csv");
	if (c->d.lengths && c->lengths_file)
		return cli_usage(cmd, "give one of --lengths and --lengths-file");
	if (!!c->m.out != (c->sample >= 0))
		return cli_usage(cmd, c->m.out ? "-o needs --sample K (the sample whose masks to "
				 "write)" : "--sample K is for -o MASKS.h5");
	return -1;
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
	printf("indicators   rows %s, cols %s (%s; %s)\n", r->rows_name, r->cols_name, r->dtype,
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

/* One table or CSV line: the group's labels are already printed. */
static void axis_stat_line(const mk_axis_stat *s, bool csv)
{
	if (csv)
		printf(",%.9g,%.9g,%.12g,%.12g,%.12g\n", s->rows_pct, s->cols_pct, s->rho,
		       s->rho_axis, s->rho_local);
	else
		printf(" %8.2f %8.2f %10.6f %10.6f %10.6f\n", s->rows_pct, s->cols_pct, s->rho,
		       s->rho_axis, s->rho_local);
}

static void axis_print_groups(const mk_axis_result *r, char by, bool csv)
{
	static const char *const tail_csv = ",rows_pct,cols_pct,rho,rho_axis,rho_local\n";
	static const char *const tail = "   rows %   cols %        rho  axis only local only\n";

	if (by == 'h') {
		printf(csv ? "layer,head%s" : "layer  head%s", csv ? tail_csv : tail);
		for (int64_t b = 0; b < r->layers * r->heads; b++) {
			printf(csv ? "%" PRId64 ",%" PRId64 : "%5" PRId64 " %5" PRId64, b / r->heads,
			       b % r->heads);
			axis_stat_line(&r->by_head[b], csv);
		}
	} else if (by == 's') {
		printf(csv ? "sample,length%s" : "sample  length%s", csv ? tail_csv : tail);
		for (int64_t k = 0; k < r->samples; k++) {
			printf(csv ? "%" PRId64 ",%" PRId64 : "%6" PRId64 " %7" PRId64, k,
			       r->lengths[k]);
			axis_stat_line(&r->by_sample[k], csv);
		}
	} else {
		printf(csv ? "layer%s" : "layer%s", csv ? tail_csv : tail);
		for (int64_t l = 0; l < r->layers; l++) {
			printf(csv ? "%" PRId64 : "%5" PRId64, l);
			axis_stat_line(&r->by_layer[l], csv);
		}
	}
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
	cJSON_AddStringToObject(o, "dtype", r->dtype);
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
	if (c->d.by == 'h')
		axis_json_groups(o, "by_head", r->by_head, r->layers * r->heads,
				 (const char *[]){"layer", "head"}, r->heads, NULL);
	if (c->d.by == 's')
		axis_json_groups(o, "by_sample", r->by_sample, r->samples,
				 (const char *[]){"sample", NULL}, 1, r->lengths);
	return o;
}

static int axis_emit(const char *file, const axis_cli *c, const mk_axis_result *r)
{
	if (!c->json) {
		if (!c->d.csv)
			axis_print_head(file, c, r);
		axis_print_groups(r, c->d.by, c->d.csv);
		return MK_OK;
	}
	return cli_json_out(axis_json(file, c, r));
}

/* ---- running ---------------------------------------------------------------- */

static int axis_options(axis_cli *c)
{
	mk_axis_opts *a = &c->a;

	a->lengths = c->d.lengths && !strcmp(c->d.lengths, "none") ? "" : c->d.lengths;
	if (c->d.keep.rule == MK_KEEP_THRESHOLD)
		a->threshold = c->d.keep.value;
	a->seed = c->m.bind.seed;
	a->max_memory = c->m.bind.max_memory;
	a->by_sample = c->d.by == 's';
	a->progress = c->m.progress && isatty(STDERR_FILENO) ? axis_progress : NULL;
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

static int axis_run(int argc, char **argv)
{
	axis_cli c = {.sample = -1};
	mk_axis_result r = {0};
	const char *file;
	int ret;

	cli_mask_defaults(&c.m);
	mk_axis_opts_init(&c.a);
	if ((ret = axis_parse(argc, argv, &c)) >= 0)
		return ret;
	file = argv[optind];
	if (c.d.keep.rule == MK_KEEP_TOP_P)
		return cli_usage(&mk_cmd_axis, "--top-p is not an option of axis");
	/* the masks are written before anything is printed, so a failure
	 * leaves one error line and no report */
	if ((c.m.out && (ret = cli_check_output_dir(c.m.out))) || (ret = axis_options(&c)) ||
	    (ret = mk_axis_measure(file, &c.a, &r)) ||
	    (c.m.out && (ret = mk_axis_write(file, &c.a, c.sample, c.m.out))) ||
	    (ret = axis_emit(file, &c, &r)))
		ret = cli_fail(ret);
	mk_axis_result_free(&r);
	free((int64_t *)c.a.given);
	return ret;
}

const struct mk_cmd mk_cmd_axis = {
	.name = "axis",
	.summary = "adaptive axis masks (AAA): Eq. 9 sparsity and important tokens per layer",
	.run = axis_run,
	.usage =
"usage: maskkit axis FILE.h5 [--rows PATH] [--cols PATH] [--lengths PATH |\n"
"                    --lengths-file SPEC] [--threshold T] [--with EXPR]\n"
"                    [--by layer|head|sample] [--json | --csv]\n"
"                    [-o MASKS.h5 --sample K]\n"
"\n"
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
"(the paper's Table 6).  The indicators are read one sample at a time.\n"
"\n"
"options:\n"
"      --rows PATH       the row indicators (default: 'rows', else 'row')\n"
"      --cols PATH       the column indicators (default: 'cols', 'columns',\n"
"                        else 'col')\n"
"      --lengths PATH    the lengths N_i [samples] in FILE.h5 (default:\n"
"                        'lengths' when present, else every sample is N\n"
"                        long; 'none' ignores them)\n"
"      --lengths-file SPEC  lengths from another file: F.h5, F.h5:/path,\n"
"                        F.npy or a text file of integers\n"
"      --threshold T     float indicators: important when >= T (default 0.5;\n"
"                        integers and booleans: nonzero)\n"
"      --with EXPR       the local pattern (default local2, as the paper pairs\n"
"                        them; 'none' for the axis part alone)\n"
"      --seed S          seed for random terms of EXPR without seed=\n"
"      --by G            the table's groups: layer (default), head or sample\n"
"      --json            machine-readable output (by_layer always; by_head or\n"
"                        by_sample with --by)\n"
"      --csv             the groups as CSV\n"
"  -o, --output F.h5     also write sample K's masks B: uint8 [layers, heads,\n"
"                        N_K, N_K] (heads 1 without a heads axis), which\n"
"                        maskkit measure F.h5 reads layer by layer\n"
"      --sample K        the sample written with -o (0-based)\n"
"      --max-memory S    limit for one sample's indicators (default 4G)\n"
"      --progress        report progress on stderr\n"
"  -h, --help            this help\n"
"\n"
"exit status: 0 success, 2 bad input, 1 internal or system error.\n",
};
