/*
 * A sweep's result as its outputs show it: the run gathered from the MPI
 * ranks, the dense baselines, one view per row with the names of what it
 * ran, and the records the emitter writes them by (CSV, JSON).  The summary
 * for a person is sweep_summary.c's.
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io.h"
#include "par.h"
#include "sweep_internal.h"
#include "result.h"

/* ---- making the result ------------------------------------------------------ */

static void sweep_view_make(const mk_sweep_result *r, size_t k, mk_sweep_view *v)
{
	const mk_sweep_opts *o = r->opts;
	const mk_sweep_row *x = &r->rows[k];
	size_t p = (size_t)x->grid / o->ntargets;

	*v = (mk_sweep_view){
		.row = x, .pattern = x->pattern, .mask = x->point.expr,
		.label = o->labels && o->labels[p] ? o->labels[p] : "",
		.kernel = mk_attn_kernel_name(x->kernel), .backend = r->backend,
		.dtype = r->dtype, .target = x->target,
		.achieved = x->point.sparsity, .tile_density = x->tile_density,
		.nnz = x->point.count, .n = o->shape.n, .batch = o->shape.batch,
		.heads = o->shape.heads, .d = o->shape.d, .tile = o->tile,
		.median_s = x->median_s, .min_s = x->min_s, .speedup = x->speedup,
		.gflops_dense = x->gflops_dense, .gflops_actual = x->gflops_actual,
		.max_err = x->max_err, .q1_s = x->q1_s, .q3_s = x->q3_s,
		.speedup_lo = x->speedup_lo, .speedup_hi = x->speedup_hi, .reps = x->reps,
		.dense_s = x->dense_s, .dense_baseline_s = r->baseline[x->norm - o->norms],
		.agree = x->agree, .remeasured = x->remeasured, .rank_ok = x->rank_ok};
	if (x->param) /* a fixed mask has none: the field stays empty */
		snprintf(v->param, sizeof v->param, "%s=%" PRId64, x->param, x->point.value);
	mk_norm_format(x->norm, v->norm, sizeof v->norm);
	for (int c = 0; c < MK_KERNEL_COUNT; c++)
		if (x->unranked & (1u << c))
			v->noisy[v->nnoisy++] = mk_attn_kernel_name((mk_attn_kernel)c);
	v->noisy_vs = v->noisy;
	if (r->where) {
		v->host = r->where[k].host;
		v->device = r->where[k].device;
	}
}

int mk_sweep_result_make(const mk_sweep_opts *o, mk_sweep_row *rows, size_t nrows,
			 mk_sweep_where *where, mk_sweep_result *r)
{
	int ret;

	*r = (mk_sweep_result){.opts = o, .rows = rows, .nrows = nrows, .where = where,
			       .seed = o->seed, .warmup = o->warmup, .min_reps = o->min_reps,
			       .max_reps = o->max_reps, .precision = o->precision,
			       .max_time = o->max_time, .ranks = where ? mk_par_size() : 0,
			       .backend = mk_attn_backend_name(o->backend),
			       .dtype = mk_compute_name(o->dtype)};
	mk_machine_describe_backend(o->backend, &r->machine);
	r->baseline = malloc((o->nnorms ? o->nnorms : 1) * sizeof *r->baseline);
	r->views = malloc((nrows ? nrows : 1) * sizeof *r->views);
	if (!r->baseline || !r->views) {
		ret = mk_error_set(MK_ENOMEM, "out of memory for the results");
		goto out;
	}
	for (size_t ni = 0; ni < o->nnorms; ni++)
		r->baseline[ni] = mk_sweep_baseline(rows, nrows, &o->norms[ni]);
	for (size_t k = 0; k < nrows; k++)
		sweep_view_make(r, k, &r->views[k]);
	r->nviews = (int64_t)nrows;
	ret = mk_sweep_summarise(r);
out:
	if (ret)
		mk_sweep_result_release(r);
	return ret;
}

/* This rank's device, for the rows it measured: commas would split the CSV
 * field. */
static void sweep_device(const mk_sweep_opts *o, char *buf, size_t cap)
{
	mk_machine m;

	mk_machine_describe_backend(o->backend, &m);
	if (m.gpu[0])
		snprintf(buf, cap, "%s", m.gpu);
	else
		snprintf(buf, cap, "cpu (%d threads)", m.threads);
	for (char *p = buf; *p; p++)
		*p = *p == ',' ? ';' : *p == '"' ? '\'' : *p;
}

int mk_sweep_result_run(const mk_sweep_opts *o, mk_sweep_result *r)
{
	mk_sweep_row *rows = NULL;
	mk_sweep_where *where = NULL;
	size_t nrows = 0;
	char device[128];
	int ret = mk_par_agree(mk_sweep_run(o, &rows, &nrows), NULL);

	memset(r, 0, sizeof *r);
	if (ret == MK_OK && mk_par_size() > 1) {
		sweep_device(o, device, sizeof device);
		ret = mk_sweep_gather(o, device, &rows, &nrows, &where);
	}
	if (ret || mk_par_rank() != 0) {
		free(rows);
		free(where);
		return ret;
	}
	return mk_sweep_result_make(o, rows, nrows, where, r);
}

