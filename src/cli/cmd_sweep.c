/*
 * maskkit sweep: what does a mask cost, compared with dense attention?  For
 * each pattern and target sparsity, solves the pattern's size parameter,
 * times every kernel on random tensors and checks its output against a
 * double-precision reference; writes a CSV or JSON table (with the machine
 * it ran on) and, with --plot, a gnuplot figure of time against sparsity.
 */
#include "config.h"
#include <cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"
#include "cmd_sweep.h"

#define SWEEP_DEFAULT_PATTERNS "local,strided,fixed,logsparse,bigbird,longformer,star,random"

enum {
	SW_OPT_PATTERNS = 512, SW_OPT_SPARSITY, SW_OPT_BATCH, SW_OPT_HEADS, SW_OPT_HEADDIM,
	SW_OPT_DTYPE, SW_OPT_BACKEND, SW_OPT_KERNELS, SW_OPT_NORM, SW_OPT_TILE, SW_OPT_REPS,
	SW_OPT_PLOT, SW_OPT_DEVICE
};


static int sweep_option(int opt, const char *arg, void *ctx)
{
	sweep_cli *c = ctx;
	int64_t v;
	int ret;

	switch (opt) {
	case SW_OPT_PATTERNS: c->patterns_arg = arg; return MK_OK;
	case SW_OPT_SPARSITY: c->sparsity_arg = arg; return MK_OK;
	case SW_OPT_KERNELS: c->kernels_arg = arg; return MK_OK;
	case SW_OPT_NORM: c->norms_arg = arg; return MK_OK;
	case SW_OPT_BACKEND: c->backend = arg; return MK_OK;
	case SW_OPT_DTYPE: c->s.dtype = arg; return MK_OK;
	case SW_OPT_PLOT: c->plot = arg; return MK_OK;
	case SW_OPT_BATCH: return cli_i64(arg, "--batch", 1, 4096, &c->s.shape.batch);
	case SW_OPT_HEADS: return cli_i64(arg, "--heads", 1, 4096, &c->s.shape.heads);
	case SW_OPT_HEADDIM: return cli_i64(arg, "--head-dim", 1, 1 << 20, &c->s.shape.d);
	case SW_OPT_DEVICE:
		if ((ret = cli_i64(arg, "--device", 0, 1023, &v)) == MK_OK)
			c->s.device = (int)v;
		c->device_given = true;
		return ret;
	case SW_OPT_TILE: return cli_i64(arg, "--tile", 1, MK_N_MAX, &c->s.tile);
	case SW_OPT_REPS:
		if ((ret = cli_i64(arg, "--reps", 1, 1000, &v)))
			return ret;
		c->s.reps = (int)v;
		return MK_OK;
	default:
		return mk_error_set(MK_EINVAL, "unexpected option");
	}
}

/* Splits a comma-separated list in place (buf is a copy the caller owns). */
static int sweep_split(char *buf, const char *opt, const char **items, size_t *count)
{
	char *p = buf;
	*count = 0;
	for (;;) {
		char *comma = strchr(p, ',');
		if (comma)
			*comma = '\0';
		if (!*p)
			return mk_error_set(MK_EINVAL, "%s: empty item in the list", opt);
		if (*count == SWEEP_MAX_LIST)
			return mk_error_set(MK_EINVAL, "%s: more than %d items", opt, SWEEP_MAX_LIST);
		items[(*count)++] = p;
		if (!comma)
			return MK_OK;
		p = comma + 1;
	}
}

