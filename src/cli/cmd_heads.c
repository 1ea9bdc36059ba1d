/*
 * maskkit heads: what each attention head does, in a data set of attention
 * probabilities -- its mass on the previous and next token, the diagonal, a
 * band, [CLS], [SEP] and punctuation, its entropy, top-p sparsity and the
 * Toeplitz R^2 of its mean map, and the role these give (Clark et al. 2019,
 * Kovaleva et al. 2019); a table sorted by a column, CSV, JSON and a grid
 * figure by role.  The work is the library's (analysis/head_roles*.c).
 */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

typedef struct hd_opts {
	mk_head_roles_opts r; /* the library's: the data set, window, top-p, thresholds ... */
	const char *csv, *png;
	bool json, quiet;
} hd_opts;

/* --lengths and --axes take '' too (no lengths; no leading axes). */
static int hd_opt_lengths(void *opts, const char *arg)
{
	((hd_opts *)opts)->r.d.lengths = arg;
	return MK_OK;
}

static int hd_opt_axes(void *opts, const char *arg)
{
	((hd_opts *)opts)->r.d.axes = arg;
	return MK_OK;
}

#define HD_STR(x) #x
#define HD_DEF(x) HD_STR(x)

static const struct cli_opt hd_table[] = {
	CLI_OPT_STRING("dataset", 0, hd_opts, r.d.dataset, "PATH",
		       "the probabilities (default as attn-stats); FILE.h5:/PATH too"),
	CLI_OPT_CALL("lengths", 0, hd_opt_lengths, "L", NULL,
		     "the lengths [samples] in FILE (default 'lengths' when present; "
		     "'' or none: every sample is N long)"),
	CLI_OPT_CALL("axes", 0, hd_opt_axes, "AXES", NULL,
		     "the leading axes in order, from 's' samples, 'l' layers, 'h' heads "
		     "(default by rank: slh, lh, h, none)"),
	CLI_OPT_INT("window", 0, hd_opts, r.window, "W", 0, MK_N_MAX, HD_DEF(MK_HEAD_WINDOW),
		    "band: the mass on keys with |j - i| <= W"),
	CLI_OPT_DOUBLE("top-p", 0, hd_opts, r.top_p, "P", 0, 1, CLI_LO_OPEN, HD_DEF(MK_HEAD_TOP_P),
		       "sparsity: per row the fewest keys holding P of its mass (as measure "
		       "--top-p)"),
	CLI_OPT_INT("map-size", 0, hd_opts, r.map_size, "M", 1, MK_N_MAX, NULL,
		    "the mean map's size for the Toeplitz R^2 (default: the median length)"),
	CLI_OPT_READ("tokenizer", 0, hd_opts, r.tokenizer, "PATH",
		     "tells punctuation ids apart (tokenizer.json, vocab.txt or their directory; "
		     "default: the directory of the file's model attribute)"),
	CLI_OPT_FLAG("no-punct", 0, hd_opts, r.no_punct, "no punct column (no ids, no tokenizer)"),
	CLI_OPT_DOUBLE("prev", 0, hd_opts, r.t.prev, "T", 0, 1, 0, HD_DEF(MK_HEAD_PREV),
		       "previous-token: prev >= T"),
	CLI_OPT_DOUBLE("next", 0, hd_opts, r.t.next, "T", 0, 1, 0, HD_DEF(MK_HEAD_NEXT),
		       "next-token: next >= T"),
	CLI_OPT_DOUBLE("band", 0, hd_opts, r.t.band, "T", 0, 1, 0, HD_DEF(MK_HEAD_BAND),
		       "local-band: band >= T"),
	CLI_OPT_DOUBLE("sink", 0, hd_opts, r.t.sink, "T", 0, 2, 0, HD_DEF(MK_HEAD_SINK),
		       "cls-sep-sink: cls + sep >= T"),
	CLI_OPT_DOUBLE("broad", 0, hd_opts, r.t.broad, "T", 0, 1, 0, HD_DEF(MK_HEAD_BROAD),
		       "broad: entropy_norm >= T"),
	CLI_OPT_STRING("sort", 0, hd_opts, r.sort, "COLUMN",
		       "order of the rows: layer (default), head, role, or a measure (largest "
		       "first)"),
	CLI_OPT_OUT("csv", 0, hd_opts, csv, "FILE",
		    "one CSV row per head, in --sort's order ('-': standard output, instead of "
		    "the table)"),
	CLI_OPT_FLAG("json", 0, hd_opts, json, "everything as JSON on stdout"),
	CLI_OPT_WRITE("png", 0, hd_opts, png, "FILE.png",
		      "a layers x heads grid coloured by role (gnuplot)"),
	CLI_OPT_SIZE("max-memory", 0, hd_opts, r.d.max_memory, "SIZE", "4G",
		     "limit for one block, the sums and the mean maps"),
	CLI_OPT_FLAG("quiet", 'q', hd_opts, quiet, "no progress on stderr"),
	CLI_OPT_END,
};

