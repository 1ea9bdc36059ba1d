/*
 * `maskkit prune` as one call: the importance matrices read, every level's
 * masks made for every head (each head ranked once for all its levels:
 * mk_prune_levels), each level written as a stack, and the report described
 * once for the emitter (result.h).  The command names the outputs and prints.
 */
#include "config.h"
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core.h"
#include "tensor.h"
#include "data.h"
#include "result.h"

/* What one run holds: masks[h * nout + l] for head h, level l. */
typedef struct prune_job {
	const char *input;
	const mk_prune_run_opts *o;
	mk_tensor t;
	int64_t heads, n;
	size_t nout;
	mk_mask **masks;
	mk_prune_result *res; /* as masks */
} prune_job;

static int prune_read(prune_job *j)
{
	const mk_tensor *t = &j->t;
	char shape[96];
	int ret;

	if ((ret = mk_tensor_read(j->input, j->o->max_memory, &j->t)))
		return ret;
	mk_tensor_shape_text(t, shape, sizeof shape);
	if (t->rank > 3)
		return mk_error_set(MK_EFORMAT, "'%s': rank %d %s; prune reads P as [n, n] or "
				    "[heads, n, n]", j->input, t->rank, shape);
	if (t->dims[t->rank - 1] != t->dims[t->rank - 2])
		return mk_error_set(MK_EFORMAT, "'%s': shape %s is not square in its last two "
				    "axes", j->input, shape);
	j->heads = t->rank == 3 ? t->dims[0] : 1;
	j->n = t->dims[t->rank - 1];
	return MK_OK;
}

/* All masks at once: each head is ranked once for all its levels. */
static int prune_alloc(prune_job *j)
{
	uint64_t count, bytes;
	int ret;

	if (mk_mul_u64((uint64_t)j->heads, j->nout, &count) ||
	    mk_mul_u64(count, mk_words(j->n) * 8 * (uint64_t)j->n, &bytes))
		return mk_error_set(MK_ERANGE, "%" PRId64 " heads x %zu levels of masks of n = %"
				    PRId64 " are too many", j->heads, j->nout, j->n);
	if ((ret = mk_check_memory(bytes, j->o->max_memory, "the pruned masks")))
		return ret;
	j->masks = calloc(count, sizeof *j->masks);
	j->res = calloc(count, sizeof *j->res);
	if (!j->masks || !j->res)
		return mk_error_set(MK_ENOMEM, "out of memory");
	for (uint64_t k = 0; k < count; k++)
		if ((ret = mk_mask_new(j->n, 0, &j->masks[k])))
			return ret;
	return MK_OK;
}

static int prune_compute(prune_job *j)
{
	const mk_prune_run_opts *o = j->o;
	uint64_t cells = (uint64_t)j->n * (uint64_t)j->n;
	int ret = MK_OK;

	for (int64_t h = 0; h < j->heads && !ret; h++) {
		const float *p = j->t.data + (uint64_t)h * cells;
		size_t at = (size_t)h * j->nout;
		if (o->gumbel)
			ret = mk_gumbel_mask(p, j->n, o->tau, o->seed, (uint64_t)h, j->masks[at],
					     &j->res[at]);
		else
			ret = mk_prune_levels(p, j->n, o->levels, o->nlevels, o->mode, o->border,
					      j->masks + at, j->res + at);
	}
	return ret ? mk_error_prefix("'%s': ", j->input) : MK_OK;
}

typedef struct prune_rows {
	const prune_job *j;
	size_t level;
} prune_rows;

static void prune_row(void *ctx, int64_t k, int64_t i, uint64_t *dst)
{
	const prune_rows *r = ctx;
	const mk_mask *m = r->j->masks[(size_t)k * r->j->nout + r->level];
	memcpy(dst, mk_mask_crow(m, i), mk_words(r->j->n) * sizeof *dst);
}