void mk_sweep_result_release(mk_sweep_result *r)
{
	if (!r)
		return;
	free(r->rows);
	free(r->where);
	free(r->baseline);
	free(r->views);
	free(r->best);
	free(r->payoff);
	memset(r, 0, sizeof *r);
}

/* ---- the records ------------------------------------------------------------ */

static bool sweep_has_where(const void *rec)
{
	return ((const mk_sweep_view *)rec)->host != NULL;
}

/* JSON puts the names first, CSV keeps its older order (the columns its
 * readers and the documentation know): the fields whose place differs are
 * listed twice, once for each (MK_FF_JSON, MK_FF_NOJSON).  CSV writes the
 * numbers to a fixed precision and the flags as 1 or 0. */
#define SW_J MK_FF_JSON
#define SW_C MK_FF_NOJSON
#define SW_REAL(m, name, cfmt, ...) \
	{MK_FIELD(mk_sweep_view, m, name, MK_FT_REAL), .csv_fmt = cfmt, __VA_ARGS__}
#define SW_FLAG(m, name, ...) \
	{MK_FIELD(mk_sweep_view, m, name, MK_FT_BOOL), .csv_fmt = "%d", __VA_ARGS__}

static const mk_field sweep_row_fields[] = {
	{MK_FIELD(mk_sweep_view, pattern, "pattern", MK_FT_STR),
	 .help = "the row's name: its label, else the pattern"},
	{MK_FIELD(mk_sweep_view, label, "label", MK_FT_STR), .flags = SW_J},
	{MK_FIELD(mk_sweep_view, param, "param", MK_FT_CHARS),
	 .help = "the pattern's parameter solved, NAME=VALUE (empty for a fixed mask)"},
	{MK_FIELD(mk_sweep_view, mask, "mask", MK_FT_STR), .flags = SW_J},
	SW_REAL(target, "target", "%.4f", .flags = SW_C),
	SW_REAL(achieved, "achieved", "%.6f", .flags = SW_C),
	SW_REAL(tile_density, "tile_density", "%.6f", .flags = SW_C),
	{MK_FIELD(mk_sweep_view, kernel, "kernel", MK_FT_STR)},
	{MK_FIELD(mk_sweep_view, norm, "norm", MK_FT_CHARS)},
	{MK_FIELD(mk_sweep_view, backend, "backend", MK_FT_STR)},
	{MK_FIELD(mk_sweep_view, dtype, "dtype", MK_FT_STR)},
	SW_REAL(target, "target", NULL, .flags = SW_J, .help = "the target sparsity (a fraction)"),
	SW_REAL(achieved, "achieved", NULL, .flags = SW_J, .help = "the mask's sparsity"),
	{MK_FIELD(mk_sweep_view, nnz, "nnz", MK_FT_U64), .flags = SW_J, .help = "|M|"},
	SW_REAL(tile_density, "tile_density", NULL, .flags = SW_J,
		.help = "the share of tiles the block kernel runs"),
	{MK_FIELD(mk_sweep_view, n, "n", MK_FT_I64)},
	{MK_FIELD(mk_sweep_view, batch, "batch", MK_FT_I64)},
	{MK_FIELD(mk_sweep_view, heads, "heads", MK_FT_I64)},
	{MK_FIELD(mk_sweep_view, d, "d", MK_FT_I64)},
	{MK_FIELD(mk_sweep_view, tile, "tile", MK_FT_I64)},
	SW_REAL(median_s, "median_s", "%.6e", .unit = "s"),
	SW_REAL(min_s, "min_s", "%.6e", .unit = "s"),
	SW_REAL(speedup, "speedup", "%.6f", .help = "the median of dense/kernel"),
	SW_REAL(gflops_dense, "gflops_dense", "%.4f", .help = "4BHn^2d over the median"),
	SW_REAL(gflops_actual, "gflops_actual", "%.4f", .help = "4BH|M|d over the median"),
	SW_REAL(max_err, "max_err", "%.3e", .help = "against the double reference"),
	SW_REAL(q1_s, "q1_s", "%.6e", .unit = "s"),
	SW_REAL(q3_s, "q3_s", "%.6e", .unit = "s"),
	SW_REAL(speedup_lo, "speedup_lo", "%.6f", .help = "the speed-up's 95% interval"),
	SW_REAL(speedup_hi, "speedup_hi", "%.6f"),
	{MK_FIELD(mk_sweep_view, reps, "reps", MK_FT_INT), .help = "timed repetitions"},
	SW_REAL(dense_s, "dense_s", "%.6e", .unit = "s", .help = "dense's median at the point"),
	SW_REAL(dense_baseline_s, "dense_baseline_s", "%.6e", .unit = "s",
		.help = "the median over the points of dense's median"),
	SW_FLAG(agree, "agree", .help = "dense_s / median_s within the interval"),
	SW_FLAG(remeasured, "remeasured"),
	{MK_FIELD(mk_sweep_view, mask, "mask", MK_FT_STR), .flags = SW_C,
	 .help = "the mask timed, as an expression"},
	SW_FLAG(rank_ok, "rank_ok"),
	{MK_FIELD(mk_sweep_view, noisy_vs, "noisy_vs", MK_FT_STRS),
	 .count_offset = offsetof(mk_sweep_view, nnoisy),
	 .help = "the kernels whose intervals overlap this one's"},
	{MK_FIELD(mk_sweep_view, label, "label", MK_FT_STR), .flags = SW_C,
	 .help = "the LABEL given, or empty"},
	/* last: the short record below leaves them out */
	{MK_FIELD(mk_sweep_view, host, "host", MK_FT_STR), .flags = MK_FF_OMIT,
	 .present = sweep_has_where},
	{MK_FIELD(mk_sweep_view, device, "device", MK_FT_STR), .flags = MK_FF_OMIT,
	 .present = sweep_has_where},
};

