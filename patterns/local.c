/*
 * Band patterns, in d = |i - j|: `local` keeps a band around the diagonal,
 * `diagonal` keeps chosen diagonals.  Both are symmetric.
 */
#include "config.h"
#include <inttypes.h>
#include "mask.h"
#include "pattern.h"

enum { LOCAL_W };
enum { DIAGONAL_OFFSETS };

static void local_row(const mk_term *t, int64_t i, uint64_t *dst)
{
	int64_t w = t->p[LOCAL_W].i;
	int64_t lo, hi;
	if (w > t->n) /* wider than the grid: clip so i + w cannot overflow */
		w = t->n;
	lo = i - w < 0 ? 0 : i - w;
	hi = i + w + 1 > t->n ? t->n : i + w + 1;
	mk_bits_set_range(dst, lo, hi);
}

static int diagonal_bind(mk_term *t)
{
	const mk_pval *v = &t->p[DIAGONAL_OFFSETS];
	for (size_t k = 0; k < v->len; k++)
		if (v->list[k] < 0)
			return mk_error_set(MK_EINVAL,
					    "offset %" PRId64 " of 'diagonal' must be non-negative "
					    "(offsets are distances |i - j|)", v->list[k]);
	return MK_OK;
}

/* Offsets at or beyond n name diagonals outside the grid: they add nothing. */
static void diagonal_row(const mk_term *t, int64_t i, uint64_t *dst)
{
	const mk_pval *v = &t->p[DIAGONAL_OFFSETS];
	for (size_t k = 0; k < v->len; k++) {
		int64_t o = v->list[k];
		if (o >= t->n)
			continue;
		if (i - o >= 0)
			mk_bit_set(dst, i - o);
		if (i + o < t->n)
			mk_bit_set(dst, i + o);
	}
}

static int local_flex(const mk_term *t, mk_flex *f)
{
	mk_flex_printf(f, "((%s - %s).abs() <= %" PRId64 ")", f->i, f->j, t->p[LOCAL_W].i);
	return f->err;
}

/* The diagonals inside the grid, or none. */
static int diagonal_flex(const mk_term *t, mk_flex *f)
{
	const mk_pval *v = &t->p[DIAGONAL_OFFSETS];
	bool any = false;

	mk_flex_printf(f, "(");
	for (size_t k = 0; k < v->len; k++) {
		if (v->list[k] >= t->n)
			continue;
		mk_flex_printf(f, "%s((%s - %s).abs() == %" PRId64 ")", any ? " | " : "", f->i, f->j,
			       v->list[k]);
		any = true;
	}
	if (!any)
		mk_flex_printf(f, "%s < 0", f->i);
	mk_flex_printf(f, ")");
	return f->err;
}

static const mk_param_info local_params[] = {
	{"w", MK_PARAM_INT, "1", "neighbours on each side of the diagonal"},
};

static const mk_param_info diagonal_params[] = {
	{"offsets", MK_PARAM_LIST, "0", "distances |i - j| of the diagonals kept"},
};

const mk_pattern_def mk_pat_local = {
	.info = {
		.name = "local",
		.summary = "d <= w: the diagonal plus w neighbours on each side",
		.shorthand = "w",
		.params = local_params,
		.nparams = sizeof local_params / sizeof local_params[0],
	},
	.symmetric = true,
	.sweep = {.param = "w", .lo = 0, .hi = MK_SWEEP_HI_N_1, .monotone = true, .order = 1},
	.row = local_row,
	.flex = local_flex,
};

const mk_pattern_def mk_pat_diagonal = {
	.info = {
		.name = "diagonal",
		.summary = "d in offsets: the diagonals at the listed distances |i - j|",
		.params = diagonal_params,
		.nparams = sizeof diagonal_params / sizeof diagonal_params[0],
	},
	.symmetric = true,
	.bind = diagonal_bind,
	.row = diagonal_row,
	.flex = diagonal_flex,
};
