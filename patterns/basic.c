/* The parameterless patterns: full, none, diag and causal. */
#include "config.h"
#include "mask.h"
#include "pattern.h"

static void full_row(const mk_term *t, int64_t i, uint64_t *dst)
{
	(void)i;
	mk_bits_set_range(dst, 0, t->n);
}

static void none_row(const mk_term *t, int64_t i, uint64_t *dst)
{
	(void)t;
	(void)i;
	(void)dst;
}

static void diag_row(const mk_term *t, int64_t i, uint64_t *dst)
{
	(void)t;
	mk_bit_set(dst, i);
}

static void causal_row(const mk_term *t, int64_t i, uint64_t *dst)
{
	(void)t;
	mk_bits_set_range(dst, 0, i + 1);
}

/* Column j of j <= i is every query at or after j. */
static void causal_col(const mk_term *t, int64_t j, uint64_t *dst)
{
	mk_bits_set_range(dst, j, t->n);
}

/* mask_mods (pattern.h): i >= 0 always holds, i < 0 never */
static int full_flex(const mk_term *t, mk_flex *f)
{
	(void)t;
	mk_flex_printf(f, "(%s >= 0)", f->i);
	return f->err;
}

static int none_flex(const mk_term *t, mk_flex *f)
{
	(void)t;
	mk_flex_printf(f, "(%s < 0)", f->i);
	return f->err;
}

static int diag_flex(const mk_term *t, mk_flex *f)
{
	(void)t;
	mk_flex_printf(f, "(%s == %s)", f->i, f->j);
	return f->err;
}

static int causal_flex(const mk_term *t, mk_flex *f)
{
	(void)t;
	mk_flex_printf(f, "(%s <= %s)", f->j, f->i);
	return f->err;
}

const mk_pattern_def mk_pat_full = {
	.info = {
		.name = "full",
		.summary = "every query attends to every key (dense attention)",
	},
	.symmetric = true,
	.row = full_row,
	.flex = full_flex,
};

const mk_pattern_def mk_pat_none = {
	.info = {
		.name = "none",
		.summary = "no query attends to any key (the empty mask)",
	},
	.symmetric = true,
	.row = none_row,
	.flex = none_flex,
};

const mk_pattern_def mk_pat_diag = {
	.info = {
		.name = "diag",
		.summary = "i = j: each token attends only to itself",
	},
	.symmetric = true,
	.sweep = {.param = "block", .lo = 1, .hi = MK_SWEEP_HI_N, .order = 10},
	.row = diag_row,
	.flex = diag_flex,
};

const mk_pattern_def mk_pat_causal = {
	.info = {
		.name = "causal",
		.summary = "j <= i: each query attends to itself and every earlier key",
	},
	.symmetric = false,
	.row = causal_row,
	.col = causal_col,
	.flex = causal_flex,
};
