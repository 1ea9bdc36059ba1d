/*
 * maskkit explain: the "explaining away" statistics of softmax against
 * doubly-normalised attention (Ding et al.), on real or random Q/K, and the
 * paper's toy models (--toy, cmd_explain_toy.c).  The outputs are in
 * cmd_explain_out.c.
 */
#include "config.h"
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "cmd_explain.h"
#include "cmd_explain_out.h"

#define EXPLAIN_DEFAULT_NORMS "softmax,dnas"

enum {
	EX_OPT_RANDOM = 400, EX_OPT_Q, EX_OPT_K, EX_OPT_HEADS, EX_OPT_LINEAR, EX_OPT_MASK,
	EX_OPT_NORM, EX_OPT_EPS, EX_OPT_TRACE, EX_OPT_BINS, EX_OPT_PNG, EX_OPT_CSV,
	EX_OPT_HISTCSV
};

static bool explain_wants_toy(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			return false;
		if (!strcmp(argv[i], "--toy") || !strncmp(argv[i], "--toy=", 6))
			return true;
	}
	return false;
}

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

	n = strtoll(s, &end, 10);
	if (end == s || *end != ',')
		goto bad;
	d = strtoll(s = end + 1, &end, 10);
	if (end == s || (*end && *end != ','))
		goto bad;
	o->scale = 1.0;
	if (*end == ',') {
		o->scale = strtod(s = end + 1, &end);
		if (end == s || *end)
			goto bad;
	}
	if (n < 2 || n > MK_N_MAX)
		return mk_error_set(MK_EINVAL, "--random: S must be in 2..%lld, got %lld",
				    (long long)MK_N_MAX, n);
	if (d < 1 || d > 65536)
		return mk_error_set(MK_EINVAL, "--random: d must be in 1..65536, got %lld", d);
	if (!(o->scale > 0) || !isfinite(o->scale))
		return mk_error_set(MK_EINVAL, "--random: the scale must be positive, got %g",
				    o->scale);
	o->rand_n = n;
	o->rand_d = d;
	return MK_OK;
bad:
	return mk_error_set(MK_EINVAL, "--random '%s': expected S,d or S,d,scale (e.g. 512,64,2)",
			    spec);
}

static int explain_double(const char *s, const char *opt, double *out)
{
	char *end;
	*out = strtod(s, &end);
	if (end == s || *end || !isfinite(*out))
		return mk_error_set(MK_EINVAL, "%s '%s' is not a number", opt, s);
	return MK_OK;
}

static int explain_option(int opt, const char *arg, void *ctx)
{
	ex_opts *o = ctx;
	int64_t v;
	int ret;

	switch (opt) {
	case EX_OPT_RANDOM: o->random = arg; return explain_random_spec(arg, o);
	case EX_OPT_Q: o->qspec = arg; return MK_OK;
	case EX_OPT_K: o->kspec = arg; return MK_OK;
	case EX_OPT_HEADS:
		return cli_i64(arg, "--heads", 1, 1 << 16, &o->heads);
	case EX_OPT_LINEAR:
		if (strcmp(arg, "torch") && strcmp(arg, "tf"))
			return mk_error_set(MK_EINVAL, "--linear must be torch or tf, got '%s'", arg);
		o->tf = !strcmp(arg, "tf");
		o->linear = true;
		return MK_OK;
	case EX_OPT_MASK: o->mask = arg; return MK_OK;
	case EX_OPT_NORM: o->norm_arg = arg; return MK_OK;
	case EX_OPT_EPS:
		if ((ret = explain_double(arg, "--eps", &o->run.eps)))
			return ret;
		if (!(o->run.eps > 0 && o->run.eps <= 1))
			return mk_error_set(MK_EINVAL, "--eps must be in (0, 1], got %s", arg);
		return MK_OK;
	case EX_OPT_TRACE:
		if ((ret = cli_i64(arg, "--sinkhorn-trace", 1, 1000, &v)))
			return ret;
		o->run.trace = (int)v;
		return MK_OK;
	case EX_OPT_BINS:
		if ((ret = cli_i64(arg, "--bins", 1, MK_EXPLAIN_BINS_MAX, &v)))
			return ret;
		o->run.bins = (int)v;
		return MK_OK;
	case EX_OPT_PNG: o->png = arg; return MK_OK;
	case EX_OPT_CSV: o->csv = arg; return MK_OK;
	case EX_OPT_HISTCSV: o->hist_csv = arg; return MK_OK;
	case CLI_OPT_JSON: o->json = true; return MK_OK;
	case CLI_OPT_TILE: return cli_i64(arg, "--tile", 1, 4096, &o->tile);
	default: return mk_error_set(MK_EINVAL, "unexpected option");
	}
}

