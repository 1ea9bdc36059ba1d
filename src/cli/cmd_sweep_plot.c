/* maskkit sweep's outputs: the CSV or JSON table (-o, --csv, --json) and the
 * --png figure (the report's, templates/sweep.gp: time and speed-up with
 * their bars against achieved sparsity). */
#include "config.h"
#include <cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd_sweep.h"
#include "plot.h"
#include "report.h" /* rp_sweep_figure: the report draws sweeps the same way */

/* ---- the tables ---------------------------------------------------------------- */

static const char *const sweep_csv_header =
	"pattern,param,target,achieved,tile_density,kernel,norm,backend,dtype,n,batch,heads,d,"
	"tile,median_s,min_s,speedup,gflops_dense,gflops_actual,max_err,q1_s,q3_s,speedup_lo,"
	"speedup_hi,reps,dense_s,dense_baseline_s,agree,remeasured,mask,rank_ok,noisy_vs,label";

/* A field as RFC 4180 has it: quoted when it holds a comma, quote or line
 * break (a label or expression may). */
static void sweep_csv_field(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (const char *p = s; *p; p++)
		fprintf(f, *p == '"' ? "\"\"" : "%c", *p);
	fputc('"', f);
}

/* The dense baseline of the row's normalisation. */
static double sweep_row_baseline(const sweep_cli *c, const mk_sweep_row *r)
{
	return c->baseline[r->norm - c->norms];
}

/* The label the user gave the row's pattern (LABEL=MASK), or "". */
static const char *sweep_row_label(const sweep_cli *c, const mk_sweep_row *r)
{
	size_t p = (size_t)r->grid / c->s.ntargets;

	return c->s.labels && c->s.labels[p] ? c->s.labels[p] : "";
}

/* The kernels a row cannot be ranked against, space-separated. */
static void sweep_noisy_vs(unsigned unranked, char *buf, size_t cap)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int k = 0; k < MK_KERNEL_COUNT && used < cap; k++)
		if (unranked & (1u << k))
			used += (size_t)snprintf(buf + used, cap - used, "%s%s", used ? " " : "",
						 mk_attn_kernel_name((mk_attn_kernel)k));
}

static void sweep_csv_row(FILE *f, const sweep_cli *c, const mk_sweep_row *r,
			  const sweep_where *w)
{
	const mk_attn_shape *s = &c->s.shape;
	char norm[32], param[64] = "", noisy[64];

	mk_norm_format(r->norm, norm, sizeof norm);
	sweep_noisy_vs(r->unranked, noisy, sizeof noisy);
	if (r->param) /* a fixed mask has none: the field stays empty */
		snprintf(param, sizeof param, "%s=%" PRId64, r->param, r->point.value);
	sweep_csv_field(f, r->pattern);
	fprintf(f, ",%s,%.4f,%.6f,%.6f,%s,%s,%s,%s,%" PRId64 ",%" PRId64 ",%" PRId64
		",%" PRId64 ",%" PRId64 ",%.6e,%.6e,%.6f,%.4f,%.4f,%.3e", param,
		r->target, r->point.sparsity, r->tile_density,
		mk_attn_kernel_name(r->kernel), norm, mk_attn_backend_name(c->s.backend),
		mk_compute_name(c->s.dtype), s->n,
		s->batch, s->heads, s->d, c->s.tile, r->median_s, r->min_s, r->speedup,
		r->gflops_dense, r->gflops_actual, r->max_err);
	fprintf(f, ",%.6e,%.6e,%.6f,%.6f,%d,%.6e,%.6e,%d,%d,", r->q1_s, r->q3_s, r->speedup_lo,
		r->speedup_hi, r->reps, r->dense_s, sweep_row_baseline(c, r), r->agree,
		r->remeasured);
	sweep_csv_field(f, r->point.expr);
	fprintf(f, ",%d,%s,", r->rank_ok, noisy);
	sweep_csv_field(f, sweep_row_label(c, r));
	if (w)
		fprintf(f, ",%s,%s", w->host, w->device);
	fputc('\n', f);
}

