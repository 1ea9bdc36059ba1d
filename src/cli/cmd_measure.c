/*
 * maskkit measure: sparsity, per-row statistics, structure and tile density
 * of one or more masks, streamed row by row (O(n) memory per thread); or the
 * Eq. 9 sparsity of a data set (masks or attention maps in HDF5, patterns at
 * each sample's length) with its breakdowns as a table, CSV or JSON and a
 * PNG heatmap.  The library measures (mk_measure_mask, mk_ds_report_file,
 * mk_ds_report_patterns); this file parses and prints.
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"
#include "plot.h"

/* The data-set options, declared in measure's table. */
typedef struct measure_data_opts {
	const char *dataset, *lengths, *axes, *png, *heads_file;
	const char *csv;   /* --csv FILE ("-": standard output) */
	int by;            /* --by: 'l', 'h', 's', or 0 */
	double threshold, top_p;
	mk_keep keep;      /* from --threshold or --top-p (set before measuring) */
	bool any;          /* a data-set option was given */
	bool collective;   /* --mpi-io collective */
	bool mpi_io_given;
} measure_data_opts;

typedef struct measure_opts {
	cli_mask_opts m; /* first: cli_mask_opt_n needs it */
	measure_data_opts data;
	int64_t tiles[MK_MEASURE_MAX_TILES];
	size_t ntiles;
	bool json;
} measure_opts;

static int measure_opt_tile(void *opts, const char *arg)
{
	measure_opts *o = opts;

	if (o->ntiles == MK_MEASURE_MAX_TILES)
		return mk_error_set(MK_EINVAL, "at most %d --tile sizes", MK_MEASURE_MAX_TILES);
	return cli_i64(arg, "--tile", 1, MK_N_MAX, &o->tiles[o->ntiles++]);
}

/* --lengths and --axes take '' too (data files: no lengths; no leading axes). */
static int measure_opt_lengths(void *opts, const char *arg)
{
	((measure_opts *)opts)->data.lengths = arg;
	return MK_OK;
}

static int measure_opt_axes(void *opts, const char *arg)
{
	((measure_opts *)opts)->data.axes = arg;
	return MK_OK;
}

static int measure_opt_mpi_io(void *opts, const char *arg)
{
	return cli_mpi_io(arg, &((measure_opts *)opts)->data.collective);
}

static const char *const measure_by_words[] = {"layer", "head", "sample", NULL};
static const int measure_by_values[] = {'l', 'h', 's'};

