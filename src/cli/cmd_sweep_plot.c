/* maskkit sweep --plot: time against achieved sparsity, a line per
 * (pattern, kernel, norm), dense as reference lines (templates/sweep.gp). */
#include "config.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include "cmd_sweep.h"

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

/* Rows come pattern by pattern, then target, norm and kernel. */
static const mk_sweep_row *sweep_row_at(const sweep_cli *c, size_t all, size_t p, size_t t,
					size_t ni, int kidx)
{
	return &c->rows[((p * c->s.ntargets + t) * c->s.nnorms + ni) * all + (size_t)kidx];
}

/* gnuplot assignments: series per pattern, the series' names, dense times. */
static int sweep_plot_vars(const sweep_cli *c, size_t all, const int *kinds, size_t nk,
			   char **out)
{
	size_t cap = 128 + c->s.nnorms * 24 + c->s.npatterns * c->s.nnorms * nk * 80, used;
	char *v = malloc(cap), norm[32];

	if (!(*out = v))
		return mk_error_set(MK_ENOMEM, "out of memory for the plot");
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
					 c->dense_s[ni]);
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
		 c->s.dtype, m.gpu[0] ? ", " : "", m.gpu);
	if (!(ret = sweep_plot_vars(c, all, kinds, nk, &vars)))
		ret = mk_plot_run(&(mk_plot){.template_name = "sweep", .output = c->plot,
					     .title = title, .data = data,
					     .rows = (int64_t)(series * c->s.ntargets), .ncols = 2,
					     .col_names = cols, .panels = (int)series, .vars = vars});
	free(data);
	free(vars);
	return ret;
}

