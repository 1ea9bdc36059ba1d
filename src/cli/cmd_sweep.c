/*
 * maskkit sweep: what does a mask cost, compared with dense attention?  For
 * each pattern and target sparsity, solves the pattern's size parameter,
 * times every kernel on random tensors and checks its output against a
 * double-precision reference; writes a CSV or JSON table (with the machine
 * it ran on) and, with --png, a gnuplot figure of time against sparsity.
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "cmd_sweep.h"

#define SWEEP_DEFAULT_PATTERNS "local,strided,fixed,logsparse,bigbird,longformer,star,random"

static const char *const sweep_backends[] = {"auto", "cpu", "cuda", NULL};
static const char *const sweep_dtypes[] = {"fp32", "fp16", "bf16", NULL};
static const int sweep_dtype_values[] = {MK_COMPUTE_FP32, MK_COMPUTE_FP16, MK_COMPUTE_BF16};

/* ---- options ---------------------------------------------------------------------- */

static int sweep_opt_sparsity(void *opts, const char *arg)
{
	sweep_cli *c = opts;
	return cli_sparsities(arg, "--sparsity", c->targets, SWEEP_MAX_TARGETS, &c->s.ntargets);
}

/* One value by the sparsity rule: 0.05, 5% and 5 are all 5%. */
static int sweep_opt_precision(void *opts, const char *arg)
{
	sweep_cli *c = opts;
	size_t count;

	if (strchr(arg, ',') || strstr(arg, ".."))
		return mk_error_set(MK_EINVAL, "--precision takes one value (0.05 or 5%%), got '%s'",
				    arg);
	return cli_sparsities(arg, "--precision", &c->s.precision, 1, &count);
}

/* A string option with a default. */
#define SWEEP_OPT_LIST(n, f, m, d, h)                                                            \
	{.name = n, .type = CLI_STRING, .off = offsetof(sweep_cli, f), .meta = m, .def = d,      \
	 .help = h}
/* --patterns: names, expressions and mask files (inputs: see cli_io.c) */
#define SWEEP_OPT_INPUTS(n, f, m, d, h)                                                          \
	{.name = n, .type = CLI_STRING, .off = offsetof(sweep_cli, f), .meta = m, .def = d,      \
	 .help = h, .flags = CLI_INPUT}