static const struct cli_opt measure_table[] = {
	CLI_OPT_CALL("n", 'n', cli_mask_opt_n, "N", NULL,
		     "sequence length (taken from mask files when omitted; for patterns over "
		     "lengths: N of the classic figure)"),
	CLI_MASK_RECT_OPTS,
	CLI_OPT_UINT("seed", 0, measure_opts, m.bind.seed, "SEED", "0",
		     "seed for random terms without seed="),
	CLI_OPT_CALL("tile", 0, measure_opt_tile, "B", NULL,
		     "masks: tile size; repeatable (default: 64 and 128)"),
	CLI_OPT_FLAG("json", 0, measure_opts, json,
		     "machine-readable output (an array for several MASKs)"),
	CLI_OPT_SIZE("max-memory", 0, measure_opts, m.bind.max_memory, "SIZE", "4G",
		     "limit for materialised data"),
	CLI_OPT_FLAG("progress", 0, measure_opts, m.progress,
		     "report progress on stderr (data sets: when it is a terminal, or under "
		     "mpirun)"),
	/* the data-set options: any of them means data-set mode (see the notes) */
	CLI_OPT_STRING("dataset", 0, measure_opts, data.dataset, "PATH",
		       "data sets: the data's path in DATA.h5 (DATA.h5:/PATH too)"),
	{.name = "lengths", .type = CLI_CALL, .call = measure_opt_lengths, .meta = "L",
	 .flags = CLI_INPUT, .help =
		     "data files: the lengths' path in DATA.h5 (default /lengths when present; "
		     "none: all N long); patterns: a lengths file, FILE.h5[:/path], FILE.npy (1-D "
		     "integers) or text"},
	CLI_OPT_CALL("axes", 0, measure_opt_axes, "AXES", NULL,
		     "data files: the leading axes, letters of s, l, h (samples, layers, heads) "
		     "in order, e.g. sh for [samples, heads, N, N]"),
	CLI_OPT_DOUBLE("threshold", 0, measure_opts, data.threshold, "T", 0, 1, 0,
		       NULL, "attention probabilities: keep p >= T (0 <= T <= 1)"),
	CLI_OPT_DOUBLE("top-p", 0, measure_opts, data.top_p, "P", 0, 1, CLI_LO_OPEN, NULL,
		       "attention probabilities: keep per row the fewest keys whose mass reaches "
		       "P (0 < P <= 1)"),
	CLI_OPT_ENUM("by", 0, measure_opts, data.by, "WHAT", measure_by_words, measure_by_values,
		     NULL, "data sets: a breakdown: layer, head or sample"),
	CLI_OPT_OUT("csv", 0, measure_opts, data.csv, "FILE",
		     "data sets: the breakdown (default --by layer) as CSV to FILE ('-': "
		     "standard output, instead of the report)"),
	CLI_OPT_WRITE("png", 0, measure_opts, data.png, "FILE.png",
		     "data sets: heatmap of rho per (layer, head): a row per layer"),
	CLI_OPT_READ("heads-file", 0, measure_opts, data.heads_file, "FILE",
		     "patterns over lengths: one expression per head (JSON list, or list of lists)"),
	CLI_OPT_CALL("mpi-io", 0, measure_opt_mpi_io, "MODE", "independent",
		     "data files under mpirun: independent or collective reads"),
	CLI_OPT_END,
};

static int measure_init(void *opts)
{
	measure_opts *o = opts;
	int ret = cli_mask_init(&o->m);

	o->m.bind.need_cols = true;
	return ret;
}

/* Each MASK in turn, on rank 0 alone; the first failure stops (and nothing
 * is printed).  Several print one table row (or JSON object) each. */
static int measure_masks(measure_opts *o, int argc, char **argv)
{
	mk_mask_measure *r = calloc((size_t)argc, sizeof *r);
	int ret = r ? MK_OK : mk_error_set(MK_ENOMEM, "out of memory");
	mk_emit_fmt fmt;

	if (o->ntiles == 0) {
		o->tiles[0] = 64;
		o->tiles[1] = 128;
		o->ntiles = 2;
	}
	for (int k = 0; k < argc && ret == MK_OK; k++) {
		mk_expr *e = NULL;
		if ((ret = cli_operand(argv[k], &e)) == MK_OK &&
		    (ret = mk_expr_bind(e, &o->m.bind)) == MK_OK &&
		    (ret = mk_measure_mask(e, o->tiles, o->ntiles, o->m.progress ? cli_progress : NULL,
					   NULL, &r[k])) == MK_OK)
			cli_note_layouts(e);
		mk_expr_free(e);
	}
	fmt = o->json ? MK_EMIT_JSON : argc > 1 ? MK_EMIT_TABLE : MK_EMIT_TEXT;
	if (ret == MK_OK)
		ret = mk_emit(stdout, fmt, &mk_mask_measure_record, r, (size_t)argc, 0);
	for (int k = 0; r && k < argc; k++)
		mk_mask_measure_release(&r[k]);
	free(r);
	return ret;
}

/* ---- data sets: which mode ----------------------------------------------- */

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

/* Whether the operands are a data set (the rule is in --help: mk_ds_is_data_set):
 * every rank decides from what it sees and the ranks must agree (MK_EINVAL
 * naming the rank whose files differ, or lack one). */
