/*
 * `maskkit positional` in one call: the positional term of a layer per head
 * (positional.c), TISA kernel fits of each head's Toeplitz profile
 * (tisa_fit.c), and the result described once for the emitter.
 */
#include "config.h"
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core.h"
#include "weights.h"
#include "result.h"

/* R^2 of the TISA function as a model of the whole matrix: the Toeplitz
 * projection is orthogonal, so its residual and the fit's add up. */
static double pos_matrix_r2(const mk_toeplitz *t, const mk_tisa *f)
{
	return t->tss > 0.0 ? 1.0 - (t->rss + f->wrss) / t->tss : 1.0;
}

/* Each head's profile, diagonal d weighted by its length n - |d|. */
static int pos_fit_heads(mk_positional_report *r)
{
	const mk_positional *p = &r->p;
	int64_t n = p->n, m = 2 * n - 1;
	double *w = malloc((size_t)m * sizeof *w);
	int ret = MK_OK;

	r->fits = calloc((size_t)p->heads, sizeof *r->fits);
	r->fit_views = calloc((size_t)p->heads, sizeof *r->fit_views);
	if (!w || !r->fits || !r->fit_views) {
		free(w);
		return mk_error_set(MK_ENOMEM, "out of memory for the fits");
	}
	for (int64_t x = 0; x < m; x++)
		w[x] = (double)(n - llabs(x - (n - 1)));
	for (int64_t h = 0; h < p->heads && ret == MK_OK; h++) {
		const mk_tisa *f = &r->fits[h];
		ret = mk_tisa_fit(p->profile + h * m, w, m, -(n - 1), r->kernels, &r->fits[h]);
		r->fit_views[h] = (mk_positional_fit){
			.a = f->a, .b = f->b, .c = f->c, .kernels = f->kernels, .r2 = f->r2,
			.r2_matrix = pos_matrix_r2(&p->fit[h], f), .starts = f->starts,
			.iterations = f->iterations, .capped = f->capped,
			.trend_kernels = f->outside};
		r->per_head[h].fit = &r->fit_views[h];
	}
	free(w);
	return ret;
}

int mk_positional_run(const char *file, const mk_positional_opts *o, int kernels,
		      mk_positional_report *r)
{
	const mk_positional *p = &r->p;
	int ret;

	memset(r, 0, sizeof *r);
	r->file = file;
	r->layer = o->layer;
	r->kernels = kernels;
	r->params = NAN;
	if (kernels < 0 || kernels > MK_TISA_MAX_KERNELS) {
		mk_error_set(MK_EINVAL, "kernels must be in 0..%d, got %d", MK_TISA_MAX_KERNELS,
			     kernels);
		return mk_error_param("kernels");
	}
	if ((ret = mk_positional_compute(file, o, &r->p)))
		return ret;
	r->bias = p->used[MK_POS_QUERY_BIAS] || p->used[MK_POS_KEY_BIAS];
	if (!(r->per_head = calloc((size_t)p->heads, sizeof *r->per_head)))
		return mk_error_set(MK_ENOMEM, "out of memory");
	for (int64_t h = 0; h < p->heads; h++)
		r->per_head[h] = (mk_positional_head){.head = h, .r2 = p->fit[h].r2,
						      .rss = p->fit[h].rss, .tss = p->fit[h].tss};
	if (!kernels)
		return MK_OK;
	r->params_per_layer = 3 * kernels * p->heads;
	if (p->layers)
		r->params = (double)(r->params_per_layer * p->layers);
	return pos_fit_heads(r);
}

void mk_positional_report_release(mk_positional_report *r)
{
	if (!r)
		return;
	mk_positional_release(&r->p);
	free(r->fits);
	free(r->per_head);
	free(r->fit_views);
	memset(r, 0, sizeof *r);
}

/* ---- the result, described once ------------------------------------------- */

static void pos_show_theta(const void *rec, char *buf, size_t cap)
{
	const mk_positional_fit *f = rec;
	size_t used = 0;

	buf[0] = '\0';
	for (int64_t s = 0; s < f->kernels && used < cap; s++)
		used += (size_t)snprintf(buf + used, cap - used, "%s(%.4g, %.4g, %.4g)",
					 s ? " " : "", f->a[s], f->b[s], f->c[s]);
}

static const mk_field pos_fit_fields[] = {
	{MK_FIELD(mk_positional_fit, a, "a", MK_FT_REALS),
	 .count_offset = offsetof(mk_positional_fit, kernels), .help = "amplitudes"},
	{MK_FIELD(mk_positional_fit, b, "b", MK_FT_REALS),
	 .count_offset = offsetof(mk_positional_fit, kernels), .help = "|b|: inverse widths"},
	{MK_FIELD(mk_positional_fit, c, "c", MK_FT_REALS),
	 .count_offset = offsetof(mk_positional_fit, kernels), .help = "centres"},
	{MK_FIELD(mk_positional_fit, r2, "r2", MK_FT_REAL), .label = "R^2", .fmt = "%.6f",
	 .help = "of the fit against the profile"},
	{MK_FIELD(mk_positional_fit, r2_matrix, "r2_matrix", MK_FT_REAL), .label = "TISA R^2",
	 .fmt = "%.6f", .help = "of the TISA function as a model of F_P"},
	{MK_FIELD(mk_positional_fit, starts, "starts", MK_FT_INT), .flags = MK_FF_NOTEXT},
	{MK_FIELD(mk_positional_fit, iterations, "iterations", MK_FT_INT), .flags = MK_FF_NOTEXT},
	{MK_FIELD(mk_positional_fit, capped, "capped", MK_FT_BOOL), .flags = MK_FF_NOTEXT,
	 .help = "stopped at the iteration cap before converging"},
	{MK_FIELD(mk_positional_fit, trend_kernels, "trend_kernels", MK_FT_INT),
	 .flags = MK_FF_NOTEXT, .help = "kernels centred outside the positions"},
	/* a string in text: left-aligned, as show() writes it from a, b and c */
	{MK_FIELD(mk_positional_fit, a, "theta", MK_FT_STR), .flags = MK_FF_TEXT,
	 .label = "theta (a, |b|, c per kernel)", .show = pos_show_theta},
};
static const mk_record pos_fit_record = MK_RECORD("tisa_fit", mk_positional_fit, pos_fit_fields);