static void hd_progress(int64_t done, int64_t total, void *arg)
{
	(void)arg;
	/* a line per percent: a million samples must not mean a million writes */
	if (done < total && (100 * done) / total == (100 * (done - 1)) / total)
		return;
	fprintf(stderr, "\rmaskkit: heads: %" PRId64 "/%" PRId64 " samples (%.0f%%)%s", done,
		total, 100.0 * (double)done / (double)total, done >= total ? "\n" : "");
}

static int hd_check(const hd_opts *o, const cli_args *a)
{
	const struct mk_cmd *c = &mk_cmd_heads;
	bool csv_out = o->csv && !strcmp(o->csv, "-");
	int ret;

	if (a->argc < 1)
		return cli_usage_error(c, "missing FILE.h5");
	if (a->argc > 1)
		return cli_usage_error(c, "one FILE.h5 at a time, got %d", a->argc);
	if (csv_out && o->json)
		return cli_usage_error(c, "give one of --csv - and --json (both write to "
				       "standard output)");
	if (o->png && o->csv && !strcmp(o->png, o->csv))
		return cli_usage_error(c, "--png and --csv name the same file '%s'", o->png);
	if (o->r.no_punct && o->r.tokenizer)
		return cli_usage_error(c, "give one of --no-punct and --tokenizer");
	if (o->png && (ret = cli_check_output_dir(o->png)))
		return ret;
	if (o->csv && !csv_out && (ret = cli_check_output_dir(o->csv)))
		return ret;
	return MK_OK;
}

static int hd_outputs(const mk_head_roles *r, const hd_opts *o)
{
	const mk_record *row = &mk_head_row_record;
	bool csv_out = o->csv && !strcmp(o->csv, "-");
	size_t count = (size_t)r->count;
	int ret;

	if (o->json)
		ret = mk_emit(stdout, MK_EMIT_JSON, &mk_head_roles_record, r, 1, 0);
	else if (csv_out)
		ret = mk_emit(stdout, MK_EMIT_CSV, row, r->sorted, count, 0);
	else if (!(ret = mk_emit(stdout, MK_EMIT_TEXT, &mk_head_roles_record, r, 1,
				 MK_EMIT_NO_NOTE)) &&
		 putchar('\n') != EOF) /* a write error shows at the end (cli_finish) */
		ret = mk_emit(stdout, MK_EMIT_TABLE, row, r->sorted, count, 0);
	if (ret == MK_OK && o->csv && !csv_out)
		ret = mk_emit_path(o->csv, MK_EMIT_CSV, row, r->sorted, count, 0);
	if (ret == MK_OK && o->png)
		ret = mk_head_roles_png(r, o->png);
	return ret;
}

static int hd_exec(void *opts, const cli_args *a)
{
	hd_opts *o = opts;
	mk_head_roles r;
	int ret;

	if ((ret = hd_check(o, a)))
		return ret;
	o->r.progress = !o->quiet && isatty(STDERR_FILENO) ? hd_progress : NULL;
	if ((ret = mk_head_roles_run(a->argv[0], &o->r, &r)))
		return ret;
	ret = hd_outputs(&r, o);
	mk_head_roles_release(&r);
	return ret;
}

