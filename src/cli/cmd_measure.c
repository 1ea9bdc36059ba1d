/*
 * maskkit measure: sparsity, per-row statistics, structure and tile density
 * of one or more masks, streamed row by row (O(n) memory per thread).
 */
#include "config.h"
#include <cJSON.h>
#include <float.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

typedef struct measure_opts {
	cli_mask_opts m; /* first: cli_mask_opt_n needs it */
	cli_data_opts data;
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

static const char *yn(bool b) { return b ? "yes" : "no"; }

static void measure_print(const mk_expr *e, const mk_measure *r)
{
	printf("expression   %s\n", mk_expr_text(e));
	printf("parameters   %s\n", mk_expr_params(e));
	if (r->kv_len == r->n) {
		printf("n            %" PRId64 "\n", r->n);
		printf("|M|          %" PRIu64 " of %" PRIu64 " cells\n", r->count,
		       (uint64_t)r->n * (uint64_t)r->n);
		printf("sparsity     %.6f   (1 - |M|/n^2)\n", r->sparsity);
	} else {
		printf("q_len x kv_len %" PRId64 " x %" PRId64 "   (queries: the last %" PRId64
		       " positions)\n", r->n, r->kv_len, r->n);
		printf("|M|          %" PRIu64 " of %" PRIu64 " cells\n", r->count,
		       (uint64_t)r->n * (uint64_t)r->kv_len);
		printf("sparsity     %.6f   (1 - |M|/(q_len kv_len))\n", r->sparsity);
	}
	printf("  w/o diag   %.6f   (%" PRIu64 " of %" PRId64 " diagonal cells set)\n",
	       r->sparsity_nodiag, r->diag, r->n < r->kv_len ? r->n : r->kv_len);
	printf("keys per row min %" PRId64 ", mean %.3f, max %" PRId64 "\n", r->row_min,
	       r->row_mean, r->row_max);
	if (r->empty_rows)
		printf("empty rows   %" PRId64 " (first: row %" PRId64
		       ") -- softmax is undefined on these rows\n", r->empty_rows,
		       r->first_empty_row);
	else
		printf("empty rows   0\n");
	printf("symmetric    %s\ncausal       %s\ntoeplitz     %s   (M[i][j] = M[i+1][j+1])\n",
	       yn(r->symmetric), yn(r->causal), yn(r->toeplitz));
	for (size_t k = 0; k < r->ntiles; k++) {
		const mk_tile_stats *t = &r->tiles[k];
		printf("tiles B=%-5" PRId64 "non-empty %" PRIu64 "/%" PRIu64 " (density %.4f), full %"
		       PRIu64 ", effective sparsity %.6f\n", t->block, t->nonempty, t->tiles,
		       t->density, t->full, t->effective_sparsity);
	}
}

static void measure_row(const mk_expr *e, const mk_measure *r, bool header)
{
	if (header) {
		printf("%-36s %8s %12s %9s %9s %6s", "expression", "n", "|M|", "sparsity",
		       "w/o diag", "empty");
		for (size_t k = 0; k < r->ntiles; k++)
			printf("  tiles@%-4" PRId64, r->tiles[k].block);
		printf("\n");
	}
	printf("%-36s %8" PRId64 " %12" PRIu64 " %9.6f %9.6f %6" PRId64, mk_expr_text(e), r->n,
	       r->count, r->sparsity, r->sparsity_nodiag, r->empty_rows);
	for (size_t k = 0; k < r->ntiles; k++)
		printf("  %10.4f", r->tiles[k].density);
	printf("\n");
}

static cJSON *measure_json(const mk_expr *e, const mk_measure *r)
{
	cJSON *o = cJSON_CreateObject(), *rows, *tiles;
	cJSON_AddStringToObject(o, "expr", mk_expr_text(e));
	cJSON_AddStringToObject(o, "params", mk_expr_params(e));
	cJSON_AddNumberToObject(o, "n", (double)r->n);
	cJSON_AddNumberToObject(o, "kv_len", (double)r->kv_len);
	cJSON_AddNumberToObject(o, "count", (double)r->count);
	cJSON_AddNumberToObject(o, "sparsity", r->sparsity);
	cJSON_AddNumberToObject(o, "sparsity_nodiag", r->sparsity_nodiag);
	cJSON_AddNumberToObject(o, "diagonal", (double)r->diag);
	rows = cJSON_AddObjectToObject(o, "rows");
	cJSON_AddNumberToObject(rows, "min", (double)r->row_min);
	cJSON_AddNumberToObject(rows, "mean", r->row_mean);
	cJSON_AddNumberToObject(rows, "max", (double)r->row_max);
	cJSON_AddNumberToObject(rows, "empty", (double)r->empty_rows);
	cJSON_AddNumberToObject(rows, "first_empty", (double)r->first_empty_row);
	cJSON_AddBoolToObject(o, "symmetric", r->symmetric);
	cJSON_AddBoolToObject(o, "causal", r->causal);
	cJSON_AddBoolToObject(o, "toeplitz", r->toeplitz);
	tiles = cJSON_AddArrayToObject(o, "tiles");
	for (size_t k = 0; k < r->ntiles; k++) {
		const mk_tile_stats *t = &r->tiles[k];
		cJSON *x = cJSON_CreateObject();
		cJSON_AddNumberToObject(x, "block", (double)t->block);
		cJSON_AddNumberToObject(x, "tiles", (double)t->tiles);
		cJSON_AddNumberToObject(x, "nonempty", (double)t->nonempty);
		cJSON_AddNumberToObject(x, "full", (double)t->full);
		cJSON_AddNumberToObject(x, "density", t->density);
		cJSON_AddNumberToObject(x, "effective_sparsity", t->effective_sparsity);
		cJSON_AddItemToArray(tiles, x);
	}
	return o;
}

static int measure_one(const char *arg, const measure_opts *o, mk_expr **e, mk_measure *r)
{
	int ret;
	if ((ret = cli_operand(arg, e)) || (ret = mk_expr_bind(*e, &o->m.bind)))
		return ret;
	ret = mk_measure_expr(*e, o->tiles, o->ntiles, o->m.progress ? cli_progress : NULL, NULL,
			      r);
	if (ret == MK_OK)
		cli_note_layouts(*e);
	return ret;
}

/* Each MASK in turn, on rank 0 alone; the first failure stops. */
static int measure_masks(measure_opts *o, int argc, char **argv)
{
	cJSON *all = o->json && argc > 1 ? cJSON_CreateArray() : NULL;
	int ret = MK_OK;

	if (o->ntiles == 0) {
		o->tiles[0] = 64;
		o->tiles[1] = 128;
		o->ntiles = 2;
	}
	for (int k = 0; k < argc && ret == MK_OK; k++) {
		mk_expr *e = NULL;
		mk_measure r;
		ret = measure_one(argv[k], o, &e, &r);
		if (ret == MK_OK && all)
			cJSON_AddItemToArray(all, measure_json(e, &r));
		else if (ret == MK_OK && o->json)
			ret = cli_json_out(measure_json(e, &r));
		else if (ret == MK_OK && argc > 1)
			measure_row(e, &r, k == 0);
		else if (ret == MK_OK)
			measure_print(e, &r);
		mk_expr_free(e);
	}
	if (all && ret == MK_OK)
		return cli_json_out(all);
	cJSON_Delete(all);
	return ret;
}

/* Usage errors that do not depend on the mode (the same on every rank). */
static int measure_check(measure_opts *o, const cli_args *a)
{
	const struct mk_cmd *c = &mk_cmd_measure;
	static const char *const data_opts[] = {"dataset", "lengths", "axes", "threshold", "top-p",
						 "by", "csv", "png", "heads-file", NULL};
	cli_data_opts *d = &o->data;

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
	    (ret = cli_data_choose(a->argc, a->argv, &o->data, &data)))
		return ret;
	if (data && o->ntiles)
		return mk_par_agree(cli_usage_error(&mk_cmd_measure, "--tile is for single masks, "
						    "not data sets"), NULL);
	if (data && o->m.bind.kv_len)
		return mk_par_agree(cli_usage_error(&mk_cmd_measure, "--kv-len is for single masks, "
						    "not data sets"), NULL);
	if (data)
		return cli_data_measure(&o->data, &o->m, o->json, a->argc, a->argv);
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
