/*
 * maskkit explain: the "explaining away" statistics of softmax against
 * doubly-normalised attention (Ding et al.), on real or random Q/K, and the
 * paper's toy models (--toy, cmd_explain_toy.c).  One option table serves
 * both modes.
 */
#include "config.h"
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "cmd_explain.h"
#include "plot.h"

#define EX_STR_(x) #x
#define EX_STR(x) EX_STR_(x)

/* "softmax,dnas,hnas:0.5": each through mk_norm_parse. */
static int explain_norms(const char *list, mk_norm *out, size_t *count)
{
	char buf[64];
	int ret;

	*count = 0;
	for (const char *p = list;; p++) {
		size_t len = strcspn(p, ",");
		if (!len)
			return mk_error_set(MK_EINVAL, "--norm '%s': an empty entry", list);
		if (len >= sizeof buf)
			return mk_error_set(MK_EINVAL, "--norm '%.*s': no such normalisation",
					    (int)len, p);
		if (*count == EXPLAIN_MAX_NORMS)
			return mk_error_set(MK_EINVAL, "--norm: at most %d normalisations",
					    EXPLAIN_MAX_NORMS);
		snprintf(buf, sizeof buf, "%.*s", (int)len, p);
		if ((ret = mk_norm_parse(buf, &out[(*count)++])))
			return ret;
		p += len;
		if (!*p)
			return MK_OK;
	}
}

/* "S,d[,scale]" */
static int explain_random_spec(const char *spec, ex_opts *o)
{
	const char *s = spec;
	char *end;
	long long n, d;
	double scale = 1.0;

	n = strtoll(s, &end, 10);
	if (end == s || *end != ',')
		goto bad;
	d = strtoll(s = end + 1, &end, 10);
	if (end == s || (*end && *end != ','))
		goto bad;
	if (*end == ',') {
		scale = strtod(s = end + 1, &end);
		if (end == s || *end)
			goto bad;
	}
	if (n < 2 || n > MK_N_MAX)
		return mk_error_set(MK_EINVAL, "--random: S must be in 2..%lld, got %lld",
				    (long long)MK_N_MAX, n);
	if (d < 1 || d > 65536)
		return mk_error_set(MK_EINVAL, "--random: d must be in 1..65536, got %lld", d);
	if (!(scale > 0) || !isfinite(scale))
		return mk_error_set(MK_EINVAL, "--random: the scale must be positive, got %g",
				    scale);
	o->src.random_n = n;
	o->src.random_d = d;
	o->src.scale = scale;
	return MK_OK;
bad:
	return mk_error_set(MK_EINVAL, "--random '%s': expected S,d or S,d,scale (e.g. 512,64,2)",
			    spec);
}

static int explain_opt_random(void *opts, const char *arg)
{
	ex_opts *o = opts;
	o->random = arg;
	return explain_random_spec(arg, o);
}

static int explain_opt_linear(void *opts, const char *arg)
{
	if (strcmp(arg, "torch") && strcmp(arg, "tf"))
		return mk_error_set(MK_EINVAL, "--linear must be torch or tf, got '%s'", arg);
	((ex_opts *)opts)->src.tf = !strcmp(arg, "tf");
	return MK_OK;
}

static int explain_opt_eps(void *opts, const char *arg)
{
	double *eps = &((ex_opts *)opts)->run.eps;
	char *end;

	*eps = strtod(arg, &end);
	if (end == arg || *end || !isfinite(*eps))
		return mk_error_set(MK_EINVAL, "--eps '%s' is not a number", arg);
	if (!(*eps > 0 && *eps <= 1))
		return mk_error_set(MK_EINVAL, "--eps must be in (0, 1], got %s", arg);
	return MK_OK;
}

static int explain_opt_score(void *opts, const char *arg)
{
	mk_toy_score score;
	int ret = mk_toy_score_parse(arg, &score);

	((ex_opts *)opts)->toy.score = (int)score;
	return ret;
}

/* Every option of both modes: INPUT's (--random to --progress), both's
 * (--json to --seed), then the toys' (--toy to --sizes); explain_modes
 * refuses an option of the other mode. */