/* Exactly one source; outputs that name one file twice refused. */
static int explain_check_opts(const ex_opts *o, int nargs)
{
	int sources = (nargs > 0) + !!o->random + !!(o->qspec || o->kspec);
	const char *outs[] = {o->png, o->csv, o->hist_csv, o->m.out};

	if (nargs > 1)
		return cli_usage(&mk_cmd_explain, "one INPUT at most, got %d", nargs);
	if (sources != 1)
		return cli_usage(&mk_cmd_explain, sources ? "give one of INPUT, --random or "
				 "--q/--k, not several" : "give INPUT, --random S,d or --q Q --k K");
	if (!o->qspec != !o->kspec)
		return cli_usage(&mk_cmd_explain, "--q and --k go together");
	if (o->linear && !nargs)
		return cli_usage(&mk_cmd_explain, "--linear applies to an INPUT holding x, wq and wk");
	for (size_t a = 0; a < 4; a++)
		for (size_t b = a + 1; b < 4; b++)
			if (outs[a] && outs[b] && !strcmp(outs[a], outs[b]))
				return cli_usage(&mk_cmd_explain, "two outputs name the same file '%s'",
						 outs[a]);
	return -1;
}

static int explain_parse(int argc, char **argv, ex_opts *o)
{
	static const struct option longopts[] = {
		CLI_MASK_LONGOPTS,
		{"random", required_argument, NULL, EX_OPT_RANDOM},
		{"q", required_argument, NULL, EX_OPT_Q},
		{"k", required_argument, NULL, EX_OPT_K},
		{"heads", required_argument, NULL, EX_OPT_HEADS},
		{"linear", required_argument, NULL, EX_OPT_LINEAR},
		{"mask", required_argument, NULL, EX_OPT_MASK},
		{"norm", required_argument, NULL, EX_OPT_NORM},
		{"eps", required_argument, NULL, EX_OPT_EPS},
		{"sinkhorn-trace", required_argument, NULL, EX_OPT_TRACE},
		{"bins", required_argument, NULL, EX_OPT_BINS},
		{"png", required_argument, NULL, EX_OPT_PNG},
		{"csv", required_argument, NULL, EX_OPT_CSV},
		{"hist-csv", required_argument, NULL, EX_OPT_HISTCSV},
		{"json", no_argument, NULL, CLI_OPT_JSON},
		{"tile", required_argument, NULL, CLI_OPT_TILE},
		{NULL, 0, NULL, 0}};
	int ret = cli_parse(&mk_cmd_explain, argc, argv, longopts, &o->m, explain_option, o);
	const char *outs[] = {o->png, o->csv, o->hist_csv, o->m.out};
	char out_file[4096];

	if (ret >= 0)
		return ret;
	o->input = optind < argc ? argv[optind] : NULL;
	if ((ret = explain_check_opts(o, argc - optind)) >= 0)
		return ret;
	if ((ret = explain_norms(o->norm_arg, o->norms, &o->run.nnorms)))
		return cli_fail(ret);
	if (o->m.out && mk_tensor_format(o->m.out) == MK_FMT_NONE)
		return cli_usage(&mk_cmd_explain, "-o '%s': write .h5 or .npy", o->m.out);
	for (size_t a = 0; a < 3; a++)
		if (outs[a] && (ret = cli_check_output_dir(outs[a])))
			return cli_fail(ret);
	/* the directory of FILE.h5 in FILE.h5:/dataset */
	if (o->m.out && mk_tensor_file_len(o->m.out) < sizeof out_file) {
		snprintf(out_file, sizeof out_file, "%.*s", (int)mk_tensor_file_len(o->m.out),
			 o->m.out);
		if ((ret = cli_check_output_dir(out_file)))
			return cli_fail(ret);
	}
	return -1;
}

