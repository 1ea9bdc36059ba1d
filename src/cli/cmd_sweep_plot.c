/* maskkit sweep's outputs: the CSV or JSON table (-o, --csv, --json) and the
 * --png figure, time against achieved sparsity, a line per (pattern, kernel,
 * norm), dense as reference lines (templates/sweep.gp). */
#include "config.h"
#include <cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd_sweep.h"
#include "attn_backend.h"
#include "plot.h"

/* ---- the tables ---------------------------------------------------------------- */

static const char *const sweep_csv_header =
	"pattern,param,target,achieved,tile_density,kernel,norm,backend,dtype,n,batch,heads,d,"
	"tile,median_s,min_s,speedup,gflops_dense,gflops_actual,max_err,q1_s,q3_s,speedup_q1,"
	"speedup_q3,rank_ok,noisy_vs";

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
	/* a label or expression with a comma or quote: one quoted field (RFC 4180) */
	if (strpbrk(r->pattern, ",\"\r\n")) {
		fputc('"', f);
		for (const char *p = r->pattern; *p; p++)
			fprintf(f, *p == '"' ? "\"\"" : "%c", *p);
		fputc('"', f);
	} else {
		fputs(r->pattern, f);
	}
	fprintf(f, ",%s,%.4f,%.6f,%.6f,%s,%s,%s,%s,%" PRId64 ",%" PRId64 ",%" PRId64
		",%" PRId64 ",%" PRId64 ",%.6e,%.6e,%.4f,%.4f,%.4f,%.3e", param,
		r->target, r->point.sparsity, r->tile_density,
		mk_attn_kernel_name(r->kernel), norm, c->s.backend->name,
		mk_compute_name(c->s.dtype), s->n,
		s->batch, s->heads, s->d, c->s.tile, r->median_s, r->min_s, r->speedup,
		r->gflops_dense, r->gflops_actual, r->max_err);
	fprintf(f, ",%.6e,%.6e,%.4f,%.4f,%d,%s", r->q1_s, r->q3_s, r->speedup_q1, r->speedup_q3,
		r->rank_ok, noisy);
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
		{"backend", c->s.backend->name}, {"dtype", mk_compute_name(c->s.dtype)}};
	const struct { const char *key; double v; } nums[] = {
		{"target", r->target}, {"achieved", r->point.sparsity},
		{"nnz", (double)r->point.count}, {"tile_density", r->tile_density},
		{"n", (double)c->s.shape.n}, {"batch", (double)c->s.shape.batch},
		{"heads", (double)c->s.shape.heads}, {"d", (double)c->s.shape.d},
		{"tile", (double)c->s.tile}, {"median_s", r->median_s}, {"min_s", r->min_s},
		{"speedup", r->speedup}, {"gflops_dense", r->gflops_dense},
		{"gflops_actual", r->gflops_actual}, {"max_err", r->max_err}, {"q1_s", r->q1_s},
		{"q3_s", r->q3_s}, {"speedup_q1", r->speedup_q1}, {"speedup_q3", r->speedup_q3}};
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

/* Files go to a temporary name beside them, renamed on success. */
int sweep_write(const sweep_cli *c)
{
	bool csv_out = c->csv && !strcmp(c->csv, "-");
	int ret = MK_OK;

	if (c->out)
		ret = mk_write_atomic(c->out, sweep_output_format(c->out) == 1 ? sweep_file_json :
				      sweep_file_csv, (void *)c);
	if (!ret && c->csv && !csv_out)
		ret = mk_write_atomic(c->csv, sweep_file_csv, (void *)c);
	if (!ret && c->json)
		ret = sweep_emit(stdout, c, true);
	else if (!ret && (csv_out || (!c->out && !c->csv)))
		ret = sweep_emit(stdout, c, false);
	return ret;
}


/* ---- the plot ------------------------------------------------------------------ */

/* The series plotted: each non-dense kernel (dense alone when it is the only
 * one, else its times are reference lines, dense_s, one per norm) for each
 * (pattern, norm).  *kinds gets the kernels (in emission order). */
static size_t sweep_series_kernels(const sweep_cli *c, size_t *all, int *kinds)
{
	size_t nk = 0;
	*all = 0;
	for (int k = 0; k < MK_KERNEL_COUNT; k++) {
		if (!(c->s.kernels & (1u << k)))
			continue;
		(*all)++;
		if (k != MK_KERNEL_DENSE || c->s.kernels == 1u << MK_KERNEL_DENSE)
			kinds[nk++] = (int)*all - 1;
	}
	return nk;
}

/* Rows come pattern by pattern, then target, norm and kernel; a fixed mask
 * (no parameter) has one point, which stands for every target here. */