static const struct cli_opt ex_table[] = {
	CLI_OPT_CALL("random", 0, explain_opt_random, "S,d[,scale]", NULL,
		     "Gaussian Q and K, entries N(0, scale^2) (scale 1), picked by --seed"),
	CLI_OPT_READ_AS("q", 0, CLI_STRING, ex_opts, src.q, "Q",
		       "Q from a tensor file (.npy, .h5, .h5:/path), with --k"),
	CLI_OPT_READ_AS("k", 0, CLI_STRING, ex_opts, src.k, "K", "K from a tensor file, with --q"),
	CLI_OPT_INT("heads", 0, ex_opts, src.heads, "H", 1, 1 << 16, NULL,
		    "heads of x/wq/wk (needed there); heads of --random (default 1)"),
	CLI_OPT_INT("sample", 0, ex_opts, src.sample, "K", 0, INT64_MAX / 2, NULL,
		    "INPUT's q and k are [samples, heads, N, dk] (maskkit encode --qk): take sample "
		    "K (0-based), cut to its length in the file's /lengths"),
	CLI_OPT_READ("text", 0, ex_opts, src.text, "FILE",
		     "INPUT is a model (a HuggingFace directory): run it over sample K (--sample, "
		     "default 0) of this text and take that sentence's queries and keys"),
	CLI_OPT_FLAG("sentences", 0, ex_opts, src.sentences,
		     "--text's samples are its sentences (default: its non-blank lines)"),
	CLI_OPT_INT("layer", 0, ex_opts, src.layer, "L", 0, 100000, "0",
		    "with --text: the layer whose queries and keys are taken (0-based)"),
	CLI_OPT_INT("max-len", 0, ex_opts, src.max_len, "N", 2, MK_N_MAX, "512",
		    "with --text: tokens kept of the sentence, [CLS] and [SEP] included"),
	CLI_OPT_CALL("linear", 0, explain_opt_linear, "torch|tf", "torch",
		     "wq/wk stored [heads*d, D] as PyTorch's Linear or [D, heads*d] as Keras", .param = "tf"),
	CLI_OPT_READ_AS("mask", 0, CLI_STRING, ex_opts, mask, "EXPR",
		       "restrict every normalisation to the mask's entries (an expression or "
		       "mask file, bound at S)"),
	{.name = "norm", .type = CLI_STRING, .off = offsetof(ex_opts, norm_arg), .meta = "NORM,...",
	 .def = "softmax,dnas", .help = "normalisations, comma-separated: softmax (unas), dnas, "
	 "hnas:U (U dnas + (1 - U) softmax, U in [0, 1]), sinkhorn:K (K >= 1 rounds)"},
	CLI_OPT_CALL("eps", 0, explain_opt_eps, "E", "1e-8", "explained away below E, in (0, 1]"),
	CLI_OPT_INT("sinkhorn-trace", 0, ex_opts, trace, "K", 1, 1000, NULL,
		    "also run K Sinkhorn rounds and print the row and column residuals "
		    "max |sum - 1| after each"),
	CLI_OPT_INT("bins", 0, ex_opts, bins, "B", 1, MK_EXPLAIN_BINS_MAX, "60", "histogram bins"),
	CLI_OPT_WRITE("hist-csv", 0, ex_opts, hist_csv, "FILE",
		     "the histogram of log10 column sums (all heads)"),
	CLI_OPT_INT("tile", 0, ex_opts, tile, "B", 1, 4096, "64", "tile of the mask's layout"),
	CLI_OPT_SIZE("max-memory", 0, ex_opts, m.bind.max_memory, "SIZE", "4G",
		     "limit for the tensors"),
	CLI_OPT_FLAG("progress", 0, ex_opts, m.progress,
		     "progress on stderr (default when it is a terminal)"),
	CLI_OPT_FLAG("json", 0, ex_opts, json, "everything as JSON on stdout, not the table"),
	CLI_OPT_OUT("csv", 0, ex_opts, csv, "FILE",
		     "per normalisation and head: keys, explained away, log10 column sum "
		     "quartiles, smallest sum vs 1/S (toys: see below; '-': standard output, "
		     "not the table)"),
	CLI_OPT_WRITE("png", 0, ex_opts, png, "FILE.png",
		     "the histogram of log10 column sums, one curve per normalisation (gnuplot; "
		     "the paper's Fig. 1); toys: see below"),
	CLI_OPT_WRITE_H5("output", 'o', ex_opts, m.out, "FILE", "log10_colsum",
		     "the log10 column sums [norms, heads, S], float32 (.h5 or .npy; -inf for a "
		     "key no query may attend to); toys: PREFIX"),
	CLI_OPT_UINT("seed", 0, ex_opts, m.bind.seed, "SEED",
		     NULL, "seed of --random and of --mask's random terms (default 0); toy "
		     "collapse: the points' (default " EX_STR(MK_TOY_COLLAPSE_SEED) ")"),
	CLI_OPT_CALL("toy", 0, explain_opt_toy, "NAME", NULL,
		     "run a toy model instead: collapse or distance"),
	CLI_OPT_CALL("score", 0, explain_opt_score, "dot|dist", "dot",
		     "toys: s_ij = x_i . x_j (dot: a Transformer's scores, unscaled) or "
		     "-|x_i - x_j|^2 / 2 (dist: a Gaussian kernel)"),
	CLI_OPT_INT("steps", 0, ex_opts, toy.steps, "N", 0, MK_TOY_COLLAPSE_STEPS_MAX, "4",
		    "toy collapse: attention steps, 0 to 1000"),
	CLI_OPT_CALL("sd", 0, explain_opt_sd, "S", "0.1",
		     "toy collapse: each coordinate's standard deviation, 0 to 100 (covariance "
		     "0.1 I is --sd 0.316)"),
	CLI_OPT_CALL("a", 0, explain_opt_a, "LIST", "0.25,0.5,0.75,1",
		     "toy distance: half distances, at most 32"),
	CLI_OPT_CALL("r", 0, explain_opt_r, "MIN..MAX[:POINTS]", "0.01..100:201",
		     "toy distance: the curves' ratios, spaced evenly in log r"),
	CLI_OPT_CALL("sizes", 0, explain_opt_sizes, "LIST", "1,2,5,10,20,50,100",
		     "toy distance: the check's cluster sizes, 1 to 1000 each"),
	CLI_OPT_END,
};