/* A pattern the sweep cannot vary, or no pattern at all: one clear line. */
static int sweep_check_pattern(const char *name)
{
	mk_expr *e = NULL;
	const char *msg, *at;
	char copy[256];

	if (mk_sweep_param(name))
		return MK_OK;
	if (mk_pattern_find(name))
		return mk_error_set(MK_EINVAL, "--patterns: pattern '%s' has no size parameter a "
				    "sweep can vary (use %s)", name, mk_sweep_patterns());
	if (mk_expr_parse(name, &e) == MK_OK) {
		mk_expr_free(e);
		return mk_error_set(MK_EINVAL, "--patterns: '%s' is not a pattern name", name);
	}
	/* the parser's "did you mean", without its column */
	msg = mk_error();
	at = strstr(msg, "unknown pattern");
	snprintf(copy, sizeof copy, "%s", at ? at : msg);
	return mk_error_set(MK_EINVAL, "--patterns: %s", copy);
}

static int sweep_lists(sweep_cli *c, char **kbuf, char **nbuf)
{
	const char *names[SWEEP_MAX_LIST];
	size_t count;
	int ret;

	if (!(c->patterns_buf = strdup(c->patterns_arg)) || !(*kbuf = strdup(c->kernels_arg)) ||
	    !(*nbuf = strdup(c->norms_arg)))
		return mk_error_set(MK_ENOMEM, "out of memory");
	if ((ret = sweep_split(c->patterns_buf, "--patterns", c->patterns, &c->s.npatterns)))
		return ret;
	for (size_t p = 0; p < c->s.npatterns; p++)
		if ((ret = sweep_check_pattern(c->patterns[p])))
			return ret;
	if ((ret = sweep_split(*kbuf, "--kernels", names, &count)))
		return ret;
	for (size_t k = 0; k < count; k++) {
		mk_attn_kernel kern;
		if ((ret = mk_attn_kernel_parse(names[k], &kern)))
			return ret;
		c->s.kernels |= 1u << kern;
	}
	if ((ret = sweep_split(*nbuf, "--norm", names, &c->s.nnorms)))
		return ret;
	for (size_t k = 0; k < c->s.nnorms; k++)
		if ((ret = mk_norm_parse(names[k], &c->norms[k])))
			return ret;
	c->s.patterns = c->patterns;
	c->s.norms = c->norms;
	return MK_OK;
}

/* auto: cuda when built, else cpu.  The CPU backend computes in fp32 only. */
static int sweep_backend(sweep_cli *c)
{
	const mk_attn_backend *b;

	if (!strcmp(c->backend, "auto")) {
		b = mk_attn_backend_get("cuda");
		c->s.backend = b ? b : mk_attn_backend_get("cpu");
		mk_error_set(MK_OK, "%s", "");
	} else if (!(c->s.backend = mk_attn_backend_get(c->backend))) {
		return MK_EINVAL;
	}
	b = c->s.backend;
	if (!mk_dtype_tolerance(c->s.dtype))
		return mk_error_set(MK_EINVAL, "unknown --dtype '%s' (use fp32, fp16 or bf16)",
				    c->s.dtype);
	if (mk_attn_check_dtype(b, c->s.dtype))
		return mk_error_set(MK_EINVAL, "--dtype %s: the %s backend computes in %s only",
				    c->s.dtype, b->name, b->dtypes);
	if (c->s.shape.d > b->max_head_dim)
		return mk_error_set(MK_EINVAL, "--head-dim %" PRId64 " is not supported by backend "
				    "'%s' (1 to %" PRId64 ")", c->s.shape.d, b->name,
				    b->max_head_dim);
	for (int k = 0; k < MK_KERNEL_COUNT; k++)
		if ((c->s.kernels & (1u << k)) && !(b->kernels & (1u << k)))
			return mk_error_set(MK_EINVAL, "backend '%s' has no kernel '%s'", b->name,
					    mk_attn_kernel_name((mk_attn_kernel)k));
	/* MPI ranks on one node take a device each, by their rank on the node */
	if (!c->device_given && mk_par_size() > 1 && mk_attn_devices(b) > 1)
		c->s.device = mk_par_local_rank() % mk_attn_devices(b);
	return mk_attn_configure(b, c->s.device, c->s.dtype);
}