const mk_record mk_sweep_row_record = MK_RECORD("sweep_row", mk_sweep_view, sweep_row_fields);

/* The CSV of one process has no host and device columns. */
static const mk_record sweep_row_local = {
	.name = "sweep_row", .fields = sweep_row_fields,
	.count = sizeof sweep_row_fields / sizeof *sweep_row_fields - 2,
	.size = sizeof(mk_sweep_view)};

static bool sweep_has_ranks(const void *rec)
{
	return ((const mk_sweep_result *)rec)->ranks > 0;
}

static const mk_field sweep_result_fields[] = {
	{MK_FIELD(mk_sweep_result, machine, "machine", MK_FT_OBJ), .sub = &mk_machine_record},
	{MK_FIELD(mk_sweep_result, views, "results", MK_FT_LIST), .sub = &mk_sweep_row_record,
	 .count_offset = offsetof(mk_sweep_result, nviews)},
	{MK_FIELD(mk_sweep_result, seed, "seed", MK_FT_U64)},
	{MK_FIELD(mk_sweep_result, warmup, "warmup", MK_FT_INT)},
	{MK_FIELD(mk_sweep_result, min_reps, "min_reps", MK_FT_INT)},
	{MK_FIELD(mk_sweep_result, max_reps, "max_reps", MK_FT_INT)},
	{MK_FIELD(mk_sweep_result, precision, "precision", MK_FT_REAL)},
	{MK_FIELD(mk_sweep_result, max_time, "max_time_s", MK_FT_REAL), .unit = "s"},
	{MK_FIELD(mk_sweep_result, ranks, "ranks", MK_FT_INT), .flags = MK_FF_OMIT,
	 .present = sweep_has_ranks},
};

const mk_record mk_sweep_result_record =
	MK_RECORD("sweep", mk_sweep_result, sweep_result_fields);

/* ---- writing ---------------------------------------------------------------- */

static void sweep_csv_head(FILE *f, const mk_sweep_result *r)
{
	const mk_machine *m = &r->machine;

	fprintf(f, "# maskkit sweep\n# cpu: %s\n# threads: %d\n# maskkit: %s\n# commit: %s\n"
		"# gpu: %s\n# gpu_driver: %s\n# gpu_sms: %d\n# gpu_clock_mhz: %d\n"
		"# gpu_mem_clock_mhz: %d\n# seed: %" PRIu64 "\n", m->cpu, m->threads,
		m->version, m->commit, m->gpu, m->gpu_driver, m->gpu_sms, m->gpu_clock_mhz,
		m->gpu_mem_clock_mhz, r->seed);
	fprintf(f, "# warmup: %d\n# min_reps: %d\n# max_reps: %d\n# precision: %g\n"
		"# max_time_s: %g\n# speedup: the median over repetitions of dense/kernel, timed "
		"interleaved\n# speedup_lo, speedup_hi: its distribution-free 95%% confidence "
		"interval (order statistics)\n", r->warmup, r->min_reps, r->max_reps,
		r->precision, r->max_time);
	if (r->ranks)
		fprintf(f, "# ranks: %d\n", r->ranks);
}

int mk_sweep_write(FILE *f, mk_emit_fmt fmt, const mk_sweep_result *r)
{
	if (fmt == MK_EMIT_JSON)
		return mk_emit(f, fmt, &mk_sweep_result_record, r, 1, 0);
	if (fmt == MK_EMIT_CSV)
		sweep_csv_head(f, r);
	return mk_emit(f, fmt, r->where ? &mk_sweep_row_record : &sweep_row_local, r->views,
		       r->nrows, 0);
}

typedef struct sweep_job {
	mk_emit_fmt fmt;
	const mk_sweep_result *r;
} sweep_job;

static int sweep_write_file(void *file, void *arg)
{
	const sweep_job *j = arg;
	return mk_sweep_write(file, j->fmt, j->r);
}

int mk_sweep_write_path(const char *path, mk_emit_fmt fmt, const mk_sweep_result *r)
{
	sweep_job j = {fmt, r};
	int ret;

	if (strcmp(path, "-"))
		return mk_write_atomic(path, sweep_write_file, &j);
	errno = 0;
	ret = mk_sweep_write(stdout, fmt, r);
	if (!ret && fflush(stdout))
		ret = mk_error_set(MK_ESYS, "write error: %s", strerror(errno));
	return ret;
}