static const struct cli_opt sweep_table[] = {
	SWEEP_OPT_INPUTS("patterns", patterns_arg, "P,...", SWEEP_DEFAULT_PATTERNS,
		       "the masks: a pattern named alone is solved for each target; any other "
		       "expression or mask file (local2+global1, causal, m.npy) is one point at "
		       "its own sparsity; LABEL=MASK names the rows"),
	CLI_OPT_CALL("sparsity", 0, sweep_opt_sparsity, "S", "10..90",
		     "target sparsities, A..B[:STEP] (STEP 10%) or S1,S2,...: percentages (10..90, "
		     "10%..90%) or fractions (0.1..0.9); see below"),
	CLI_OPT_INT("n", 'n', sweep_cli, s.shape.n, "N", 1, MK_N_MAX, "1024", "sequence length"),
	CLI_OPT_INT("batch", 0, sweep_cli, s.shape.batch, "B", 1, 4096, "1", "batch size"),
	CLI_OPT_INT("heads", 0, sweep_cli, s.shape.heads, "H", 1, 4096, "4", "heads"),
	CLI_OPT_INT("head-dim", 0, sweep_cli, s.shape.d, "D", 1, 1 << 20, "64",
		    "head dimension: the cpu backend takes 1 to 1024, the cuda backend 1 to 128"),
	CLI_OPT_ENUM("dtype", 0, sweep_cli, dtype, "T", sweep_dtypes, sweep_dtype_values, "fp32",
		     "fp32; fp16 (fp32 accumulation) needs a GPU backend; bf16 runs on a GPU or "
		     "on a CPU with AVX512_BF16 (dense, masked, block; csr stays fp32)"),
	CLI_OPT_ENUM("backend", 0, sweep_cli, backend, "B", sweep_backends, NULL, "auto",
		     "auto (cuda when built and a device is usable, else cpu), cpu or cuda"),
	CLI_OPT_INT("device", 0, sweep_cli, device, "N", 0, 1023, NULL,
		    "the GPU a GPU backend runs on (default 0; under MPI see below)"),
	SWEEP_OPT_LIST("kernels", kernels_arg, "K,...", "dense,masked,block,csr",
		       "the kernels timed, of dense, masked, block, csr"),
	SWEEP_OPT_LIST("norm", norms_arg, "NORM,...", "softmax",
		       "normalisations, of softmax, dnas, hnas:U, sinkhorn:K"),
	CLI_OPT_INT("tile", 0, sweep_cli, s.tile, "B", 1, MK_N_MAX, "64",
		    "tile size of the block kernels, and the block of bigbird's block form"),
	CLI_OPT_CALL("precision", 0, sweep_opt_precision, "P", "5%",
		     "repeat a point until every speed-up's 95% interval is within +-P of it"),
	CLI_OPT_DOUBLE("max-time", 0, sweep_cli, s.max_time, "S", 0, 3600, 0, "0.6",
		       "stop repeating a point once its timed runs took S seconds (0: no limit)"),
	CLI_OPT_INT("min-reps", 0, sweep_cli, min_reps, "R", 1, 100000, "6",
		    "timed runs of each kernel per point at least (6: the fewest with a 95% "
		    "interval)"),
	CLI_OPT_INT("max-reps", 0, sweep_cli, max_reps, "R", 1, 100000, "200",
		    "timed runs of each kernel per point at most"),
	CLI_OPT_INT("reps", 0, sweep_cli, reps, "R", 1, 100000, NULL,
		    "exactly R timed runs per point (--min-reps R --max-reps R: no adapting)"),
	CLI_OPT_INT("warmup", 0, sweep_cli, warmup, "W", 1, 1000, "1",
		    "untimed runs of each kernel per point first (the first checks the output)"),
	CLI_OPT_UINT("seed", 0, sweep_cli, s.seed, "SEED", "0", "seed of the tensors and random patterns"),
	CLI_OPT_SIZE("max-memory", 0, sweep_cli, s.max_memory, "SIZE", "4G",
		     "limit for tensors and masks"),
	CLI_OPT_WRITE("output", 'o', sweep_cli, out, "FILE",
		     "the table to F: .csv, or .json (the machine in a \"machine\" object)"),
	CLI_OPT_OUT("csv", 0, sweep_cli, csv, "FILE", "the CSV table to FILE ('-': standard output)"),
	CLI_OPT_FLAG("json", 0, sweep_cli, json, "the table as JSON on standard output"),
	CLI_OPT_FLAG("quiet", 'q', sweep_cli, quiet, "no progress and no summary: only the tables "
		     "asked for (and warnings)"),
	CLI_OPT_WRITE("png", 0, sweep_cli, png, "FILE.png",
		     "time and speed-up (bars: quartiles, 95% interval) against achieved "
		     "sparsity, a line per (pattern, kernel), as the report draws it (gnuplot)"),
	CLI_OPT_OLD("plot", "png"),
	CLI_OPT_END,
};

/* -o's format, from its name: CSV (.csv, or no name) or JSON (.json). */
static int sweep_output_format(const char *path, mk_emit_fmt *fmt)
{
	const char *dot = path ? strrchr(path, '.') : NULL;

	*fmt = dot && !strcmp(dot, ".json") ? MK_EMIT_JSON : MK_EMIT_CSV;
	if (path && (!dot || (strcmp(dot, ".csv") && strcmp(dot, ".json"))))
		return mk_error_set(MK_EINVAL, "cannot tell the format of '%s' from its name: use "
				    ".csv or .json", path);
	return MK_OK;
}

/* The outputs: one writer each, and only one of them on standard output. */
static int sweep_check_outputs(const sweep_cli *c)
{
	const char *names[3] = {c->out, c->csv, c->png}, *opts[3] = {"-o", "--csv", "--png"};
	mk_emit_fmt fmt;
	int ret;

	if ((ret = sweep_output_format(c->out, &fmt)))
		return ret;
	if (c->png && (!strrchr(c->png, '.') || strcmp(strrchr(c->png, '.'), ".png")))
		return mk_error_set(MK_EINVAL, "--png '%s': the plot is a PNG (name it .png)", c->png);
	if (c->json && c->csv && !strcmp(c->csv, "-"))
		return cli_usage_error(&mk_cmd_sweep, "--json and --csv - both write standard output");
	for (int x = 0; x < 3; x++)
		for (int y = x + 1; y < 3; y++)
			if (names[x] && names[y] && !strcmp(names[x], names[y]))
				return cli_usage_error(&mk_cmd_sweep, "%s and %s name the same file "
						       "'%s'", opts[x], opts[y], names[x]);
	return MK_OK;
}