static int sweep_output_format(const char *path)
{
	const char *dot = path ? strrchr(path, '.') : NULL;
	if (!path || (dot && !strcmp(dot, ".csv")))
		return 0;
	if (dot && !strcmp(dot, ".json"))
		return 1;
	return mk_error_set(MK_EINVAL, "cannot tell the format of '%s' from its name: use .csv "
			    "or .json", path);
}

static int sweep_validate(sweep_cli *c, char **kbuf, char **nbuf)
{
	int ret;

	c->s.shape.n = c->m.bind.n ? c->m.bind.n : 1024;
	if ((ret = sweep_lists(c, kbuf, nbuf)) || (ret = mk_sweep_parse_targets(c->sparsity_arg, c->targets, SWEEP_MAX_TARGETS,
						  &c->s.ntargets)) ||
	    (ret = sweep_backend(c)) || (ret = sweep_output_format(c->m.out)) < 0)
		return ret;
	if (c->s.tile > c->s.shape.n && c->s.shape.n >= 64)
		return mk_error_set(MK_EINVAL, "--tile %" PRId64 " is larger than n = %" PRId64,
				    c->s.tile, c->s.shape.n);
	if (c->plot && (!strrchr(c->plot, '.') || strcmp(strrchr(c->plot, '.'), ".png")))
		return mk_error_set(MK_EINVAL, "--plot '%s': the plot is a PNG (name it .png)",
				    c->plot);
	c->s.targets = c->targets;
	c->s.part = mk_par_rank();
	c->s.parts = mk_par_size();
	c->s.seed = c->m.bind.seed;
	c->s.max_memory = c->m.bind.max_memory;
	return mk_sweep_check_memory(&c->s);
}