static void sweep_csv(FILE *f, const sweep_cli *c, const mk_machine *m)
{
	fprintf(f, "# maskkit sweep\n# cpu: %s\n# threads: %d\n# maskkit: %s\n# commit: %s\n"
		"# gpu: %s\n# gpu_driver: %s\n# gpu_sms: %d\n# gpu_clock_mhz: %d\n"
		"# gpu_mem_clock_mhz: %d\n# seed: %" PRIu64 "\n", m->cpu, m->threads,
		m->version, m->commit, m->gpu, m->gpu_driver, m->gpu_sms, m->gpu_clock_mhz,
		m->gpu_mem_clock_mhz, c->s.seed);
	fprintf(f, "# warmup: %d\n# min_reps: %d\n# max_reps: %d\n# precision: %g\n"
		"# max_time_s: %g\n# speedup: the median over repetitions of dense/kernel, timed "
		"interleaved\n# speedup_lo, speedup_hi: its distribution-free 95%% confidence "
		"interval (order statistics)\n", c->s.warmup, c->s.min_reps, c->s.max_reps,
		c->s.precision, c->s.max_time);
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
		{"pattern", r->pattern}, {"label", sweep_row_label(c, r)}, {"param", param},
		{"mask", r->point.expr},
		{"kernel", mk_attn_kernel_name(r->kernel)}, {"norm", norm},
		{"backend", mk_attn_backend_name(c->s.backend)},
		{"dtype", mk_compute_name(c->s.dtype)}};
	const struct { const char *key; double v; } nums[] = {
		{"target", r->target}, {"achieved", r->point.sparsity},
		{"nnz", (double)r->point.count}, {"tile_density", r->tile_density},
		{"n", (double)c->s.shape.n}, {"batch", (double)c->s.shape.batch},
		{"heads", (double)c->s.shape.heads}, {"d", (double)c->s.shape.d},
		{"tile", (double)c->s.tile}, {"median_s", r->median_s}, {"min_s", r->min_s},
		{"speedup", r->speedup}, {"gflops_dense", r->gflops_dense},
		{"gflops_actual", r->gflops_actual}, {"max_err", r->max_err}, {"q1_s", r->q1_s},
		{"q3_s", r->q3_s}, {"speedup_lo", r->speedup_lo}, {"speedup_hi", r->speedup_hi},
		{"reps", r->reps}, {"dense_s", r->dense_s},
		{"dense_baseline_s", sweep_row_baseline(c, r)}};
	cJSON *noisy;

	mk_norm_format(r->norm, norm, sizeof norm);
	if (r->param)
		snprintf(param, sizeof param, "%s=%" PRId64, r->param, r->point.value);
	else
		param[0] = '\0';
	for (size_t k = 0; k < sizeof strs / sizeof *strs; k++)
		cJSON_AddStringToObject(o, strs[k][0], strs[k][1]);
	for (size_t k = 0; k < sizeof nums / sizeof *nums; k++)
		cJSON_AddNumberToObject(o, nums[k].key, nums[k].v);
	cJSON_AddBoolToObject(o, "agree", r->agree);
	cJSON_AddBoolToObject(o, "remeasured", r->remeasured);
	cJSON_AddBoolToObject(o, "rank_ok", r->rank_ok);
	noisy = cJSON_AddArrayToObject(o, "noisy_vs");
	for (int k = 0; k < MK_KERNEL_COUNT && noisy; k++)
		if (r->unranked & (1u << k))
			cJSON_AddItemToArray(noisy, cJSON_CreateString(
				mk_attn_kernel_name((mk_attn_kernel)k)));
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
	cJSON_AddNumberToObject(root, "warmup", c->s.warmup);
	cJSON_AddNumberToObject(root, "min_reps", c->s.min_reps);
	cJSON_AddNumberToObject(root, "max_reps", c->s.max_reps);
	cJSON_AddNumberToObject(root, "precision", c->s.precision);
	cJSON_AddNumberToObject(root, "max_time_s", c->s.max_time);
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

static int sweep_emit(FILE *f, const sweep_cli *c, bool json)
{
	mk_machine m;

	mk_machine_describe_backend(c->s.backend, &m);
	if (json)
		return sweep_json(f, c, &m);
	sweep_csv(f, c, &m);
	return MK_OK;
}

