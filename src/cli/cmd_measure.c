/*
 * maskkit measure: sparsity, per-row statistics, structure and tile density
 * of one or more masks, streamed row by row (O(n) memory per thread).
 */
#include "config.h"
#include <cJSON.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include "cli.h"

typedef struct measure_opts {
	cli_mask_opts m;
	int64_t tiles[MK_MEASURE_MAX_TILES];
	size_t ntiles;
	bool json;
	cli_data_opts data;
} measure_opts;

static const char *yn(bool b) { return b ? "yes" : "no"; }

static void measure_print(const mk_expr *e, const mk_measure *r)
{
	printf("expression   %s\n", mk_expr_text(e));
	printf("parameters   %s\n", mk_expr_params(e));
	printf("n            %" PRId64 "\n", r->n);
	printf("|M|          %" PRIu64 " of %" PRIu64 " cells\n", r->count,
	       (uint64_t)r->n * (uint64_t)r->n);
	printf("sparsity     %.6f   (1 - |M|/n^2)\n", r->sparsity);
	printf("  w/o diag   %.6f   (%" PRIu64 " of %" PRId64 " diagonal cells set)\n",
	       r->sparsity_nodiag, r->diag, r->n);
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

static int measure_option(int opt, const char *arg, void *ctx)
{
	measure_opts *o = ctx;
	int64_t v;
	int ret;
	if (opt == CLI_OPT_JSON) {
		o->json = true;
		return MK_OK;
	}
	if ((ret = cli_data_option(opt, arg, &o->data)))
		return ret < 0 ? ret : MK_OK;
	if (o->ntiles == MK_MEASURE_MAX_TILES)
		return mk_error_set(MK_EINVAL, "at most %d --tile sizes", MK_MEASURE_MAX_TILES);
	if ((ret = cli_i64(arg, "--tile", 1, MK_N_MAX, &v)))
		return ret;
	o->tiles[o->ntiles++] = v;
	return MK_OK;
}

/* Returns -1 to go on, else the exit code. */
static int measure_parse(int argc, char **argv, measure_opts *o)
{
	static const struct option longopts[] = {
		CLI_MASK_LONGOPTS, CLI_DATA_LONGOPTS, {"tile", required_argument, NULL, CLI_OPT_TILE},
		{"json", no_argument, NULL, CLI_OPT_JSON}, {NULL, 0, NULL, 0}};
	int ret = cli_parse(&mk_cmd_measure, argc, argv, longopts, &o->m, measure_option, o);
	if (ret >= 0)
		return ret;
	if (o->m.out || o->m.format || o->m.block)
		return cli_usage(&mk_cmd_measure, "-o, --format and --block are for gen and compose");
	if (optind >= argc && !o->data.heads_file)
		return cli_usage(&mk_cmd_measure, "missing EXPR");
	if (o->ntiles && cli_data_mode(optind < argc ? argv[optind] : NULL, &o->data))
		return cli_usage(&mk_cmd_measure, "--tile is for single masks, not data sets");
	if (o->ntiles == 0) {
		o->tiles[0] = 64;
		o->tiles[1] = 128;
		o->ntiles = 2;
	}
	return -1;
}

static int measure_one(const char *arg, const measure_opts *o, mk_expr **e, mk_measure *r)
{
	int ret;
	if ((ret = cli_operand(arg, e)) || (ret = mk_expr_bind(*e, &o->m.bind)))
		return ret;
	return mk_measure_expr(*e, o->tiles, o->ntiles, o->m.progress ? cli_progress : NULL, NULL,
			       r);
}

static int measure_run(int argc, char **argv)
{
	measure_opts o = {.ntiles = 0};
	cJSON *all = NULL;
	int ret, code = MK_EXIT_OK;
	cli_mask_defaults(&o.m);
	o.m.bind.need_cols = true;
	bool data;
	if ((ret = cli_par_parsed(measure_parse(argc, argv, &o))) >= 0)
		return ret;
	if ((ret = cli_data_choose(optind < argc ? argv[optind] : NULL, &o.data, &data)))
		return cli_fail(ret);
	if (data)
		return cli_data_measure(&o.data, &o.m, o.json, argc - optind, argv + optind);
	/* single masks and expressions are measured on rank 0 alone */
	mk_par_done();
	if (mk_par_rank() != 0)
		return MK_EXIT_OK;
	if (o.data.mpi_io_given)
		return cli_usage(&mk_cmd_measure, "--mpi-io is for data sets (FILE.h5)");
	if (o.json && argc - optind > 1)
		all = cJSON_CreateArray();
	for (int k = optind; k < argc && code == MK_EXIT_OK; k++) {
		mk_expr *e = NULL;
		mk_measure r;
		if ((ret = measure_one(argv[k], &o, &e, &r))) {
			code = cli_fail(ret);
		} else if (o.json) {
			cJSON *x = measure_json(e, &r);
			if (all) {
				cJSON_AddItemToArray(all, x);
			} else {
				char *s = cJSON_Print(x);
				puts(s);
				free(s);
				cJSON_Delete(x);
			}
		} else if (argc - optind > 1) {
			measure_row(e, &r, k == optind);
		} else {
			measure_print(e, &r);
		}
		mk_expr_free(e);
	}
	if (all && code == MK_EXIT_OK) {
		char *s = cJSON_Print(all);
		puts(s);
		free(s);
	}
	cJSON_Delete(all);
	return code;
}

const struct mk_cmd mk_cmd_measure = {
	.name = "measure",
	.parallel = true,
	.summary = "sparsity, structure and tile density of masks; Eq. 9 over data sets",
	.run = measure_run,
	.usage =
"usage: maskkit measure MASK... [--n N] [--tile B]... [--json] [options]\n"
"       maskkit measure DATA.h5 [--threshold T | --top-p P] [--by layer|head|sample]\n"
"                       [--csv | --json] [--png RHO.png] [data options]\n"
"       maskkit measure EXPR --lengths FILE [--n N] [--by ...] [--csv | --json]\n"
"       maskkit measure --heads-file HEADS.json --lengths FILE [...]\n"
"\n"
"Measures each MASK (an expression or a mask file) by streaming its rows,\n"
"so built-in patterns need O(n) memory at any n up to 1048576:\n"
"  |M|, sparsity rho = 1 - |M|/n^2, rho without the diagonal (1 - |M \\ I|/n^2),\n"
"  keys per row (min/mean/max), empty rows (softmax is undefined there),\n"
"  symmetric?, causal? (no j > i), Toeplitz? (M[i][j] = M[i+1][j+1]),\n"
"  and for each tile size B the fraction of non-empty B x B tiles and the\n"
"  effective sparsity a block-sparse kernel gets (1 - cells of non-empty\n"
"  tiles / n^2).  Several MASKs print one table row each.\n"
"\n"
"Data sets.  DATA.h5 holds masks (integers or booleans: nonzero is set) or\n"
"attention probabilities (float16/32/64) shaped [samples, layers, heads, N, N];\n"
"leading axes may be absent ([layers, heads, N, N], [heads, N, N], or a 2-D\n"
"[N, N] with --lengths or --by), or be named with --axes.  The data is the\n"
"dataset --dataset, else the first of masks, mask, attentions, attention,\n"
"probs, else the only dataset of rank 2 to 5; each sample's real length N_i\n"
"is the integer dataset 'lengths' [samples] when the file has one (else N).\n"
"The file is read one (sample, layer) block at a time.  Printed:\n"
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
"  head k binding random terms with seed + k as gen --heads-file does.\n"
"\n"
"options:\n"
"  -n, --n N            sequence length (taken from mask files when omitted;\n"
"                       for patterns over lengths: N of the classic figure)\n"
"      --seed S         seed for random terms without seed= (default 0)\n"
"      --tile B         tile size; repeatable (default: 64 and 128)\n"
"      --json           machine-readable output (an array for several MASKs)\n"
"      --max-memory S   limit for materialised data (default 4G)\n"
"      --progress       report progress on stderr (data sets: when it is a\n"
"                       terminal, or under mpirun)\n"
"  -h, --help           this help\n"
"data options:\n"
"      --dataset PATH   the data's path in DATA.h5\n"
"      --lengths L      data files: the lengths' path in DATA.h5 (default\n"
"                       /lengths when present; none: all N long); patterns:\n"
"                       a lengths file, FILE.h5[:/path], FILE.npy (1-D\n"
"                       integers) or text\n"
"      --axes AXES      the leading axes, letters of s, l, h (samples, layers,\n"
"                       heads) in order, e.g. sh for [samples, heads, N, N]\n"
"      --threshold T    attention probabilities: keep p >= T\n"
"      --top-p P        attention probabilities: keep per row the fewest keys\n"
"                       whose mass reaches P (0 < P <= 1)\n"
"      --by WHAT        a breakdown: layer, head or sample\n"
"      --csv            the breakdown as CSV (default --by layer)\n"
"      --png FILE       heatmap of rho per (layer, head): a row per layer\n"
"      --heads-file F   one expression per head (JSON list, or list of lists)\n"
"      --mpi-io MODE    under mpirun: independent (default) or collective reads\n"
"\n"
"Under mpirun/srun (a build with MPI) data files are shared by the ranks: each\n"
"reads its share of the (sample, layer) blocks and rank 0 prints exactly what\n"
"one process prints.\n"
"\n"
"exit status: 0 success, 2 bad input, 1 internal or system error.\n",
};
