/*
 * maskkit attn-stats: where attention goes, per layer and head, in a data
 * set of attention probabilities -- the mean on the diagonal and off it, on
 * the first and last real token, row entropy, row mass, and the mean by
 * offset j - i (SparseBERT's profile), over each sample's real tokens; as a
 * table, CSV or JSON, with the profile as CSV and as a gnuplot figure.
 */
#include "config.h"
#include <inttypes.h>
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

/* Columns offset, layer_0, layer_1, ...; a log scale when every value shown
 * is positive (zeros and missing offsets would vanish from it). */
static int as_plot(const char *path, const mk_attn_report *s)
{
	int64_t rows = s->width, ncols = s->layers + 1;
	char (*names)[32] = calloc((size_t)ncols, sizeof *names), title[512];
	const char **cols = calloc((size_t)ncols, sizeof *cols);
	double *data = malloc((size_t)(rows * ncols) * sizeof *data);
	bool logy = true;
	int ret = MK_OK;

	if (ncols > 4096)
		ret = mk_error_set(MK_ERANGE, "--png draws at most 4095 layers, got %" PRId64,
				   s->layers);
	else if (!data || !names || !cols)
		ret = mk_error_set(MK_ENOMEM, "out of memory for the plot");
	for (int64_t c = 0; ret == MK_OK && c < ncols; c++) {
		if (c)
			snprintf(names[c], sizeof names[c], "layer_%" PRId64, c - 1);
		else
			snprintf(names[c], sizeof names[c], "offset");
		cols[c] = names[c];
		for (int64_t x = 0; x < rows; x++) {
			double v = c ? s->per_layer[c - 1].profile[x] : (double)s->offsets[x];
			data[x * ncols + c] = v;
			logy = logy && (!c || !(v <= 0.0));
		}
	}
	snprintf(title, sizeof title, "mean attention by offset j - i (%s, %" PRId64 " samples, N = %"
		 PRId64 ")", s->file, s->samples, s->n);
	if (ret == MK_OK)
		ret = mk_plot_run(&(mk_plot){.template_name = "attn_profile", .output = path,
					     .title = title, .data = data, .rows = rows,
					     .ncols = (int)ncols, .col_names = cols, .panels = 1,
					     .vars = logy ? "logy = 1" : "logy = 0"});
	free(names);
	free(cols);
	free(data);
	return ret;
}

/* The report on stdout (the table, --json or --csv -), then the files. */
static int as_outputs(const mk_attn_report *s, const as_opts *o)
{
	const mk_record *row = &mk_attn_report_row_record;
	bool csv_out = o->csv && !strcmp(o->csv, "-");
	int ret;

	if (o->json)
		ret = mk_emit(stdout, MK_EMIT_JSON, &mk_attn_report_record, s, 1, 0);
	else if (csv_out)
		ret = mk_emit(stdout, MK_EMIT_CSV, row, s->by_head, (size_t)s->nhead, 0);
	else if (!(ret = mk_emit(stdout, MK_EMIT_TEXT, &mk_attn_report_record, s, 1, 0)) &&
		 putchar('\n') != EOF) /* a write error shows at the end (cli_finish) */
		ret = mk_emit(stdout, MK_EMIT_TABLE, row, s->table, (size_t)s->table_rows, 0);
	if (ret == MK_OK && o->csv && !csv_out)
		ret = mk_emit_path(o->csv, MK_EMIT_CSV, row, s->by_head, (size_t)s->nhead, 0);
	if (ret == MK_OK && o->profile_csv)
		ret = mk_attn_report_write_profile(s, o->profile_csv);
	if (ret == MK_OK && o->png)
		ret = as_plot(o->png, s);
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
	int ret;

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
	for (int x = 0; x < 3; x++)
		if ((ret = cli_root_check_output_dir(files[x])))
			return ret;
	return MK_OK;
}

static int as_exec(void *opts, const cli_args *a)
{
	as_opts *o = opts;
	mk_attn_report s = {0};
	/* by default on a terminal; --progress adds it under mpirun */
	bool progress = (o->progress || isatty(STDERR_FILENO)) &&
			(isatty(STDERR_FILENO) || mk_par_size() > 1);
	mk_attn_stats_opts so = {.d = o->d, .max_offset = o->max_offset,
				 .progress = progress ? as_progress : NULL};
	int ret;

	if ((ret = as_check(o, a)) || (ret = mk_attn_stats_run(a->argv[0], &so, &s)))
		return ret;
	mk_par_done();
	if (mk_par_rank() == 0)
		ret = as_outputs(&s, o);
	mk_attn_report_release(&s);
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