static int explain_load(const ex_opts *o, mk_qk *qk)
{
	uint64_t mem = o->m.bind.max_memory;
	mk_tensor q = {0}, k = {0};
	int ret;

	if (o->random)
		return mk_qk_random(o->heads ? o->heads : 1, o->rand_n, o->rand_d, o->scale,
				    o->m.bind.seed, mem, qk);
	if (o->input && mk_tensor_format(o->input) == MK_FMT_NPY)
		return mk_error_set(MK_EINVAL, "INPUT '%s' is a .npy file: give Q and K as --q Q.npy "
				    "--k K.npy", o->input);
	if (o->input)
		return mk_qk_read(o->input, o->heads, o->tf, mem, qk);
	if ((ret = mk_tensor_read(o->qspec, mem, &q)) || (ret = mk_tensor_read(o->kspec, mem, &k)) ||
	    (o->m.out && (ret = mk_tensor_check_output(o->m.out, "log10_colsum",
						       (const char *const[]){o->qspec, o->kspec},
						       2)))) {
		mk_tensor_release(&q);
		mk_tensor_release(&k);
		return ret;
	}
	if ((ret = mk_qk_adopt(&q, &k, qk)) == MK_OK && o->heads && o->heads != qk->heads)
		ret = mk_error_set(MK_EINVAL, "--heads %" PRId64 " but Q and K hold %" PRId64
				   " heads", o->heads, qk->heads);
	return ret;
}

/* The mask at S (NULL layout: every entry, the dense kernel). */
static int explain_mask(const ex_opts *o, int64_t n, ex_job *j)
{
	int ret;

	if (!o->mask)
		return MK_OK;
	if ((ret = cli_bind_mask(o->mask, &o->m.bind, n, &j->expr)) ||
	    (ret = mk_expr_to_mask(j->expr, &j->mask)))
		return ret;
	j->entries = mk_mask_count(j->mask);
	return mk_attn_layout_new(j->mask, o->tile, o->m.bind.max_memory, &j->layout);
}

/* One line on stderr, rewritten before each (normalisation, head). */
static void explain_progress(int64_t done, int64_t total, void *arg)
{
	(void)arg;
	fprintf(stderr, "\rmaskkit: explain: %" PRId64 "/%" PRId64 " column sums", done + 1, total);
	if (done + 1 == total)
		fputc('\n', stderr);
}

static double explain_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int explain_main(const ex_opts *o)
{
	ex_job j = {.o = o};
	mk_explain_opts run = o->run;
	int ret;

	if ((ret = explain_load(o, &j.qk)))
		goto cleanup;
	j.entries = (uint64_t)j.qk.n * (uint64_t)j.qk.n;
	if (j.qk.n < 2) {
		ret = mk_error_set(MK_EINVAL, "explaining away needs S >= 2 tokens, got S = %" PRId64,
				   j.qk.n);
		goto cleanup;
	}
	if ((ret = explain_mask(o, j.qk.n, &j)))
		goto cleanup;
	run.norms = o->norms;
	run.max_memory = o->m.bind.max_memory;
	if (o->m.progress || isatty(STDERR_FILENO))
		run.progress = explain_progress;
	j.seconds = explain_now();
	ret = mk_explain_run(&run, j.qk.heads, j.qk.n, j.qk.d, j.qk.q.data, j.qk.k.data, j.layout,
			     &j.e);
	j.seconds = explain_now() - j.seconds;
	if (ret == MK_OK)
		ret = explain_outputs(&j);
cleanup:
	mk_explain_free(&j.e);
	mk_attn_layout_free(j.layout);
	mk_mask_free(j.mask);
	mk_expr_free(j.expr);
	mk_qk_free(&j.qk);
	return ret;
}