static int sweep_validate(sweep_cli *c, const cli_args *a)
{
	int ret;

	if (a->argc > 0)
		return cli_usage_error(&mk_cmd_sweep, "unexpected argument '%s'", a->argv[0]);
	c->device_given = cli_given(a, "device");
	c->s.dtype = (mk_compute)c->dtype;
	c->s.device = (int)c->device;
	c->s.warmup = (int)c->warmup;
	if (cli_given(a, "reps")) {
		if (cli_given(a, "min-reps") || cli_given(a, "max-reps"))
			return cli_usage_error(&mk_cmd_sweep, "--reps is exact: give it or "
					       "--min-reps/--max-reps, not both");
		c->min_reps = c->max_reps = c->reps;
	} else if (c->max_reps < c->min_reps) {
		return cli_usage_error(&mk_cmd_sweep, "--max-reps %" PRId64 " is below --min-reps %"
				       PRId64, c->max_reps, c->min_reps);
	}
	c->s.min_reps = (int)c->min_reps;
	c->s.max_reps = (int)c->max_reps;
	if ((ret = mk_sweep_lists_parse(c->patterns_arg, c->kernels_arg, c->norms_arg, &c->lists,
					&c->s)) ||
	    (ret = mk_sweep_setup(&c->s, sweep_backends[c->backend], !c->device_given)) ||
	    (ret = sweep_check_outputs(c)))
		return ret;
	if (c->s.tile > c->s.shape.n && c->s.shape.n >= 64)
		return mk_error_set(MK_EINVAL, "--tile %" PRId64 " is larger than n = %" PRId64,
				    c->s.tile, c->s.shape.n);
	c->s.targets = c->targets;
	c->s.part = mk_par_rank();
	c->s.parts = mk_par_size();
	return mk_sweep_check_memory(&c->s);
}

/* ---- progress and results ---------------------------------------------------- */

