/*
 * A sweep across MPI ranks: each rank measures its share of the (pattern,
 * target) grid on its own device; the rows travel to rank 0 as plain
 * records, are put back in the order of a single run and keep the host and
 * device that measured them.
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "par.h"
#include "sweep_internal.h"

/* A row without pointers. */
typedef struct sweep_wire {
	int64_t grid;
	int32_t pattern, norm, kernel, pad;
	mk_sweep_point point;
	double target, tile_density, median_s, min_s, speedup, gflops_dense, gflops_actual, max_err;
	double q1_s, q3_s, speedup_lo, speedup_hi, dense_s;
	int32_t reps;
	uint32_t unranked, rank_ok, agree, remeasured, pad2;
	mk_sweep_where where;
} sweep_wire;

static void sweep_to_wire(const mk_sweep_opts *s, const mk_sweep_row *r, const char *device,
			  sweep_wire *w)
{
	memset(w, 0, sizeof *w);
	w->grid = r->grid;
	w->pattern = (int32_t)(r->grid / (int64_t)s->ntargets);
	w->norm = (int32_t)(r->norm - s->norms);
	w->kernel = (int32_t)r->kernel;
	w->point = r->point;
	w->target = r->target;
	w->tile_density = r->tile_density;
	w->median_s = r->median_s;
	w->min_s = r->min_s;
	w->speedup = r->speedup;
	w->gflops_dense = r->gflops_dense;
	w->gflops_actual = r->gflops_actual;
	w->max_err = r->max_err;
	w->q1_s = r->q1_s;
	w->q3_s = r->q3_s;
	w->speedup_lo = r->speedup_lo;
	w->speedup_hi = r->speedup_hi;
	w->dense_s = r->dense_s;
	w->reps = r->reps;
	w->unranked = r->unranked;
	w->rank_ok = r->rank_ok;
	w->agree = r->agree;
	w->remeasured = r->remeasured;
	snprintf(w->where.host, sizeof w->where.host, "%s", mk_par_host());
	snprintf(w->where.device, sizeof w->where.device, "%s", device);
}

static void sweep_from_wire(const mk_sweep_opts *s, const sweep_wire *w, mk_sweep_row *r)
{
	*r = (mk_sweep_row){.pattern = mk_sweep_label(s, (size_t)w->pattern),
			    .param = mk_sweep_param(s->patterns[w->pattern]), .grid = w->grid,
			    .point = w->point, .target = w->target, .tile_density = w->tile_density,
			    .kernel = (mk_attn_kernel)w->kernel, .norm = &s->norms[w->norm],
			    .median_s = w->median_s, .min_s = w->min_s, .speedup = w->speedup,
			    .gflops_dense = w->gflops_dense, .gflops_actual = w->gflops_actual,
			    .max_err = w->max_err, .q1_s = w->q1_s, .q3_s = w->q3_s,
			    .speedup_lo = w->speedup_lo, .speedup_hi = w->speedup_hi,
			    .dense_s = w->dense_s, .reps = w->reps, .unranked = w->unranked,
			    .rank_ok = w->rank_ok, .agree = w->agree, .remeasured = w->remeasured};
}

/* The order of a single run: grid point, then norm, then kernel. */
static int sweep_wire_cmp(const void *a, const void *b)
{
	const sweep_wire *x = a, *y = b;

	if (x->grid != y->grid)
		return x->grid < y->grid ? -1 : 1;
	if (x->norm != y->norm)
		return x->norm < y->norm ? -1 : 1;
	return (x->kernel > y->kernel) - (x->kernel < y->kernel);
}

int mk_sweep_gather(const mk_sweep_opts *s, const char *device, mk_sweep_row **rows,
		    size_t *nrows, mk_sweep_where **where)
{
	sweep_wire *mine = calloc(*nrows ? *nrows : 1, sizeof *mine), *all = NULL;
	size_t bytes = 0, count;
	mk_sweep_row *out = NULL;
	int ret = mine ? MK_OK : mk_error_set(MK_ENOMEM, "out of memory for the results");

	*where = NULL;
	for (size_t k = 0; mine && k < *nrows; k++)
		sweep_to_wire(s, &(*rows)[k], device, &mine[k]);
	if ((ret = mk_par_agree(ret, NULL)) ||
	    (ret = mk_par_gather(mine, *nrows * sizeof *mine, (void **)&all, &bytes)))
		goto out;
	free(*rows);
	*rows = NULL;
	*nrows = 0;
	if (mk_par_rank() != 0)
		goto out;
	count = bytes / sizeof *all;
	qsort(all, count, sizeof *all, sweep_wire_cmp);
	out = malloc((count ? count : 1) * sizeof *out);
	*where = malloc((count ? count : 1) * sizeof **where);
	if (!out || !*where) {
		free(out);
		free(*where);
		*where = NULL;
		ret = mk_error_set(MK_ENOMEM, "out of memory for the results");
		goto out;
	}
	for (size_t k = 0; k < count; k++) {
		sweep_from_wire(s, &all[k], &out[k]);
		(*where)[k] = all[k].where;
	}
	*rows = out;
	*nrows = count;
out:
	free(mine);
	free(all);
	return ret;
}