/* Which options belong to one mode only (the others: to both). */
static const char *const ex_input_only[] = {
	"random", "q", "k", "heads", "sample", "text", "sentences", "layer", "max-len", "linear", "mask",
	"norm", "eps", "sinkhorn-trace", "bins", "hist-csv", "tile", "max-memory", "progress", NULL};
static const char *const ex_toy_only[] = {"score", "steps", "sd", "a", "r", "sizes", NULL};
static const char *const ex_collapse_only[] = {"steps", "sd", "seed", NULL};
static const char *const ex_distance_only[] = {"a", "r", "sizes", NULL};

static bool explain_in(const char *name, const char *const *names)
{
	for (int k = 0; names[k]; k++)
		if (!strcmp(names[k], name))
			return true;
	return false;
}

/* The first of names given, or NULL. */
static const char *explain_first_given(const cli_args *a, const char *const *names)
{
	for (int k = 0; names[k]; k++)
		if (cli_given(a, names[k]))
			return names[k];
	return NULL;
}

/* An option of the other mode (or of the other toy) is an error naming it. */
static int explain_modes(const ex_opts *o, const cli_args *a)
{
	const struct mk_cmd *c = &mk_cmd_explain;
	const char *name;

	if (!o->toy.name) {
		if (!(name = explain_first_given(a, ex_toy_only)))
			return MK_OK;
		return cli_usage_error(c, "--%s is an option of --toy%s", name,
				       explain_in(name, ex_collapse_only) ? " collapse" :
				       explain_in(name, ex_distance_only) ? " distance" : "");
	}
	if ((name = explain_first_given(a, ex_input_only)))
		return cli_usage_error(c, "--%s is not an option of --toy (it is one of INPUT, "
				       "--random and --q/--k)", name);
	if (!strcmp(o->toy.name, "collapse") && (name = explain_first_given(a, ex_distance_only)))
		return cli_usage_error(c, "--%s is an option of --toy distance", name);
	if (!strcmp(o->toy.name, "distance") && (name = explain_first_given(a, ex_collapse_only)))
		return cli_usage_error(c, "--%s is an option of --toy collapse", name);
	return MK_OK;
}

int explain_check_csv(const char *csv, bool json)
{
	if (csv && !csv[1] && csv[0] == '-' && json)
		return cli_usage_error(&mk_cmd_explain, "give one of --csv - and --json (both write "
				       "to standard output)");
	return MK_OK;
}