static const mk_sweep_row *sweep_row_at(const sweep_cli *c, size_t all, size_t p, size_t t,
					size_t ni, int kidx)
{
	size_t at = 0, points = 1;

	for (size_t q = 0; q <= p; q++) {
		points = mk_sweep_param(c->s.patterns[q]) ? c->s.ntargets : 1;
		if (q < p)
			at += points * c->s.nnorms * all;
	}
	t = t < points ? t : points - 1;
	return &c->rows[at + (t * c->s.nnorms + ni) * all + (size_t)kidx];
}

static int sweep_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* dense's reference line for norm ni: dense is timed at every point, with
 * the others; the line is the median over the points of its median there.
 * work holds c->nrows values. */
static double sweep_dense_line(const sweep_cli *c, size_t ni, double *work)
{
	size_t m = 0;

	for (size_t k = 0; k < c->nrows; k++)
		if (c->rows[k].norm == &c->norms[ni])
			work[m++] = c->rows[k].dense_s;
	if (m == 0)
		return 0.0;
	qsort(work, m, sizeof *work, sweep_cmp_double);
	return m % 2 ? work[m / 2] : 0.5 * (work[m / 2 - 1] + work[m / 2]);
}

/* gnuplot assignments: series per pattern, the series' names, dense times. */
static int sweep_plot_vars(const sweep_cli *c, size_t all, const int *kinds, size_t nk,
			   char **out)
{
	size_t cap = 128 + c->s.nnorms * 24 + c->s.npatterns * c->s.nnorms * nk * 80, used;
	char *v = malloc(cap), norm[32];
	double *work = malloc((c->nrows ? c->nrows : 1) * sizeof *work);

	if (!(*out = v) || !work) {
		free(work);
		return mk_error_set(MK_ENOMEM, "out of memory for the plot");
	}
	used = (size_t)snprintf(v, cap, "per_pattern = %zu\nseries = '", c->s.nnorms * nk);
	for (size_t p = 0; p < c->s.npatterns; p++)
		for (size_t ni = 0; ni < c->s.nnorms; ni++)
			for (size_t k = 0; k < nk && used < cap; k++) {
				const mk_sweep_row *r = sweep_row_at(c, all, p, 0, ni, kinds[k]);
				mk_norm_format(r->norm, norm, sizeof norm);
				used += (size_t)snprintf(v + used, cap - used, "%s%s/%s%s%s",
							 p + ni + k ? " " : "", r->pattern,
							 mk_attn_kernel_name(r->kernel),
							 c->s.nnorms > 1 ? "/" : "",
							 c->s.nnorms > 1 ? norm : "");
			}
	used += used < cap ? (size_t)snprintf(v + used, cap - used, "'\ndense_s = '") : 0;
	for (size_t ni = 0; ni < c->s.nnorms && used < cap; ni++)
		used += (size_t)snprintf(v + used, cap - used, "%s%.6e", ni ? " " : "",
					 sweep_dense_line(c, ni, work));
	free(work);
	if (used + 3 >= cap)
		return mk_error_set(MK_EINTERNAL, "plot variables do not fit in %zu bytes", cap);
	snprintf(v + used, cap - used, "'\n");
	return MK_OK;
}

int sweep_plot(const sweep_cli *c)
{
	const char *cols[2] = {"achieved", "time"};
	int kinds[MK_KERNEL_COUNT];
	size_t all, nk = sweep_series_kernels(c, &all, kinds), at = 0;
	size_t series = c->s.npatterns * c->s.nnorms * nk;
	char *vars = NULL, title[300];
	mk_machine m;
	double *data = malloc(series * c->s.ntargets * 2 * sizeof *data);
	int ret;

	if (!data)
		return mk_error_set(MK_ENOMEM, "out of memory for the plot");
	for (size_t p = 0; p < c->s.npatterns; p++)
		for (size_t ni = 0; ni < c->s.nnorms; ni++)
			for (size_t k = 0; k < nk; k++)
				for (size_t t = 0; t < c->s.ntargets; t++) {
					const mk_sweep_row *r = sweep_row_at(c, all, p, t, ni, kinds[k]);
					data[at++] = 100.0 * r->point.sparsity;
					data[at++] = r->median_s;
				}
	mk_machine_describe_backend(c->s.backend, &m);
	snprintf(title, sizeof title, "maskkit sweep: n = %" PRId64 ", batch %" PRId64 ", heads %"
		 PRId64 ", d = %" PRId64 ", tile %" PRId64 ", %s %s%s%.80s", c->s.shape.n,
		 c->s.shape.batch, c->s.shape.heads, c->s.shape.d, c->s.tile, c->s.backend->name,
		 mk_compute_name(c->s.dtype), m.gpu[0] ? ", " : "", m.gpu);
	if (!(ret = sweep_plot_vars(c, all, kinds, nk, &vars)))
		ret = mk_plot_run(&(mk_plot){.template_name = "sweep", .output = c->png,
					     .title = title, .data = data,
					     .rows = (int64_t)(series * c->s.ntargets), .ncols = 2,
					     .col_names = cols, .panels = (int)series, .vars = vars});
	free(data);
	free(vars);
	return ret;
}