const struct mk_cmd mk_cmd_heads = {
	.name = "heads",
	.summary = "what each attention head does: local, [CLS]/[SEP] sink, broad (roles)",
	.synopsis = "FILE.h5[:/PATH] [--window W] [--top-p P] [--map-size M]\n"
		    " [--tokenizer PATH | --no-punct] [--sort COLUMN] [--csv FILE] [--json]\n"
		    " [--png FILE.png] [--prev T] [--next T] [--band T] [--sink T] [--broad T]",
	.opts = hd_table,
	.opts_size = sizeof(hd_opts),
	.exec = hd_exec,
	.description =
"Reads attention probabilities P [samples, layers, heads, N, N] and each\n"
"sample's length N_i, as attn-stats does, and says per layer and head, over\n"
"the real N_i x N_i block of every sample (cell-weighted: all samples' real\n"
"rows pooled, so a sample of length N_i weighs N_i rows):\n"
"  prev, next    mean of P[i][i-1] (rows i >= 1), of P[i][i+1] (i <= N_i - 2)\n"
"  diag          mean of P[i][i]\n"
"  band          mean over rows of the mass on keys with |j - i| <= W\n"
"  cls, sep      mean of P[i][0] ([CLS]) and of P[i][N_i - 1] (the [SEP])\n"
"  punct         mean over rows of the mass on punctuation tokens: needs the\n"
"                file's /ids (maskkit encode writes them) and a tokenizer\n"
"                (--tokenizer, else the directory of the file's model\n"
"                attribute); without them empty, and the text says why\n"
"  entropy       mean row entropy in nats\n"
"  entropy_norm  (ent_norm in the table) mean of each row's entropy / ln N_i\n"
"                (1: uniform attention; rows of samples with N_i >= 2)\n"
"  sparsity      top-p sparsity as `maskkit measure --top-p P --by head`:\n"
"                the mean over samples of 1 - kept / N_i^2, kept the fewest\n"
"                keys per row holding P of its mass\n"
"  toep_r2       (toeplitz_r2 in CSV and JSON) R^2 of the Toeplitz fit of the\n"
"                head's mean map: the leading M x M block averaged over the\n"
"                samples at least M long (as attn-derive --mean-map; 1: the\n"
"                head depends on j - i only)\n"
"and the role, the first of these tests the head passes (thresholds after\n"
"Clark et al. 2019, \"What does BERT look at?\": heads that put most of their\n"
"attention on the previous or next token, on [CLS]/[SEP], or broadly; and\n"
"Kovaleva et al. 2019's diagonal, vertical and heterogeneous patterns):\n"
"  previous-token  prev >= 0.5 (--prev)\n"
"  next-token      next >= 0.5 (--next)\n"
"  local-band      band >= 0.5 (--band), W = 2 (--window)\n"
"  cls-sep-sink    cls + sep >= 0.5 (--sink)\n"
"  broad           entropy_norm >= 0.75 (--broad)\n"
"  mixed           none of these\n"
"\"Most\" is read as at least half of each row's mass, pooled over rows.  On\n"
"samples of a few tokens chance alone passes some tests: uniform attention\n"
"puts (2W + 1) / N_i of a row in the band and 2 / N_i on [CLS] and [SEP].\n",
	.notes =
"The table lists every head in --sort's order: layer (layer, then head, the\n"
"default), head, role (the order above), or any measure, largest first\n"
"(ties in layer and head order, missing values last).  --csv FILE writes the\n"
"same rows as CSV and still prints the table (or --json); --csv - prints the\n"
"CSV instead.  --json holds the settings, the count of each role and the\n"
"heads in --sort's order.  --png draws the grid: one cell per head, coloured\n"
"by role and labelled with the role and the number that gave it.\n"
"\n"
"Integer data (masks) are refused.  A negative, NaN or infinite probability\n"
"in a real cell is an error naming it.  The data are read once, one (sample,\n"
"layer) block at a time; progress goes to stderr on a terminal (-q: none).\n",
	.examples =
"  maskkit heads attn.h5 --png heads.png\n"
"  maskkit heads attn.h5 --sort prev --csv heads.csv\n",
};