static int sweep_parse(int argc, char **argv, sweep_cli *c)
{
	static const struct option longopts[] = {
		{"patterns", required_argument, NULL, SW_OPT_PATTERNS},
		{"sparsity", required_argument, NULL, SW_OPT_SPARSITY},
		{"n", required_argument, NULL, 'n'},
		{"batch", required_argument, NULL, SW_OPT_BATCH},
		{"heads", required_argument, NULL, SW_OPT_HEADS},
		{"head-dim", required_argument, NULL, SW_OPT_HEADDIM},
		{"dtype", required_argument, NULL, SW_OPT_DTYPE},
		{"backend", required_argument, NULL, SW_OPT_BACKEND},
		{"device", required_argument, NULL, SW_OPT_DEVICE},
		{"kernels", required_argument, NULL, SW_OPT_KERNELS},
		{"norm", required_argument, NULL, SW_OPT_NORM},
		{"tile", required_argument, NULL, SW_OPT_TILE},
		{"reps", required_argument, NULL, SW_OPT_REPS},
		{"plot", required_argument, NULL, SW_OPT_PLOT},
		{"output", required_argument, NULL, 'o'},
		{"seed", required_argument, NULL, CLI_OPT_SEED},
		{"max-memory", required_argument, NULL, CLI_OPT_MAXMEM},
		{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
	int ret = cli_parse(&mk_cmd_sweep, argc, argv, longopts, &c->m, sweep_option, c);
	if (ret >= 0)
		return ret;
	if (optind < argc)
		return cli_usage(&mk_cmd_sweep, "unexpected argument '%s'", argv[optind]);
	return -1;
}

/* ---- progress and results ---------------------------------------------------- */

static void sweep_show(int64_t done, int64_t total, const char *what, void *arg)
{
	const sweep_cli *c = arg;
	int width = 30, full = total ? (int)(width * done / total) : width;

	if (!c->tty) {
		fprintf(stderr, "maskkit: sweep %" PRId64 "/%" PRId64 ": %s\n", done, total, what);
		return;
	}
	fprintf(stderr, "\r\033[Kmaskkit: sweep [%.*s%*s] %" PRId64 "/%" PRId64 " %.60s", full,
		"##############################", width - full, "", done, total, what);
	if (done >= total)
		fputc('\n', stderr);
	fflush(stderr);
}

static int sweep_keep(const mk_sweep_row *r, void *arg)
{
	sweep_cli *c = arg;
	if (c->nrows == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 64;
		mk_sweep_row *p = realloc(c->rows, cap * sizeof *p);
		if (!p)
			return mk_error_set(MK_ENOMEM, "out of memory for the results");
		c->rows = p;
		c->cap = cap;
	}
	c->rows[c->nrows++] = *r;
	c->dense_s[r->norm - c->norms] = r->median_s * r->speedup;
	return MK_OK;
}

static const char *const sweep_csv_header =
	"pattern,param,target,achieved,tile_density,kernel,norm,backend,dtype,n,batch,heads,d,"
	"tile,median_s,min_s,speedup,gflops_dense,gflops_actual,max_err";

static void sweep_csv_row(FILE *f, const sweep_cli *c, const mk_sweep_row *r,
			  const sweep_where *w)
{
	const mk_attn_shape *s = &c->s.shape;
	char norm[32];

	mk_norm_format(r->norm, norm, sizeof norm);
	fprintf(f, "%s,%s=%" PRId64 ",%.4f,%.6f,%.6f,%s,%s,%s,%s,%" PRId64 ",%" PRId64 ",%" PRId64
		",%" PRId64 ",%" PRId64 ",%.6e,%.6e,%.4f,%.4f,%.4f,%.3e", r->pattern, r->param,
		r->point.value, r->target, r->point.sparsity, r->tile_density,
		mk_attn_kernel_name(r->kernel), norm, c->s.backend->name, c->s.dtype, s->n,
		s->batch, s->heads, s->d, c->s.tile, r->median_s, r->min_s, r->speedup,
		r->gflops_dense, r->gflops_actual, r->max_err);
	if (w)
		fprintf(f, ",%s,%s", w->host, w->device);
	fputc('\n', f);
}

static void sweep_csv(FILE *f, const sweep_cli *c, const mk_machine *m)
{
	fprintf(f, "# maskkit sweep\n# cpu: %s\n# threads: %d\n# maskkit: %s\n# commit: %s\n"
		"# gpu: %s\n# gpu_driver: %s\n# gpu_sms: %d\n# gpu_clock_mhz: %d\n"
		"# gpu_mem_clock_mhz: %d\n# seed: %" PRIu64 "\n# reps: %d\n", m->cpu, m->threads,
		m->version, m->commit, m->gpu, m->gpu_driver, m->gpu_sms, m->gpu_clock_mhz,
		m->gpu_mem_clock_mhz, c->s.seed, c->s.reps);
	if (c->where)
		fprintf(f, "# ranks: %d\n", mk_par_size());
	fprintf(f, "%s%s\n", sweep_csv_header, c->where ? ",host,device" : "");
	for (size_t k = 0; k < c->nrows; k++)
		sweep_csv_row(f, c, &c->rows[k], c->where ? &c->where[k] : NULL);
}

static cJSON *sweep_json_row(const sweep_cli *c, const mk_sweep_row *r)
{
	cJSON *o = cJSON_CreateObject();
	char norm[32], param[64];
	const char *strs[][2] = {
		{"pattern", r->pattern}, {"param", param}, {"mask", r->point.expr},
		{"kernel", mk_attn_kernel_name(r->kernel)}, {"norm", norm},
		{"backend", c->s.backend->name}, {"dtype", c->s.dtype}};
	const struct { const char *key; double v; } nums[] = {
		{"target", r->target}, {"achieved", r->point.sparsity},
		{"nnz", (double)r->point.count}, {"tile_density", r->tile_density},
		{"n", (double)c->s.shape.n}, {"batch", (double)c->s.shape.batch},
		{"heads", (double)c->s.shape.heads}, {"d", (double)c->s.shape.d},
		{"tile", (double)c->s.tile}, {"median_s", r->median_s}, {"min_s", r->min_s},
		{"speedup", r->speedup}, {"gflops_dense", r->gflops_dense},
		{"gflops_actual", r->gflops_actual}, {"max_err", r->max_err}};

	mk_norm_format(r->norm, norm, sizeof norm);
	snprintf(param, sizeof param, "%s=%" PRId64, r->param, r->point.value);
	for (size_t k = 0; k < sizeof strs / sizeof *strs; k++)
		cJSON_AddStringToObject(o, strs[k][0], strs[k][1]);
	for (size_t k = 0; k < sizeof nums / sizeof *nums; k++)
		cJSON_AddNumberToObject(o, nums[k].key, nums[k].v);
	return o;
}

static int sweep_json(FILE *f, const sweep_cli *c, const mk_machine *m)
{
	cJSON *root = cJSON_CreateObject(), *mach = cJSON_AddObjectToObject(root, "machine");
	cJSON *rows = cJSON_AddArrayToObject(root, "results");
	char *text;

	const char *keys[] = {"cpu", "maskkit", "commit", "gpu", "gpu_driver"};
	const char *vals[] = {m->cpu, m->version, m->commit, m->gpu, m->gpu_driver};

	for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
		cJSON_AddStringToObject(mach, keys[k], vals[k]);
	cJSON_AddNumberToObject(mach, "threads", m->threads);
	cJSON_AddNumberToObject(mach, "gpu_sms", m->gpu_sms);
	cJSON_AddNumberToObject(mach, "gpu_clock_mhz", m->gpu_clock_mhz);
	cJSON_AddNumberToObject(mach, "gpu_mem_clock_mhz", m->gpu_mem_clock_mhz);
	cJSON_AddNumberToObject(root, "seed", (double)c->s.seed);
	cJSON_AddNumberToObject(root, "reps", c->s.reps);
	if (c->where)
		cJSON_AddNumberToObject(root, "ranks", mk_par_size());
	for (size_t k = 0; k < c->nrows; k++) {
		cJSON *x = sweep_json_row(c, &c->rows[k]);
		if (c->where) {
			cJSON_AddStringToObject(x, "host", c->where[k].host);
			cJSON_AddStringToObject(x, "device", c->where[k].device);
		}
		cJSON_AddItemToArray(rows, x);
	}
	text = cJSON_Print(root);
	cJSON_Delete(root);
	if (!text)
		return mk_error_set(MK_ENOMEM, "out of memory for the JSON output");
	fputs(text, f);
	fputc('\n', f);
	free(text);
	return MK_OK;
}

static int sweep_write_to(FILE *f, const sweep_cli *c)
{
	mk_machine m;
	mk_machine_describe_backend(c->s.backend, &m);
	if (sweep_output_format(c->m.out) == 1)
		return sweep_json(f, c, &m);
	sweep_csv(f, c, &m);
	return MK_OK;
}

static int sweep_write_file(void *file, void *arg)
{
	return sweep_write_to(file, arg);
}

/* To a temporary file beside the output, renamed over it on success. */
static int sweep_write(const sweep_cli *c)
{
	return mk_write_atomic(c->m.out, sweep_write_file, (void *)c);
}

/* ---- the command ------------------------------------------------------------- */

/* This rank's device, for the rows it measured: commas would split the CSV
 * field. */
static void sweep_device(const sweep_cli *c, char *buf, size_t cap)
{
	mk_machine m;

	mk_machine_describe_backend(c->s.backend, &m);
	if (m.gpu[0])
		snprintf(buf, cap, "%s", m.gpu);
	else
		snprintf(buf, cap, "cpu (%d threads)", m.threads);
	for (char *p = buf; *p; p++)
		*p = *p == ',' ? ';' : *p == '"' ? '\'' : *p;
}

/* Under MPI: the ranks agree on how their shares went and rank 0 collects
 * the rows, in the order of a single run, with the dense times per norm. */
static int sweep_collect(sweep_cli *c)
{
	char device[128];
	int ret;

	if (mk_par_size() == 1)
		return MK_OK;
	sweep_device(c, device, sizeof device);
	c->cap = 0;
	if ((ret = sweep_gather(&c->s, device, &c->rows, &c->nrows, &c->where)))
		return ret;
	c->cap = c->nrows;
	for (size_t k = 0; k < c->nrows; k++)
		c->dense_s[c->rows[k].norm - c->norms] = c->rows[k].median_s * c->rows[k].speedup;
	return MK_OK;
}

static int sweep_exec(sweep_cli *c)
{
	int ret = mk_par_agree(mk_sweep_run(&c->s, sweep_keep, c), NULL);

	if (ret == MK_OK)
		ret = sweep_collect(c);
	mk_par_done();
	if (ret)
		return cli_fail(ret);
	if (mk_par_rank() != 0)
		return MK_EXIT_OK;
	if (!c->m.out)
		sweep_write_to(stdout, c);
	if (c->m.out && (ret = sweep_write(c)))
		return cli_fail(ret);
	if (c->plot && (ret = sweep_plot(c)))
		return cli_fail(ret);
	return MK_EXIT_OK;
}

/* Every row of the output names one backend: ranks that chose another one
 * (auto on a node without a GPU) stop the sweep.  Ranks sharing a GPU
 * disturb each other's timings: rank 0 says so for its node. */
static int sweep_same_backend(const sweep_cli *c)
{
	char name[32] = {0};
	int devices = mk_attn_devices(c->s.backend);

	snprintf(name, sizeof name, "%s", c->s.backend->name);
	if (mk_par_size() > 1 && strcmp(name, "cpu") && mk_par_local_size() > devices &&
	    !c->device_given)
		fprintf(stderr, "maskkit: warning: %d ranks on %s share its %d %s device%s; their "
			"timings disturb each other\n", mk_par_local_size(), mk_par_host(), devices,
			name, devices == 1 ? "" : "s");
	return mk_par_same(name, sizeof name, "the backend differs from the other ranks' (give --backend)");
}

static int sweep_main(int argc, char **argv)
{
	sweep_cli c = {.backend = "auto", .patterns_arg = SWEEP_DEFAULT_PATTERNS,
		       .kernels_arg = "dense,masked,block,csr", .norms_arg = "softmax",
		       .sparsity_arg = "10..90:10"};
	char *kbuf = NULL, *nbuf = NULL;
	int ret;

	cli_mask_defaults(&c.m);
	c.s.shape = (mk_attn_shape){.batch = 1, .heads = 4, .d = 64};
	c.s.dtype = "fp32";
	c.s.tile = 64;
	c.s.reps = 5;
	if ((ret = cli_par_parsed(sweep_parse(argc, argv, &c))) >= 0)
		goto out;
	if ((ret = mk_par_agree(sweep_validate(&c, &kbuf, &nbuf), NULL)) ||
	    (ret = sweep_same_backend(&c)) ||
	    (ret = cli_root_check_output_dir(c.plot)) ||
	    (ret = cli_root_check_output_dir(c.m.out))) {
		ret = cli_fail(ret);
		goto out;
	}
	c.tty = isatty(STDERR_FILENO);
	c.s.progress = sweep_show;
	c.s.arg = &c;
	ret = sweep_exec(&c);
out:
	free(c.rows);
	free(c.where);
	free(c.patterns_buf);
	free(kbuf);
	free(nbuf);
	return cli_finish(ret);
}

const struct mk_cmd mk_cmd_sweep = {
	.name = "sweep",
	.parallel = true,
	.summary = "time attention kernels across patterns and sparsities, checked",
	.run = sweep_main,
	.usage =
"usage: maskkit sweep [--patterns P,...] [--sparsity A..B[:S]] [--n N] [--batch B]\n"
"                     [--heads H] [--head-dim D] [--dtype fp32|fp16|bf16]\n"
"                     [--backend auto|cpu|cuda] [--device N] [--kernels K,...]\n"
"                     [--norm N,...] [--tile T] [--reps R] [-o OUT.csv|OUT.json]\n"
"                     [--plot P.png]\n"
"\n"
"What does a mask cost compared with dense attention?  For each pattern and\n"
"target sparsity, the pattern's size parameter is solved for the achievable\n"
"sparsity nearest the target (|M| measured exactly):\n"
"  local w, bigbird w (r = 2, g = 2), longformer w (g = 2), random size,\n"
"  global g (binary search: |M| grows with them); strided l, fixed l (c = 1),\n"
"  logsparse block, star block, diag block (every value scanned).\n"
"Each kernel then runs on random tensors in [-1, 1) (one warm-up, R timed\n"
"runs: median and minimum) and its output is checked against masked\n"
"attention in double precision (all rows for n <= 512, else 64 rows spread\n"
"over each (batch, head)).  An error above the dtype's tolerance (fp32: 1e-4)\n"
"stops the sweep with exit status 1, naming the pattern and kernel.\n"
"\n"
"dense ignores the mask: it is timed once per normalisation and is the\n"
"reference for speedup.  Throughput is given dense-equivalent (4BHn^2d flops)\n"
"and actual (4BH|M|d; n^2 for dense).\n"
"\n"
"options:\n"
"      --patterns P,...  (default " SWEEP_DEFAULT_PATTERNS ")\n"
"      --sparsity S      target sparsities in percent: A..B[:STEP] (STEP 10) or\n"
"                        A,B,... (default 10..90:10)\n"
"  -n, --n N             sequence length (default 1024)\n"
"      --batch B         (default 1)\n"
"      --heads H         (default 4)\n"
"      --head-dim D      (default 64; the cpu backend takes 1 to 1024, the cuda\n"
"                        backend 1 to 128)\n"
"      --dtype T         fp32 (default); fp16 and bf16 (fp32 accumulation) need a\n"
"                        GPU backend\n"
"      --backend B       auto (cuda when built and a device is usable, else\n"
"                        cpu), cpu or cuda\n"
"      --device N        the GPU a GPU backend runs on (default 0)\n"
"      --kernels K,...   of dense, masked, block, csr (default all)\n"
"      --norm N,...      softmax (default), dnas, hnas:U, sinkhorn:K\n"
"      --tile T          tile size of the block kernels (default 64)\n"
"      --reps R          timed runs (default 5)\n"
"      --seed S          seed of the tensors and random patterns (default 0)\n"
"      --max-memory S    limit for tensors and masks (default 4G)\n"
"  -o, --output F        .csv (default, to stdout without -o) or .json; the\n"
"                        machine goes in '# key: value' lines / a \"machine\"\n"
"      --plot P.png      time against achieved sparsity, a line per (pattern,\n"
"                        kernel) and dense as the reference (gnuplot)\n"
"  -h, --help            this help\n"
"\n"
"CSV columns: pattern,param,target,achieved,tile_density,kernel,norm,backend,\n"
"dtype,n,batch,heads,d,tile,median_s,min_s,speedup,gflops_dense,\n"
"gflops_actual,max_err (target and achieved are fractions, param NAME=VALUE).\n"
"Progress goes to stderr.  Outputs are written to a temporary file and renamed.\n"
"\n"
"Under mpirun/srun (a build with MPI) the ranks share the (pattern, sparsity)\n"
"grid, each timing dense on its own device (GPU: the rank on its node modulo\n"
"the node's GPUs, unless --device); rank 0 writes every row, in the usual\n"
"order, with two more CSV columns, host and device (JSON: fields); progress\n"
"counts rank 0's share.\n"
"\n"
"exit status: 0 success, 2 bad input, 1 internal or system error (a failed check).\n",
};