static const mk_field pos_head_fields[] = {
	{MK_FIELD(mk_positional_head, head, "head", MK_FT_I64)},
	{MK_FIELD(mk_positional_head, r2, "r2", MK_FT_REAL), .label = "R^2", .fmt = "%.9f"},
	{MK_FIELD(mk_positional_head, rss, "rss", MK_FT_REAL), .label = "RSS", .fmt = "%.5e"},
	{MK_FIELD(mk_positional_head, tss, "tss", MK_FT_REAL), .label = "TSS", .fmt = "%.5e"},
	{MK_FIELD(mk_positional_head, fit, "fit", MK_FT_PTR), .sub = &pos_fit_record,
	 .flags = MK_FF_OMIT},
};
static const mk_record pos_head_record = MK_RECORD("positional_head", mk_positional_head,
						   pos_head_fields);

#define POS_ROLE(role, name_)                                                             \
	{MK_FIELD(mk_positional, used[role], name_, MK_FT_STR), .flags = MK_FF_OMIT}

static const mk_field pos_dataset_fields[] = {
	POS_ROLE(MK_POS_POSITION, "position"), POS_ROLE(MK_POS_WORD, "word"),
	POS_ROLE(MK_POS_QUERY, "query"), POS_ROLE(MK_POS_KEY, "key"),
	POS_ROLE(MK_POS_QUERY_BIAS, "query-bias"), POS_ROLE(MK_POS_KEY_BIAS, "key-bias"),
	POS_ROLE(MK_POS_PROJ, "projection"), POS_ROLE(MK_POS_PROJ_BIAS, "projection-bias"),
};
static const mk_record pos_dataset_record = MK_RECORD("positional_datasets", mk_positional,
						      pos_dataset_fields);

static bool pos_has_layers(const void *rec)
{
	return ((const mk_positional_report *)rec)->p.layers > 0;
}

static bool pos_has_fits(const void *rec)
{
	return ((const mk_positional_report *)rec)->kernels > 0;
}

static void pos_show_params(const void *rec, char *buf, size_t cap)
{
	const mk_positional_report *r = rec;
	snprintf(buf, cap, "3 S H L = 3 x %d x %" PRId64 " x %" PRId64 " = %.0f", r->kernels,
		 r->p.heads, r->p.layers, r->params);
}

static void pos_show_params_layer(const void *rec, char *buf, size_t cap)
{
	const mk_positional_report *r = rec;
	snprintf(buf, cap, "3 S H = 3 x %d x %" PRId64 " = %" PRId64, r->kernels, r->p.heads,
		 r->params_per_layer);
}

static const mk_field pos_fields[] = {
	{MK_FIELD(mk_positional_report, file, "file", MK_FT_STR)},
	{MK_FIELD(mk_positional_report, layer, "layer", MK_FT_I64), .help = "counted from 0"},
	{MK_FIELD(mk_positional_report, p.layers, "layers", MK_FT_I64), .present = pos_has_layers,
	 .help = "with query weights named by layer"},
	{MK_FIELD(mk_positional_report, p.n, "n", MK_FT_I64), .label = "positions"},
	{MK_FIELD(mk_positional_report, p.e, "embedding", MK_FT_I64), .label = "embedding size"},
	{MK_FIELD(mk_positional_report, p.hidden, "hidden", MK_FT_I64),
	 .help = "size of the query and key projections"},
	{MK_FIELD(mk_positional_report, p.heads, "heads", MK_FT_I64)},
	{MK_FIELD(mk_positional_report, p.dk, "dk", MK_FT_I64), .label = "d_k"},
	{MK_FIELD(mk_positional_report, bias, "bias", MK_FT_BOOL), .label = "biases",
	 .help = "query or key biases read"},
	{MK_FIELD(mk_positional_report, p, "datasets", MK_FT_OBJ), .sub = &pos_dataset_record},
	{MK_FIELD(mk_positional_report, per_head, "per_head", MK_FT_LIST), .sub = &pos_head_record,
	 .count_offset = offsetof(mk_positional_report, p.heads)},
	{MK_FIELD(mk_positional_report, params_per_layer, "positional_parameters_per_layer",
		  MK_FT_I64), .flags = MK_FF_OMIT, .present = pos_has_fits,
	 .label = "parameters per layer", .show = pos_show_params_layer},
	{MK_FIELD(mk_positional_report, params, "positional_parameters", MK_FT_REAL),
	 .flags = MK_FF_OMIT | MK_FF_KEEP_NULL, .present = pos_has_fits,
	 .label = "parameters", .show = pos_show_params,
	 .help = "of a TISA model with S kernels per head, H heads, L layers"},
};

const mk_record mk_positional_record = MK_RECORD("positional", mk_positional_report, pos_fields);