/* Exactly one source; outputs that name one file twice refused. */
static int explain_check_opts(const ex_opts *o, const cli_args *a)
{
	const struct mk_cmd *c = &mk_cmd_explain;
	const mk_explain_source *s = &o->src;
	bool linear = cli_given(a, "linear"), sample = cli_given(a, "sample");
	int nargs = a->argc, sources = (nargs > 0) + !!o->random + !!(s->q || s->k);
	const char *outs[] = {o->png, o->csv && strcmp(o->csv, "-") ? o->csv : NULL, o->hist_csv,
			      o->m.out};

	if (nargs > 1)
		return cli_usage_error(c, "one INPUT at most, got %d", nargs);
	if (sources != 1)
		return cli_usage_error(c, sources ? "give one of INPUT, --random or --q/--k, not "
				       "several" : "give INPUT, --random S,d or --q Q --k K");
	if (!s->q != !s->k)
		return cli_usage_error(c, "--q and --k go together");
	if (linear && !nargs)
		return cli_usage_error(c, "--linear applies to an INPUT holding x, wq and wk");
	if (sample && !nargs)
		return cli_usage_error(c, "--sample applies to an INPUT holding q and k [samples, "
				       "heads, N, dk], or a model with --text");
	if (s->text && (!nargs || linear || s->heads))
		return cli_usage_error(c, "--text runs INPUT, a model, over a text: %s",
				       !nargs ? "give the model" : linear ? "no --linear" :
				       "the heads are the model's (no --heads)");
	if (sample && linear)
		return cli_usage_error(c, "--sample takes q and k, not x, wq and wk (no --linear)");
	if (nargs && mk_tensor_format(a->argv[0]) == MK_FMT_NPY)
		return mk_error_set(MK_EINVAL, "INPUT '%s' is a .npy file: give Q and K as --q Q.npy "
				    "--k K.npy", a->argv[0]);
	for (size_t x = 0; x < 4; x++)
		for (size_t y = x + 1; y < 4; y++)
			if (outs[x] && outs[y] && !strcmp(outs[x], outs[y]))
				return cli_usage_error(c, "two outputs name the same file '%s'", outs[x]);
	return MK_OK;
}

/* The checks of the INPUT mode, before any work. */
static int explain_prepare(ex_opts *o, const cli_args *a)
{
	char out_file[4096]; /* FILE.h5 of -o FILE.h5:/dataset */
	const char *outs[] = {o->png, o->csv && strcmp(o->csv, "-") ? o->csv : NULL, o->hist_csv,
			      o->m.out && mk_tensor_file_len(o->m.out) < sizeof out_file ? out_file
											  : NULL};
	int ret;

	if ((ret = explain_check_opts(o, a)) ||
	    (ret = explain_norms(o->norm_arg, o->norms, &o->run.nnorms)))
		return ret;
	if (o->m.out && mk_tensor_format(o->m.out) == MK_FMT_NONE)
		return cli_usage_error(&mk_cmd_explain, "-o '%s': write .h5 or .npy", o->m.out);
	if (outs[3])
		snprintf(out_file, sizeof out_file, "%.*s", (int)mk_tensor_file_len(o->m.out),
			 o->m.out);
	for (size_t x = 0; x < 4; x++)
		if (outs[x] && (ret = cli_check_output_dir(outs[x])))
			return ret;
	return MK_OK;
}

/* One line on stderr, rewritten before each (normalisation, head). */
static void explain_progress(int64_t done, int64_t total, void *arg)
{
	(void)arg;
	fprintf(stderr, "\rmaskkit: explain: %" PRId64 "/%" PRId64 " column sums", done + 1, total);
	if (done + 1 == total)
		fputc('\n', stderr);
}

/* Bin centres, then each normalisation's share of the keys per bin. */
static int ex_plot(const char *path, const mk_explain_report *r)
{
	const mk_explain *e = &r->e;
	size_t cols = e->nnorms + 1, rows = (size_t)e->bins;
	double *data = malloc(rows * cols * sizeof *data);
	const char *names[EXPLAIN_MAX_NORMS + 1] = {"log10_colsum"};
	char title[1024], vars[256];
	int ret;

	if (!data)
		return mk_error_set(MK_ENOMEM, "out of memory for the plot");
	for (size_t a = 0; a < e->nnorms; a++)
		names[a + 1] = r->names[a];
	for (size_t b = 0; b < rows; b++) {
		data[b * cols] = e->lo + ((double)b + 0.5) * e->width;
		for (size_t a = 0; a < e->nnorms; a++) {
			double keys = (double)r->norms[a].all->keys;
			data[b * cols + 1 + a] = keys ? (double)e->hist[a * rows + b] / keys : 0;
		}
	}
	snprintf(title, sizeof title, "column sums of attention: S = %" PRId64 ", %" PRId64
		 " head%s, mask %s (%s)", r->n, r->heads, r->heads == 1 ? "" : "s", r->mask,
		 r->input);
	snprintf(vars, sizeof vars, "log_eps = %.17g; log_bound = %.17g", log10(r->eps),
		 log10(r->bound));
	ret = mk_plot_run(&(mk_plot){.template_name = "explain_hist", .output = path,
				     .title = title, .data = data, .rows = (int64_t)rows,
				     .ncols = (int)cols, .col_names = names, .panels = 1,
				     .vars = vars});
	free(data);
	return ret;
}