static int prune_write(const prune_job *j, size_t level)
{
	const mk_prune_run_opts *o = j->o;
	char expr[256];
	prune_rows rows = {.j = j, .level = level};

	if (o->gumbel)
		snprintf(expr, sizeof expr, "prune(gumbel, tau=%g, seed=%" PRIu64 ") of %s",
			 o->tau, o->seed, j->input);
	else
		snprintf(expr, sizeof expr, "prune(%s, sparsity=%g) of %s",
			 o->mode == MK_PRUNE_ENTRY ? "entry" : o->border ? "diagonal"
			 : "diagonal, no border", o->levels[level], j->input);
	return mk_write_stack_h5(o->outputs[level],
				 &(mk_stack){.layers = 0, .heads = j->t.rank == 3 ? j->heads : 0,
					     .n = j->n, .row = prune_row, .ctx = &rows,
					     .expr = expr});
}

static int prune_report(const prune_job *j, mk_prune_report *r)
{
	const mk_prune_run_opts *o = j->o;

	*r = (mk_prune_report){.input = j->input, .rank = j->t.rank, .heads = j->heads, .n = j->n,
			       .dtype = mk_dtype_name(j->t.dtype), .border = o->border,
			       .gumbel = o->gumbel, .tau = o->tau, .seed = o->seed,
			       .nlevels = (int64_t)j->nout};
	r->mode = o->gumbel ? "gumbel" : o->mode == MK_PRUNE_ENTRY ? "entry" : "diagonal";
	r->levels = calloc(j->nout, sizeof *r->levels);
	r->all = calloc(j->nout * (size_t)j->heads, sizeof *r->all);
	if (!r->levels || !r->all)
		return mk_error_set(MK_ENOMEM, "out of memory");
	for (size_t l = 0; l < j->nout; l++) {
		mk_prune_level *lv = &r->levels[l];
		*lv = (mk_prune_level){.target = o->gumbel ? NAN : o->levels[l],
				       .output = o->outputs[l], .heads = r->all + l * (size_t)j->heads,
				       .nheads = j->heads};
		for (int64_t h = 0; h < j->heads; h++)
			lv->heads[h] = (mk_prune_head){.head = h, .r = j->res[(size_t)h * j->nout + l]};
	}
	return MK_OK;
}

int mk_prune_run(const char *input, const mk_prune_run_opts *o, mk_prune_report *out)
{
	prune_job j = {.input = input, .o = o, .nout = o->gumbel ? 1 : o->nlevels};
	int ret;

	memset(out, 0, sizeof *out);
	if ((ret = prune_read(&j)) || (ret = prune_alloc(&j)) || (ret = prune_compute(&j)))
		goto out;
	for (size_t l = 0; l < j.nout && !ret; l++)
		ret = prune_write(&j, l);
	if (!ret)
		ret = prune_report(&j, out);
out:
	if (ret)
		mk_prune_report_release(out);
	for (size_t k = 0; j.masks && k < (size_t)j.heads * j.nout; k++)
		mk_mask_free(j.masks[k]);
	free(j.masks);
	free(j.res);
	mk_tensor_release(&j.t);
	return ret;
}

void mk_prune_report_release(mk_prune_report *r)
{
	if (!r)
		return;
	free(r->levels);
	free(r->all);
	memset(r, 0, sizeof *r);
}

/* ---- the result, described once --------------------------------------------- */

static void prune_show_input(const void *rec, char *buf, size_t cap)
{
	const mk_prune_report *r = rec;
	snprintf(buf, cap, "%s: %" PRId64 " head%s, n = %" PRId64 " (%s)", r->input, r->heads,
		 r->heads == 1 ? "" : "s", r->n, r->dtype);
}

static void prune_show_mode(const void *rec, char *buf, size_t cap)
{
	const mk_prune_report *r = rec;
	if (r->gumbel)
		snprintf(buf, cap, "gumbel-sigmoid, tau = %g, seed = %" PRIu64, r->tau, r->seed);
	else if (!strcmp(r->mode, "diagonal"))
		snprintf(buf, cap, "diagonal (DAM_s)%s", r->border
			 ? ", first and last rows and columns kept" : ", no border");
	else
		snprintf(buf, cap, "entry (DAM_u)");
}

static void prune_show_toeplitz(const void *rec, char *buf, size_t cap)
{
	const mk_prune_result *r = &((const mk_prune_head *)rec)->r;
	snprintf(buf, cap, "%s", r->toeplitz ? "yes" : r->toeplitz_interior ? "interior" : "no");
}