static int sweep_file_csv(void *file, void *arg)
{
	return sweep_emit(file, arg, false);
}

static int sweep_file_json(void *file, void *arg)
{
	return sweep_emit(file, arg, true);
}

int sweep_output_format(const char *path)
{
	const char *dot = path ? strrchr(path, '.') : NULL;
	if (!path || (dot && !strcmp(dot, ".csv")))
		return 0;
	if (dot && !strcmp(dot, ".json"))
		return 1;
	return mk_error_set(MK_EINVAL, "cannot tell the format of '%s' from its name: use .csv "
			    "or .json", path);
}

/* Files go to a temporary name beside them, renamed on success; standard
 * output gets the JSON (--json) or the CSV (--csv -), else the summary
 * (sweep_summary, called by the command). */
int sweep_write(const sweep_cli *c)
{
	int ret = MK_OK;

	if (c->out)
		ret = mk_write_atomic(c->out, sweep_output_format(c->out) == 1 ? sweep_file_json :
				      sweep_file_csv, (void *)c);
	if (!ret && c->csv && strcmp(c->csv, "-"))
		ret = mk_write_atomic(c->csv, sweep_file_csv, (void *)c);
	if (!ret && c->json)
		ret = sweep_emit(stdout, c, true);
	else if (!ret && c->csv && !strcmp(c->csv, "-"))
		ret = sweep_emit(stdout, c, false);
	return ret;
}

/* ---- the plot ------------------------------------------------------------------ */

/* The rows as the report reads them from a CSV, so that both draw alike. */
static int sweep_fig_rows(const sweep_cli *c, rp_sweep_row **out)
{
	rp_sweep_row *rows = calloc(c->nrows ? c->nrows : 1, sizeof *rows);

	if (!(*out = rows))
		return mk_error_set(MK_ENOMEM, "out of memory for the plot");
	for (size_t k = 0; k < c->nrows; k++) {
		const mk_sweep_row *r = &c->rows[k];
		rp_sweep_row *x = &rows[k];
		snprintf(x->pattern, sizeof x->pattern, "%s", r->pattern);
		snprintf(x->kernel, sizeof x->kernel, "%s", mk_attn_kernel_name(r->kernel));
		mk_norm_format(r->norm, x->norm, sizeof x->norm);
		snprintf(x->backend, sizeof x->backend, "%s", mk_attn_backend_name(c->s.backend));
		snprintf(x->dtype, sizeof x->dtype, "%s", mk_compute_name(c->s.dtype));
		x->n = c->s.shape.n;
		x->target = r->target;
		x->achieved = r->point.sparsity;
		x->median_s = r->median_s;
		x->q1_s = r->q1_s;
		x->q3_s = r->q3_s;
		x->speedup = r->speedup;
		x->speedup_lo = r->speedup_lo;
		x->speedup_hi = r->speedup_hi;
		x->dense_s = r->dense_s;
		x->baseline_s = sweep_row_baseline(c, r);
		x->reps = r->reps;
		x->agree = r->agree;
		x->rank_ok = r->rank_ok;
	}
	return MK_OK;
}

int sweep_plot(const sweep_cli *c)
{
	rp_sweep_row *rows = NULL;
	rp_sweep_fig fig;
	char title[300];
	mk_machine m;
	int ret;

	mk_machine_describe_backend(c->s.backend, &m);
	snprintf(title, sizeof title, "maskkit sweep: n = %" PRId64 ", batch %" PRId64 ", heads %"
		 PRId64 ", d = %" PRId64 ", tile %" PRId64 ", %s %s%s%.80s", c->s.shape.n,
		 c->s.shape.batch, c->s.shape.heads, c->s.shape.d, c->s.tile,
		 mk_attn_backend_name(c->s.backend),
		 mk_compute_name(c->s.dtype), m.gpu[0] ? ", " : "", m.gpu);
	if ((ret = sweep_fig_rows(c, &rows)) ||
	    (ret = rp_sweep_figure(rows, c->nrows, title, &fig)))
		goto out;
	fig.plot.output = c->png;
	ret = mk_plot_run(&fig.plot);
	rp_sweep_figure_release(&fig);
out:
	free(rows);
	return ret;
}