/* The report's fields, then its rows as a table and the trace's rounds. */
static int ex_text(const mk_explain_report *r)
{
	int ret = mk_emit(stdout, MK_EMIT_TEXT, &mk_explain_report_record, r, 1, 0);

	if (ret == MK_OK) {
		putchar('\n');
		ret = mk_emit(stdout, MK_EMIT_TABLE, &mk_explain_row_record, r->table,
			      (size_t)r->ntable, 0);
	}
	if (ret == MK_OK && r->rounds) {
		printf("\nsinkhorn trace: |sum - 1| after each round, max and mean over %" PRId64
		       " head%s\n", r->heads, r->heads == 1 ? "" : "s");
		ret = mk_emit(stdout, MK_EMIT_TABLE, &mk_explain_trace_record, r->trace_mean,
			      (size_t)r->rounds, 0);
	}
	return ret;
}

/* The report on stdout (text and a table, JSON, or --csv -'s CSV), then
 * the files asked for. */
static int explain_outputs(const ex_opts *o, const mk_explain_report *r)
{
	bool csv_out = o->csv && !strcmp(o->csv, "-");
	int ret = MK_OK;

	if (o->json)
		ret = mk_emit(stdout, MK_EMIT_JSON, &mk_explain_report_record, r, 1, 0);
	else if (!csv_out)
		ret = ex_text(r);
	if (ret == MK_OK && o->csv)
		ret = mk_emit_path(o->csv, MK_EMIT_CSV, &mk_explain_row_record, r->rows,
				   (size_t)r->nrows, 0);
	if (ret == MK_OK && o->hist_csv)
		ret = mk_explain_write_hist(r, o->hist_csv);
	if (ret == MK_OK && o->png)
		ret = ex_plot(o->png, r);
	if (ret == MK_OK && o->m.out)
		ret = mk_explain_write_sums(&r->e, o->m.out, o->m.bind.max_memory);
	return ret;
}

static int explain_main(ex_opts *o)
{
	mk_qk qk = {0};
	mk_expr *mask = NULL;
	mk_explain_report r = {0};
	int ret;

	o->run.norms = o->norms;
	o->run.max_memory = o->src.max_memory = o->m.bind.max_memory;
	o->src.seed = o->m.bind.seed;
	if (o->m.progress || isatty(STDERR_FILENO))
		o->run.progress = explain_progress;
	if ((ret = mk_explain_source_read(&o->src, &qk)) == MK_OK && o->mask)
		ret = cli_bind_mask(o->mask, &o->m.bind, qk.n, qk.n, &mask);
	if (ret == MK_OK &&
	    (ret = mk_explain_report_run(&o->src, &qk, mask, o->tile, &o->run, &r)) == MK_OK)
		ret = explain_outputs(o, &r);
	mk_explain_report_release(&r);
	mk_expr_free(mask);
	mk_qk_release(&qk);
	return ret;
}

static int explain_exec(void *opts, const cli_args *a)
{
	ex_opts *o = opts;
	int ret;

	if ((ret = explain_modes(o, a)) || (ret = explain_check_csv(o->csv, o->json)))
		return ret;
	if (o->toy.name)
		return explain_toy_exec(o, a, cli_given(a, "seed"));
	if (!cli_given(a, "sample"))
		o->src.sample = -1;
	o->run.trace = (int)o->trace;
	o->run.bins = (int)o->bins;
	o->src.input = a->argc > 0 ? a->argv[0] : NULL;
	if ((ret = explain_prepare(o, a)))
		return ret;
	return explain_main(o);
}