static bool prune_has_diagonals(const void *rec)
{
	return ((const mk_prune_head *)rec)->r.diagonals >= 0;
}

static bool prune_is_gumbel(const void *rec)
{
	return ((const mk_prune_report *)rec)->gumbel;
}

#define PRUNE_HEAD(m, name_, type_) MK_FIELD(mk_prune_head, r.m, name_, type_)

static const mk_field prune_head_fields[] = {
	{MK_FIELD(mk_prune_head, head, "head", MK_FT_I64)},
	{PRUNE_HEAD(sparsity, "sparsity", MK_FT_REAL), .fmt = "%.6f",
	 .help = "achieved: 1 - kept / n^2"},
	{PRUNE_HEAD(kept, "kept", MK_FT_U64), .help = "cells kept"},
	{PRUNE_HEAD(diagonals, "diagonals", MK_FT_I64), .flags = MK_FF_OMIT,
	 .present = prune_has_diagonals, .help = "diagonals kept (by diagonal only)"},
	{PRUNE_HEAD(expected, "expected_sparsity", MK_FT_REAL), .label = "expected",
	 .fmt = "%.6f", .flags = MK_FF_OMIT, .help = "gumbel: 1 - the mean of sigmoid(alpha)"},
	{PRUNE_HEAD(toeplitz, "toeplitz", MK_FT_BOOL), .show = prune_show_toeplitz,
	 .help = "M[i][j] = M[i+1][j+1] everywhere (tables: yes, interior or no)"},
	{PRUNE_HEAD(toeplitz_interior, "toeplitz_interior", MK_FT_BOOL), .flags = MK_FF_NOTEXT,
	 .help = "the same on rows and columns 1..n-2"},
};
static const mk_record prune_head_record =
	MK_RECORD("prune_head", mk_prune_head, prune_head_fields);

static const mk_field prune_level_fields[] = {
	{MK_FIELD(mk_prune_level, target, "target", MK_FT_REAL), .flags = MK_FF_NOTEXT,
	 .help = "the sparsity asked for (null: gumbel)"},
	{MK_FIELD(mk_prune_level, target, "target", MK_FT_REAL), .fmt = "%g",
	 .flags = MK_FF_TEXT | MK_FF_OMIT},
	{MK_FIELD(mk_prune_level, output, "output", MK_FT_STR), .label = "wrote"},
	{MK_FIELD(mk_prune_level, heads, "heads", MK_FT_LIST), .sub = &prune_head_record,
	 .count_offset = offsetof(mk_prune_level, nheads)},
};
const mk_record mk_prune_level_record = MK_RECORD("prune_level", mk_prune_level, prune_level_fields);

static const mk_field prune_fields[] = {
	{MK_FIELD(mk_prune_report, input, "input", MK_FT_STR), .show = prune_show_input},
	{MK_FIELD(mk_prune_report, rank, "rank", MK_FT_INT), .flags = MK_FF_NOTEXT},
	{MK_FIELD(mk_prune_report, heads, "heads", MK_FT_I64), .flags = MK_FF_NOTEXT},
	{MK_FIELD(mk_prune_report, n, "n", MK_FT_I64), .flags = MK_FF_NOTEXT},
	{MK_FIELD(mk_prune_report, mode, "mode", MK_FT_STR), .show = prune_show_mode},
	{MK_FIELD(mk_prune_report, border, "border", MK_FT_BOOL), .flags = MK_FF_NOTEXT,
	 .help = "the first and last rows and columns kept"},
	{MK_FIELD(mk_prune_report, tau, "tau", MK_FT_REAL), .flags = MK_FF_NOTEXT | MK_FF_OMIT,
	 .present = prune_is_gumbel},
	{MK_FIELD(mk_prune_report, seed, "seed", MK_FT_U64), .flags = MK_FF_NOTEXT | MK_FF_OMIT,
	 .present = prune_is_gumbel},
	{MK_FIELD(mk_prune_report, levels, "levels", MK_FT_LIST), .flags = MK_FF_NOTEXT,
	 .sub = &mk_prune_level_record, .count_offset = offsetof(mk_prune_report, nlevels)},
};
const mk_record mk_prune_report_record = MK_RECORD("prune", mk_prune_report, prune_fields);