static int measure_mode(int argc, char **argv, const measure_data_opts *o, bool *data)
{
	char why[1200] = "";
	int mode;

	*data = o->any || argc == 0;
	for (int k = 0; k < argc && !*data; k++)
		*data = mk_ds_is_data_set(argv[k]);
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

/* ---- data sets -------------------------------------------------------------- */

static void data_progress(int64_t done, int64_t total, void *arg)
{
	(void)arg;
	fprintf(stderr, "\rmaskkit: %" PRId64 "/%" PRId64 " samples (%.0f%%)%s", done, total,
		100.0 * (double)done / (double)total, done >= total ? "\n" : "");
}

/* Patterns at each sample's length (rank 0 alone): the options of data files
 * are refused, --heads-file's expressions read. */
static int data_patterns(const char *expr, const measure_data_opts *o,
			 const mk_ds_report_opts *ro, mk_ds_report *r)
{
	char **exprs = NULL, name[1400];
	int64_t layers = 0, heads = 1;
	int ret = MK_OK;

	if (o->keep.rule != MK_KEEP_NONZERO || o->dataset || o->axes || o->mpi_io_given)
		return mk_error_set(MK_EINVAL, "--threshold, --top-p, --dataset, --axes and --mpi-io "
				    "are for data files (FILE.h5), not patterns");
	if (o->heads_file && (ret = cli_heads_file(o->heads_file, &exprs, &layers, &heads)))
		return ret;
	if (!o->lengths && !ro->n)
		ret = mk_error_set(MK_EINVAL, "give --lengths FILE (or --n N for one length)");
	if (o->heads_file)
		snprintf(name, sizeof name, "%s (%" PRId64 " layers x %" PRId64
			 " heads of patterns)", o->heads_file, layers ? layers : 1, heads);
	if (ret == MK_OK)
		ret = mk_ds_report_patterns(exprs ? (const char *const *)exprs : &expr, layers,
					    heads, o->heads_file ? name : expr, ro, r);
	cli_heads_free(exprs, (size_t)((layers ? layers : 1) * heads));
	return ret;
}

/* The picture and --csv FILE first (when one fails, nothing has been
 * printed), then the report on stdout: the table, --json or --csv -. */
static int data_emit(const mk_ds_report *r, const measure_data_opts *o, bool json)
{
	bool csv_out = o->csv && !strcmp(o->csv, "-");
	/* CSV: by layer unless --by */
	mk_ds_by by = o->by == 'h' ? MK_DS_BY_HEAD : o->by == 's' ? MK_DS_BY_SAMPLE : MK_DS_BY_LAYER;
	const void *rows;
	size_t count;
	const mk_record *rec = mk_ds_report_rows(r, by, &rows, &count);
	int ret;

	if (o->png && (ret = mk_png_heat(o->png, r->m.by_head, r->m.layers, r->m.heads)))
		return ret;
	if (o->csv && !csv_out && (ret = mk_emit_path(o->csv, MK_EMIT_CSV, rec, rows, count, 0)))
		return ret;
	if (json || csv_out)
		return json ? mk_emit(stdout, MK_EMIT_JSON, &mk_ds_report_record, r, 1, 0)
			    : mk_emit(stdout, MK_EMIT_CSV, rec, rows, count, 0);
	if ((ret = mk_emit(stdout, MK_EMIT_TEXT, &mk_ds_report_record, r, 1, 0)) || !o->by)
		return ret;
	printf("\n");
	return mk_emit(stdout, MK_EMIT_TABLE, rec, rows, count, 0);
}

/* What holds once the mode is known: the operands, one report on stdout,
 * distinct outputs. */
static int data_usage(const measure_data_opts *o, bool json, int argc, const char *arg)
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

/* The operand (0 or 1) as a data set: data files on every rank, patterns on
 * rank 0; the report on rank 0. */
static int measure_data(const measure_data_opts *o, const cli_mask_opts *m, bool json, int argc,
			char **argv)
{
	mk_ds_report r = {0};
	mk_ds_report_opts ro = {.dataset = o->dataset, .lengths = o->lengths, .axes = o->axes,
				.keep = o->keep, .n = m->bind.n, .seed = m->bind.seed,
				.max_memory = m->bind.max_memory, .collective = o->collective};
	const char *arg = argc > 0 ? argv[0] : NULL;
	const char *csv_file = o->csv && strcmp(o->csv, "-") ? o->csv : NULL;
	int ret;

	/* the same on every rank; agreed, as the collective steps before it were */
	if ((ret = mk_par_agree(data_usage(o, json, argc, arg), NULL)) ||
	    (ret = cli_root_check_output_dir(o->png)) ||
	    (ret = cli_root_check_output_dir(csv_file)) ||
	    (arg && (ret = mk_par_agree(data_missing_h5(arg), NULL))))
		return ret;
	if (m->progress && (isatty(2) || mk_par_size() > 1))
		ro.progress = data_progress;
	if (arg && mk_tensor_format(arg) == MK_FMT_H5) {
		ret = mk_ds_report_file(arg, &ro, &r);
	} else {
		/* patterns are measured on rank 0 alone */
		mk_par_done();
		if (mk_par_rank() != 0)
			return MK_OK;
		ret = data_patterns(arg, o, &ro, &r);
	}
	/* a failure not agreed on keeps the job's abort armed (mk_par_end) */
	if (ret == MK_OK)
		mk_par_done();
	if (ret == MK_OK && mk_par_rank() == 0)
		ret = data_emit(&r, o, json);
	mk_ds_report_release(&r);
	return ret;
}

/* Usage errors that do not depend on the mode (the same on every rank). */
static int measure_check(measure_opts *o, const cli_args *a)
{
	const struct mk_cmd *c = &mk_cmd_measure;
	static const char *const data_opts[] = {"dataset", "lengths", "axes", "threshold", "top-p",
						 "by", "csv", "png", "heads-file", NULL};
	measure_data_opts *d = &o->data;

	if (a->argc < 1 && !d->heads_file)
		return cli_usage_error(c, "missing EXPR");
	if (cli_given(a, "threshold") && cli_given(a, "top-p"))
		return cli_usage_error(c, "give one of --threshold and --top-p");
	d->keep.rule = cli_given(a, "top-p") ? MK_KEEP_TOP_P
		     : cli_given(a, "threshold") ? MK_KEEP_THRESHOLD : MK_KEEP_NONZERO;
	d->keep.value = d->keep.rule == MK_KEEP_TOP_P ? d->top_p : d->threshold;
	d->mpi_io_given = cli_given(a, "mpi-io");
	for (int k = 0; data_opts[k]; k++)
		d->any = d->any || cli_given(a, data_opts[k]);
	return MK_OK;
}

static int measure_exec(void *opts, const cli_args *a)
{
	measure_opts *o = opts;
	bool data = false;
	int ret;

	/* every rank fails alike; agreed, so that no rank waits for another */
	if ((ret = mk_par_agree(measure_check(o, a), NULL)) ||
	    (ret = measure_mode(a->argc, a->argv, &o->data, &data)))
		return ret;
	if (data && o->ntiles)
		return mk_par_agree(cli_usage_error(&mk_cmd_measure, "--tile is for single masks, "
						    "not data sets"), NULL);
	if (data && o->m.bind.kv_len)
		return mk_par_agree(cli_usage_error(&mk_cmd_measure, "--kv-len is for single masks, "
						    "not data sets"), NULL);
	if (data)
		return measure_data(&o->data, &o->m, o->json, a->argc, a->argv);
	if (o->data.mpi_io_given)
		return mk_par_agree(cli_usage_error(&mk_cmd_measure, "--mpi-io is for data sets "
						    "(FILE.h5)"), NULL);
	/* single masks and expressions are measured on rank 0 alone */
	mk_par_done();
	if (mk_par_rank() != 0)
		return MK_OK;
	return measure_masks(o, a->argc, a->argv);
}

const struct mk_cmd mk_cmd_measure = {
	.name = "measure",
	.parallel = true,
	.summary = "sparsity, structure and tile density of masks; Eq. 9 over data sets",
	.synopsis = "MASK... [--n N] [--tile B]... [--json] [options]\n"
		    "DATA.h5[:/PATH] [--threshold T | --top-p P] [--by WHAT]\n"
		    " [--csv FILE] [--json] [--png RHO.png] [data-set options]\n"
		    "EXPR --lengths FILE [--n N] [data-set options]\n"
		    "--heads-file HEADS.json --lengths FILE [...]",
	.opts = measure_table,
	.opts_size = sizeof(measure_opts),
	.init = measure_init,
	.exec = measure_exec,
	.description =
"Measures each MASK (an expression or a mask file) by streaming its rows,\n"
"so built-in patterns need O(n) memory at any n up to 1048576:\n"
"  |M|, sparsity rho = 1 - |M|/n^2, rho without the diagonal (1 - |M \\ I|/n^2),\n"
"  keys per row (min/mean/max), empty rows (softmax is undefined there),\n"
"  symmetric?, causal? (no j > i), Toeplitz? (M[i][j] = M[i+1][j+1]),\n"
"  and for each tile size B the fraction of non-empty B x B tiles and the\n"
"  effective sparsity a block-sparse kernel gets (1 - cells of non-empty\n"
"  tiles / n^2).  Several MASKs print one table row each.\n"
"\n"
"Which mode.  measure works on a data set (below) when a data-set option is\n"
"given (--dataset, --lengths, --axes, --threshold, --top-p, --by, --csv,\n"
"--png, --heads-file), or when an operand is an existing HDF5 file (.h5,\n"
".hdf5) or one of its datasets (FILE.h5:/PATH) other than a plain mask;\n"
"otherwise each operand is a MASK.  A plain mask is one 2-D [N, N] dataset\n"
"with no 'lengths' dataset beside it, as 'maskkit gen -o FILE.h5' writes;\n"
"give --by to measure it as a data set.  A file HDF5 cannot open is taken as\n"
"a data set (and its error reported).  A data set is measured on its own.\n"
"\n"
"Data sets.  DATA.h5 holds masks (integers or booleans: nonzero is set) or\n"
"attention probabilities (float16/32/64) shaped [samples, layers, heads, N, N];\n"
"leading axes may be absent ([layers, heads, N, N], [heads, N, N], or a 2-D\n"
"[N, N] with --lengths or --by), or be named with --axes.  The data is\n"
"DATA.h5:/PATH's dataset or --dataset's, else the first of masks, mask,\n"
"attentions, attention, attn, probs, else the only dataset of rank 2 to 5; each\n"
"sample's real length N_i is the integer dataset 'lengths' [samples] when the\n"
"file has one (else N).  The file is read one (sample, layer) block at a time.\n"
"Printed:\n"
"  sparsity  the Adaptive Axis Attention paper's Eq. 9: the mean over samples\n"
"            i, layers l and heads a of 1 - |B_ila|/N_i^2, B restricted to the\n"
"            sample's N_i x N_i real tokens;\n"
"  classic   the same over the whole stored N x N, as if every sample were N\n"
"            long (for patterns: the pattern at N = the longest sample or --n);\n"
"  and with --by the mean per layer, per (layer, head) with whether every\n"
"  sample's block is Toeplitz (yes, interior: away from the first and last\n"
"  rows and columns, no; '-' under --top-p), or per sample.  Attention\n"
"  probabilities count where p >= T (--threshold), or per row the fewest keys\n"
"  whose mass reaches P times the row's mass over its real keys (--top-p;\n"
"  ties do not change the count); NaN and infinities are an error in real\n"
"  cells and read as 0 in padding.  With an expression and --lengths, the\n"
"  pattern is measured at each sample's own length; --heads-file gives one\n"
"  expression per head (a JSON list) or per layer and head (a list of lists),\n"
"  head k binding random terms with seed + k as gen --heads-file does.\n",
	.notes =
"--csv FILE writes the breakdown (--by's, else per layer) as CSV and still\n"
"prints the report (or --json); --csv - prints the CSV instead of the report.\n"
"Outputs are written to a temporary file and renamed, so a failure leaves an\n"
"existing file intact.\n"
"\n"
"Under mpirun/srun (a build with MPI) data files are shared by the ranks: each\n"
"reads its share of the (sample, layer) blocks and rank 0 prints exactly what\n"
"one process prints.\n",
	.examples =
"  maskkit measure bigbird 'local2+global1' --n 4096 --tile 64\n"
"  maskkit measure attn.h5 --threshold 0.02 --by head --csv heads.csv\n"
"  maskkit measure local2 --lengths lengths.txt --json\n",
};
