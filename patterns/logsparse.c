/*
 * LogSparse (Li et al., 2019): each token attends to itself and to tokens at
 * power-of-two distances, so O(log n) keys per query.
 */
#include "config.h"
#include "mask.h"
#include "pattern.h"

enum { LOGSPARSE_CAUSAL };

static void logsparse_row(const mk_term *t, int64_t i, uint64_t *dst)
{
	bool causal = t->p[LOGSPARSE_CAUSAL].i != 0;
	mk_bit_set(dst, i);
	for (int64_t p = 1; p < t->n; p <<= 1) {
		if (i - p >= 0)
			mk_bit_set(dst, i - p);
		if (!causal && i + p < t->n)
			mk_bit_set(dst, i + p);
	}
}

/* Without causal the mask is symmetric; with it, column j is j + {0, 2^k}. */
static void logsparse_col(const mk_term *t, int64_t j, uint64_t *dst)
{
	if (!t->p[LOGSPARSE_CAUSAL].i) {
		logsparse_row(t, j, dst);
		return;
	}
	mk_bit_set(dst, j);
	for (int64_t p = 1; j + p < t->n; p <<= 1)
		mk_bit_set(dst, j + p);
}

static int logsparse_bind(mk_term *t)
{
	t->symmetric = !t->p[LOGSPARSE_CAUSAL].i;
	return MK_OK;
}

/* d & (d - 1) == 0: d = 0 or a power of two */
static int logsparse_flex(const mk_term *t, mk_flex *f)
{
	mk_flex_printf(f, "((((%s - %s).abs() & ((%s - %s).abs() - 1)) == 0)", f->i, f->j, f->i,
		       f->j);
	if (t->p[LOGSPARSE_CAUSAL].i)
		mk_flex_printf(f, " & (%s <= %s)", f->j, f->i);
	mk_flex_printf(f, ")");
	return f->err;
}

static const mk_param_info logsparse_params[] = {
	{"causal", MK_PARAM_BOOL, "0", "keep only keys at or before the query (j <= i)"},
};

const mk_pattern_def mk_pat_logsparse = {
	.info = {
		.name = "logsparse",
		.summary = "d = 0 or d a power of two (1, 2, 4, ...): O(log n) keys per query "
			   "(LogSparse)",
		.params = logsparse_params,
		.nparams = sizeof logsparse_params / sizeof logsparse_params[0],
	},
	.symmetric = false, /* only without causal */
	.sweep = {.param = "block", .lo = 1, .hi = MK_SWEEP_HI_N, .order = 4},
	.bind = logsparse_bind,
	.row = logsparse_row,
	.flex = logsparse_flex,
	.col = logsparse_col,
};
