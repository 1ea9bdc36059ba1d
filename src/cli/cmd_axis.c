/*
 * maskkit axis: the learned pattern of Adaptive Axis Attention.  From row
 * and column importance indicators per sample and layer (HDF5), builds each
 * sample's axis mask B_jk = r_j + c_k - r_j c_k OR-ed with a local pattern,
 * and reports its Eq. 9 sparsity and the percentage of row-wise and
 * column-wise important tokens per layer (the AAA paper's Table 6), as a
 * table, CSV or JSON; optionally writes one sample's masks.
 */
#include "config.h"
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

/* --csv FILE, then the report on stdout (the table, --json or --csv -). */
static int axis_emit(const axis_cli *c, const mk_axis_result *r)
{
	bool csv_out = c->csv && !strcmp(c->csv, "-");
	const mk_record *g = c->by == 'h' ? &mk_axis_head_record
			     : c->by == 's' ? &mk_axis_sample_record : &mk_axis_layer_record;
	const mk_axis_stat *rows = c->by == 'h' ? r->by_head : c->by == 's' ? r->by_sample
			       : r->by_layer;
	size_t count = (size_t)(c->by == 'h' ? r->blocks : c->by == 's' ? r->samples : r->layers);
	int ret;

	if (c->csv && !csv_out && (ret = mk_emit_path(c->csv, MK_EMIT_CSV, g, rows, count, 0)))
		return ret;
	if (c->json)
		return mk_emit(stdout, MK_EMIT_JSON, &mk_axis_record, r, 1, 0);
	if (csv_out)
		return mk_emit(stdout, MK_EMIT_CSV, g, rows, count, 0);
	if ((ret = mk_emit(stdout, MK_EMIT_TEXT, &mk_axis_record, r, 1, 0)))
		return ret;
	putchar('\n'); /* a write error shows at the end (cli_finish) */
	return mk_emit(stdout, MK_EMIT_TABLE, g, rows, count, 0);
}

static int axis_exec(void *opts, const cli_args *args)
{
	axis_cli *c = opts;
	mk_axis_opts *a = &c->a;
	mk_axis_result r = {0};
	int ret;

	if ((ret = axis_check(c, args)))
		return ret;
	mk_axis_opts_init(a);
	a->rows = c->rows;
	a->cols = c->cols;
	a->local = c->local ? c->local : a->local;
	a->lengths = c->lengths && !strcmp(c->lengths, "none") ? "" : c->lengths;
	a->lengths_file = c->lengths_file;
	a->threshold = c->threshold;
	a->seed = c->seed;
	a->max_memory = c->max_memory;
	a->by_sample = c->by == 's';
	a->by_head = c->by == 'h';
	/* on a terminal only (--progress is its default there): never into a log */
	a->progress = isatty(STDERR_FILENO) ? axis_progress : NULL;
	/* the masks and the CSV file are written before anything is printed, so a
	 * failure leaves one error line and no report */
	if ((c->out && (ret = cli_check_output_dir(c->out))) ||
	    (c->csv && strcmp(c->csv, "-") && (ret = cli_check_output_dir(c->csv))))
		return ret;
	if (!(ret = mk_axis_measure(args->argv[0], a, &r)) &&
	    !(c->out && (ret = mk_axis_write(args->argv[0], a, c->sample, c->out))))
		ret = axis_emit(c, &r);
	mk_axis_result_release(&r);
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
