/* maskkit sweep's --png figure (the report's, templates/sweep.gp: time and
 * speed-up with their bars against achieved sparsity); the tables are the
 * library's (mk_sweep_write). */
#include "config.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd_sweep.h"
#include "plot.h"
#include "report.h" /* rp_sweep_figure: the report draws sweeps the same way */

/* ---- the plot ------------------------------------------------------------------ */

/* The rows as the report reads them from a CSV, so that both draw alike. */
static int sweep_fig_rows(const mk_sweep_result *r, rp_sweep_row **out)
{
	rp_sweep_row *rows = calloc(r->nrows ? r->nrows : 1, sizeof *rows);

	if (!(*out = rows))
		return mk_error_set(MK_ENOMEM, "out of memory for the plot");
	for (size_t k = 0; k < r->nrows; k++) {
		const mk_sweep_view *v = &r->views[k];
		rp_sweep_row *x = &rows[k];
		*x = (rp_sweep_row){.n = v->n, .target = v->target, .achieved = v->achieved,
				    .median_s = v->median_s, .q1_s = v->q1_s, .q3_s = v->q3_s,
				    .speedup = v->speedup, .speedup_lo = v->speedup_lo,
				    .speedup_hi = v->speedup_hi, .dense_s = v->dense_s,
				    .baseline_s = v->dense_baseline_s, .reps = v->reps,
				    .agree = v->agree, .rank_ok = v->rank_ok};
		snprintf(x->pattern, sizeof x->pattern, "%s", v->pattern);
		snprintf(x->kernel, sizeof x->kernel, "%s", v->kernel);
		snprintf(x->norm, sizeof x->norm, "%s", v->norm);
		snprintf(x->backend, sizeof x->backend, "%s", v->backend);
		snprintf(x->dtype, sizeof x->dtype, "%s", v->dtype);
	}
	return MK_OK;
}

int sweep_plot(const sweep_cli *c)
{
	const mk_sweep_result *r = &c->res;
	rp_sweep_row *rows = NULL;
	rp_sweep_fig fig;
	char title[300];
	int ret;

	snprintf(title, sizeof title, "maskkit sweep: n = %" PRId64 ", batch %" PRId64 ", heads %"
		 PRId64 ", d = %" PRId64 ", tile %" PRId64 ", %s %s%s%.80s", c->s.shape.n,
		 c->s.shape.batch, c->s.shape.heads, c->s.shape.d, c->s.tile, r->backend, r->dtype,
		 r->machine.gpu[0] ? ", " : "", r->machine.gpu);
	if ((ret = sweep_fig_rows(r, &rows)) ||
	    (ret = rp_sweep_figure(rows, r->nrows, title, &fig)))
		goto out;
	fig.plot.output = c->png;
	ret = mk_plot_run(&fig.plot);
	rp_sweep_figure_release(&fig);
out:
	free(rows);
	return ret;
}