static int explain_run(int argc, char **argv)
{
	ex_opts o = {.norm_arg = EXPLAIN_DEFAULT_NORMS, .tile = 64,
		     .run = {.eps = MK_EXPLAIN_EPS, .bins = 60}};
	int ret;

	if (explain_wants_toy(argc, argv))
		return explain_toy_main(argc, argv);
	cli_mask_defaults(&o.m);
	if ((ret = explain_parse(argc, argv, &o)) >= 0)
		return ret;
	ret = explain_main(&o);
	return cli_finish(ret ? cli_fail(ret) : MK_EXIT_OK);
}

const struct mk_cmd mk_cmd_explain = {
	.name = "explain",
	.summary = "explaining away: column sums of softmax vs doubly-normalised attention",
	.usage =
"usage: maskkit explain INPUT [options]\n"
"       maskkit explain --random S,d[,scale] [--heads H] [--seed N] [options]\n"
"       maskkit explain --q Q --k K [options]\n"
"\n"
"How much of each key reaches the output: the column sums sum_i pi_ij of the\n"
"attention matrix under softmax (UNAS: rows normalised) and the\n"
"doubly-normalised schemes of Ding et al., \"Attention that does not Explain\n"
"Away\" (DNAS: columns, then rows; Theorem 2: every column sum >= 1/S).  A key\n"
"whose column sum is below eps is explained away.  pi is never formed: the\n"
"attention engine's passes stream over the queries, O(S) memory per head.\n"
"\n"
"Input (one of):\n"
"  INPUT                  FILE.h5 or FILE.h5:/group holding q and k ([S, d],\n"
"                         [heads, S, d] or [batch, heads, S, d]), or a layer's\n"
"                         input x [S, D] with wq, wk (and biases bq, bk)\n"
"      --heads H          heads of x/wq/wk (needed there); heads of --random (1)\n"
"      --linear torch|tf  wq/wk stored [heads*d, D] as PyTorch's Linear (default)\n"
"                         or [D, heads*d] as Keras\n"
"      --random S,d[,scale]  Gaussian Q and K, entries N(0, scale^2) (scale 1);\n"
"                         --seed N picks them (default 0)\n"
"      --q Q --k K        two tensor files (.npy, .h5, .h5:/path)\n"
"\n"
"Options:\n"
"      --mask EXPR        restrict every normalisation to the mask's entries\n"
"                         (an expression or mask file, bound at S)\n"
"      --norm LIST        normalisations, comma-separated (default softmax,dnas):\n"
"                         softmax (unas), dnas, hnas:U (U dnas + (1 - U) softmax,\n"
"                         U in [0, 1]), sinkhorn:K (K >= 1 rounds)\n"
"      --eps E            explained away below E (default 1e-8)\n"
"      --sinkhorn-trace K also run K Sinkhorn rounds and print the row and\n"
"                         column residuals max |sum - 1| after each\n"
"      --json             everything as JSON on stdout\n"
"      --csv FILE         per normalisation and head: keys, explained away,\n"
"                         log10 column sum quartiles, smallest sum vs 1/S\n"
"      --hist-csv FILE    the histogram of log10 column sums (all heads)\n"
"      --png FILE         that histogram, one curve per normalisation (gnuplot;\n"
"                         the paper's Fig. 1)\n"
"      --bins B           histogram bins (default 60)\n"
"  -o, --output FILE      the log10 column sums [norms, heads, S], float32 (.h5\n"
"                         or .npy; -inf for a key no query may attend to)\n"
"      --tile T           tile of the mask's layout (default 64)\n"
"      --max-memory SIZE  limit for the tensors (default 4G)\n"
"      --progress         progress on stderr (default when it is a terminal)\n"
"\n"
EXPLAIN_TOY_USAGE,
	.run = explain_run,
};