static double sweep_clock(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Progress on stderr: one line per step in a log, one updating line with
 * a bar and the time left on a terminal. */
static void sweep_show(int64_t done, int64_t total, const char *what, void *arg)
{
	sweep_cli *c = arg;
	int width = 24, full = total ? (int)(width * done / total) : width;
	double now = sweep_clock(), left;
	char eta[32] = "";

	if (c->quiet)
		return;
	if (done == 0 || c->started == 0)
		c->started = now;
	left = done > 0 ? (now - c->started) * (double)(total - done) / (double)done : 0;
	if (done > 0 && done < total)
		snprintf(eta, sizeof eta, " ~%.0f s left", ceil(left));
	if (!c->tty) {
		fprintf(stderr, "maskkit: sweep %" PRId64 "/%" PRId64 ": %s\n", done, total, what);
		return;
	}
	fprintf(stderr, "\r\033[Kmaskkit: sweep [%.*s%*s] %" PRId64 "/%" PRId64 "%s %.48s", full,
		"########################", width - full, "", done, total, eta, what);
	if (done >= total)
		fputc('\n', stderr);
	fflush(stderr);
}

/* ---- the command ------------------------------------------------------------- */

/* Files go to a temporary name beside them, renamed on success; standard
 * output gets the JSON (--json) or the CSV (--csv -), else the summary. */
static int sweep_write(const sweep_cli *c)
{
	mk_emit_fmt fmt;
	int ret = MK_OK;

	if (c->out && !(ret = sweep_output_format(c->out, &fmt)))
		ret = mk_sweep_write_path(c->out, fmt, &c->res);
	if (!ret && c->csv)
		ret = mk_sweep_write_path(c->csv, MK_EMIT_CSV, &c->res);
	if (!ret && c->json)
		ret = mk_sweep_write_path("-", MK_EMIT_JSON, &c->res);
	return ret;
}

/* Points to read with care: a best kernel whose interval is wider than the
 * precision asked, medians that disagreed. */
static void sweep_warn(const sweep_cli *c)
{
	const mk_sweep_result *r = &c->res;

	if (r->wide && c->s.min_reps >= c->s.max_reps)
		fprintf(stderr, "maskkit: warning: at %zu of %zu points the best kernel's interval "
			"is wider than +-%g%% after --reps %d: more runs, or a quiet machine, "
			"narrow it\n", r->wide, r->points, 100 * c->s.precision, c->s.min_reps);
	else if (r->wide)
		fprintf(stderr, "maskkit: warning: at %zu of %zu points the best kernel's interval "
			"is wider than +-%g%% when --max-time (%g s) or --max-reps (%d) stopped it: "
			"a larger one, or a quiet machine, narrows it\n", r->wide, r->points,
			100 * c->s.precision, c->s.max_time, c->s.max_reps);
	if (r->disagree)
		fprintf(stderr, "maskkit: warning: at %zu of %zu points the ratio of the medians "
			"fell outside the paired interval, measured twice (agree 0, rank_ok 0): "
			"the machine was disturbed unevenly\n", r->disagree, r->points);
}

static int sweep_run_all(sweep_cli *c)
{
	bool table_out = c->json || (c->csv && !strcmp(c->csv, "-"));
	int ret = mk_sweep_result_run(&c->s, &c->res);

	mk_par_done();
	if (ret || mk_par_rank() != 0 || (ret = sweep_write(c)) ||
	    (c->png && (ret = sweep_plot(c))))
		return ret;
	/* standard output carries the summary unless it carries the table */
	if (!c->quiet && (ret = mk_sweep_summary(table_out ? stderr : stdout, &c->res)))
		return ret;
	if (!c->quiet && !c->out && !c->csv && !c->json)
		printf("\nevery kernel's row: -o FILE.csv (or .json); a figure: --png FILE.png\n");
	sweep_warn(c);
	return MK_OK;
}

/* Every row of the output names one backend: ranks that chose another one
 * (auto on a node without a GPU) stop the sweep.  Ranks sharing a GPU
 * disturb each other's timings: rank 0 says so for its node. */
static int sweep_same_backend(const sweep_cli *c)
{
	char name[32] = {0};
	int devices = mk_attn_devices(c->s.backend);

	snprintf(name, sizeof name, "%s", mk_attn_backend_name(c->s.backend));
	if (mk_par_size() > 1 && strcmp(name, "cpu") && mk_par_local_size() > devices &&
	    !c->device_given)
		fprintf(stderr, "maskkit: warning: %d ranks on %s share its %d %s device%s; their "
			"timings disturb each other\n", mk_par_local_size(), mk_par_host(), devices,
			name, devices == 1 ? "" : "s");
	return mk_par_same(name, sizeof name, "the backend differs from the other ranks' (give --backend)");
}

static int sweep_exec(void *opts, const cli_args *a)
{
	sweep_cli *c = opts;
	const char *csv = c->csv && strcmp(c->csv, "-") ? c->csv : NULL;
	int ret;

	if ((ret = mk_par_agree(sweep_validate(c, a), NULL)) || (ret = sweep_same_backend(c)) ||
	    (ret = cli_root_check_output_dir(c->png)) || (ret = cli_root_check_output_dir(c->out)) ||
	    (ret = cli_root_check_output_dir(csv)))
		goto out;
	c->tty = isatty(STDERR_FILENO);
	c->s.progress = sweep_show;
	c->s.arg = c;
	ret = sweep_run_all(c);
out:
	mk_sweep_result_release(&c->res);
	mk_sweep_lists_release(&c->lists);
	return ret;
}

const struct mk_cmd mk_cmd_sweep = {
	.name = "sweep",
	.parallel = true,
	.summary = "time attention kernels across patterns and sparsities, checked",
	.synopsis = "[--patterns P,...] [--sparsity A..B[:S]] [--n N] [--batch B]\n"
		     " [--heads H] [--head-dim D] [--dtype fp32|fp16|bf16]\n"
		     " [--backend auto|cpu|cuda] [--device N] [--kernels K,...]\n"
		     " [--norm NORM,...] [--tile B] [--precision P] [--max-time S]\n"
		     " [--min-reps R] [--max-reps R | --reps R] [--warmup W]\n"
		     " [-o OUT.csv|OUT.json] [--csv FILE] [--json] [--png FILE.png] [-q]",
	.opts = sweep_table,
	.opts_size = sizeof(sweep_cli),
	.exec = sweep_exec,
	.description =
"Does a mask pay off against dense attention, and with which kernel?  For\n"
"each pattern and target sparsity, the pattern's size parameter is solved\n"
"for the achievable sparsity nearest the target (|M| measured exactly):\n"
"  local w, bigbird w (r = 2, g = 2; in blocks of the tile, as in its paper),\n"
"  longformer w (g = 2), random size, global g (binary search: |M| grows\n"
"  with them); strided l, fixed l (c = 1), logsparse block, star block,\n"
"  diag block (every value scanned).\n"
"A pattern may fix its other parameters, 'bigbird(r=3)'; 'bigbird(block=1)'\n"
"sweeps BigBird by tokens.  Each kernel runs on random tensors in [-1, 1),\n"
"--warmup times untimed, the first checked against masked attention in\n"
"double precision (all rows for n <= 512, else 64 rows spread over each\n"
"(batch, head)); an error above the dtype's tolerance (fp32: 1e-4) stops\n"
"the sweep with exit status 1, naming the pattern and kernel.\n"
"\n"
"Then the timed runs are interleaved: repetition r of every kernel (dense,\n"
"masked, block, csr) before repetition r + 1, so that a disturbance of the\n"
"machine falls on all of them alike.  dense ignores the mask but is timed at\n"
"every point, also when --kernels leaves it out.  The speed-up is paired:\n"
"the median over repetitions r of dense[r] / kernel[r], with its 95%\n"
"confidence interval, distribution-free: the order statistics of the R\n"
"ratios that cover the median with probability >= 0.95 under Bin(R, 1/2)\n"
"(R = 6: the smallest and largest; R = 20: the 6th and 15th).  A point\n"
"repeats, from --min-reps, until every interval is within +-P of its\n"
"speed-up, or --max-reps runs, or its timed runs took --max-time seconds.\n"
"\n"
"The ratio of the two medians shown in a row, dense_s / median_s, must fall\n"
"in that interval; when it does not (a disturbance hit dense in more\n"
"repetitions than the kernel), the point is measured again from scratch, and\n"
"if it still does not, agree is 0.  Two kernels whose intervals overlap\n"
"cannot be ranked (dense's is [1, 1]): noisy_vs names them and rank_ok is 0,\n"
"as it is for agree 0 or fewer than 6 runs.  dense_baseline_s is one dense\n"
"time for the whole run: the median over the points of dense's median.  A\n"
"point whose dense median is more than 20% off it ran while the machine was\n"
"in another state: it is measured again at the end and keeps the measurement\n"
"nearer the baseline (remeasured 1).\n"
"\n"
"Any other mask is timed as it is, as one point at its own sparsity (its\n"
"target is that sparsity and its param empty): an expression\n"
"('local2+global1', 'causal', 'local(w=3)+global(g=1)'), a mask file\n"
"(m.npy, m.h5:/mask, of n x n) or an expression over files.  LABEL=MASK\n"
"names its rows (a LABEL of letters, digits, '_', '-', '.'); commas inside\n"
"parentheses belong to the mask.\n",
	.notes = CLI_SPARSITY_NOTE
"So the default 10..90, 10%..90% and 0.1..0.9 are the same nine targets.\n"
"\n"
"Standard output gets a summary: per point the fastest kernel, its speed-up\n"
"and interval, and a verdict (faster, slower: the whole interval above or\n"
"below 1; same: within +-P of 1; unsure: wider; ~K: its interval overlaps\n"
"kernel K's; !: the medians disagree), then where each pattern pays off.\n"
"The table, every kernel's row, goes to -o FILE (.csv or .json) or --csv FILE;\n"
"--json or --csv - put it on standard output instead, and the summary on\n"
"stderr.  Progress goes to stderr: a line per point in a log, one updating\n"
"line on a terminal.  -q leaves out both.\n"
"\n"
"CSV columns: pattern,param,target,achieved,tile_density,kernel,norm,backend,\n"
"dtype,n,batch,heads,d,tile,median_s,min_s,speedup,gflops_dense,\n"
"gflops_actual,max_err,q1_s,q3_s,speedup_lo,speedup_hi,reps,dense_s,\n"
"dense_baseline_s,agree,remeasured,mask,rank_ok,noisy_vs,label (pattern is\n"
"the row's name: its LABEL, else the pattern; target and achieved are\n"
"fractions, param NAME=VALUE, mask the expression timed, agree, remeasured\n"
"and rank_ok 1 or 0, noisy_vs kernel names separated by spaces, label the\n"
"LABEL given or empty; JSON: true/false and a list), after '# key: value'\n"
"lines naming the machine\n"
"and the repetition rule.  Throughput is dense-equivalent (4BHn^2d flops)\n"
"and actual (4BH|M|d; n^2 for dense).  Outputs are written to a temporary\n"
"file and renamed.\n"
"\n"
"Under mpirun/srun (a build with MPI) the ranks share the (pattern, sparsity)\n"
"grid, each timing dense on its own device (GPU: the rank on its node modulo\n"
"the node's GPUs, unless --device); rank 0 writes every row, in the usual\n"
"order, with two more CSV columns, host and device (JSON: fields); progress\n"
"counts rank 0's share.  A failed check exits with status 1.\n",
	.examples =
"  maskkit sweep --sparsity 10..90\n"
"  maskkit sweep --n 2048 --patterns local,bigbird --sparsity 50..90 -o sweep.csv --png s.png\n"
"  maskkit sweep --n 128 --patterns local --sparsity 0.5,0.9 --reps 1 --json\n"
"  maskkit sweep --n 2048 --patterns 'local,lg=local2+global1,causal,m.npy'\n"
"  maskkit sweep --n 512 --kernels dense,block --csv - --png sweep.png\n",
};