const struct mk_cmd mk_cmd_explain = {
	.name = "explain",
	.summary = "explaining away: column sums of softmax vs doubly-normalised attention",
	.synopsis = "INPUT [options]\n"
		    "MODEL --text FILE [--sentences] [--sample K] [--layer L] [options]\n"
		    "--random S,d[,scale] [--heads H] [--seed SEED] [options]\n"
		    "--q Q --k K [options]\n"
		    "--toy collapse [--steps N] [--seed SEED] [--score dot|dist]\n"
		    " [--sd S] [--json] [--csv FILE] [--png FILE.png]\n"
		    " [-o PREFIX]\n"
		    "--toy distance [--a LIST] [--r MIN..MAX[:POINTS]]\n"
		    " [--sizes LIST] [--score dot|dist] [--json] [--csv FILE]\n"
		    " [--png FILE.png] [-o PREFIX]",
	.opts = ex_table,
	.opts_size = sizeof(ex_opts),
	.exec = explain_exec,
	.description =
"How much of each key reaches the output: the column sums sum_i pi_ij of the\n"
"attention matrix under softmax (UNAS: rows normalised) and the\n"
"doubly-normalised schemes of Ding et al., \"Attention that does not Explain\n"
"Away\" (DNAS: columns, then rows; Theorem 2: every column sum >= 1/S).  A key\n"
"whose column sum is below eps is explained away.  pi is never formed: the\n"
"attention engine's passes stream over the queries, O(S) memory per head.\n"
"\n"
"Q and K come from one of: INPUT, FILE.h5 or FILE.h5:/group holding q and k\n"
"([S, d], [heads, S, d] or [batch, heads, S, d]; with --sample K, sample K of\n"
"[samples, heads, N, d] cut to its /lengths, as maskkit encode --qk writes\n"
"them), or a layer's input x [S, D]\n"
"with wq, wk (and biases bq, bk; --heads and --linear say how); a model (a\n"
"HuggingFace directory, as maskkit encode takes) with --text FILE: sample K\n"
"(--sample, default 0: a non-blank line, or with --sentences a sentence)\n"
"run through the model, and layer L's queries and keys of every head;\n"
"--random; --q Q --k K.\n"
"\n"
"--toy NAME runs one of that paper's toy models instead: points x_i attend to\n"
"each other with Q = K = I, x_i <- sum_j pi_ij x_j, all at once.  UNAS:\n"
"pi_ij = softmax over j of s_ij.  DNAS: xi_ij = exp(s_ij) / sum_i exp(s_ij),\n"
"then pi_ij = xi_ij / sum_j xi_ij (computed in logs: no 0/0).\n"
"  collapse  500 points around (1.8, 0.7) and 50 around (-1, -1); prints the\n"
"            clusters left after each step (points within 1e-3 linked, single\n"
"            linkage).  With the defaults UNAS is 1 cluster after 4 steps and\n"
"            DNAS 2, as in the paper's Fig. 6.\n"
"  distance  N0 points at +a and N1 at -a: the paper's closed forms for the\n"
"            centre distance c0 - c1 after one step against r = N0 / N1 (its\n"
"            Fig. 7), checked against simulated steps on every (N0, N1) pair\n"
"            of --sizes; prints the largest |closed - simulated|.\n",
	.notes =
"Which options go with which mode: --random down to --progress are the\n"
"options of INPUT, --random and --q/--k, and are refused with --toy; --toy and\n"
"the options below it are the toys' ('toy collapse:' and 'toy distance:' for\n"
"one toy only), refused without --toy; --json, --csv, --png, -o and --seed\n"
"belong to both.  With --toy: --seed is collapse's; --csv FILE holds\n"
"scheme,step,clusters,point,mode,x,y for every point after every step\n"
"(collapse), or the curves (kind 'curve': a,r,unas,dnas), the check's steps\n"
"('check') and the largest errors ('max') (distance); --png FILE.png draws\n"
"collapse as a row of panels per scheme, one per step (--steps 10 at most),\n"
"and distance as c0 - c1 against r (log scale), a line per a; -o PREFIX\n"
"writes PREFIX.csv, PREFIX.json and PREFIX.png together.\n"
"\n"
"--csv - prints the CSV on standard output instead of the table.  Files are\n"
"written to a temporary name and renamed, so a failure leaves an existing\n"
"file intact.\n",
	.examples =
"  maskkit explain --random 512,64,2 --mask local16 --png hist.png\n"
"  maskkit explain attn.h5:/explain --heads 4 --linear tf --csv -\n"
"  maskkit explain maps.h5:/qk/layer_2 --sample 0 --norm softmax,dnas --json\n"
"  maskkit explain MODEL_DIR --text book.txt --sentences --sample 3 --layer 5\n"
"  maskkit explain --toy collapse --steps 6 -o collapse\n",
};
