/*
 * BigBird (Zaheer et al., 2020): a window d <= w, r random keys per query
 * and the first g tokens global (full rows and columns).  The random keys
 * come from the same streams as the `random` pattern, so that with one seed
 * bigbird(w, r = 2K, g) is exactly local(w) + random(size = K) + global(g).
 */
#include "config.h"
#include <inttypes.h>
#include <assert.h>
#include "mask.h"
#include "pattern.h"

enum { BB_W, BB_R, BB_G, BB_SEED };

/* The stream of per-row random keys, shared with `random` (random.c). */
#define BB_TAG_ROWS 1

static int64_t bb_clip(const mk_term *t, int k)
{
	return t->p[k].i < t->n ? t->p[k].i : t->n;
}

static void bb_release(mk_term *t)
{
	mk_randcols_free(t->priv);
	t->priv = NULL;
}

/* Nothing to check; an index from an earlier bind (another n) is dropped. */
static int bb_bind(mk_term *t)
{
	bb_release(t);
	return MK_OK;
}

static void bb_row(const mk_term *t, int64_t i, uint64_t *dst)
{
	int64_t w = bb_clip(t, BB_W), g = bb_clip(t, BB_G);
	if (i < g) {
		mk_bits_set_range(dst, 0, t->n);
		return;
	}
	/* The draw needs dst still zero (it is its own membership set). */
	mk_draw_row(t->seed, BB_TAG_ROWS, i, bb_clip(t, BB_R), t->n, dst);
	mk_bits_set_range(dst, i - w < 0 ? 0 : i - w, i + w + 1 > t->n ? t->n : i + w + 1);
	mk_bits_set_range(dst, 0, g);
}

static int bb_prepare_cols(mk_term *t, uint64_t max_memory)
{
	mk_randcols *rc;
	int ret;
	bb_release(t);
	if (bb_clip(t, BB_R) >= t->n) /* full rows: col() needs no index */
		return MK_OK;
	ret = mk_randcols_build(&rc, t->seed, BB_TAG_ROWS, bb_clip(t, BB_R), t->n,
				max_memory);
	if (ret == MK_OK)
		t->priv = rc;
	return ret;
}

/* Column j: the window, every global query, and the queries that drew j;
 * a global key's column is full. */
static void bb_col(const mk_term *t, int64_t j, uint64_t *dst)
{
	int64_t w = bb_clip(t, BB_W), g = bb_clip(t, BB_G);
	if (j < g || bb_clip(t, BB_R) >= t->n) {
		mk_bits_set_range(dst, 0, t->n);
		return;
	}
	assert(t->priv && "prepare_cols must come before col");
	mk_randcols_col(t->priv, j, dst);
	mk_bits_set_range(dst, j - w < 0 ? 0 : j - w, j + w + 1 > t->n ? t->n : j + w + 1);
	mk_bits_set_range(dst, 0, g);
}

/* Global rows and columns, the window, and each row's r keys as a table
 * (drawn for every row, the global ones too: those are full anyway). */
static int bb_flex(const mk_term *t, mk_flex *f)
{
	int64_t w = bb_clip(t, BB_W), g = bb_clip(t, BB_G), r = bb_clip(t, BB_R);

	if (r >= t->n) {
		mk_flex_printf(f, "(%s >= 0)", f->i);
		return f->err;
	}
	mk_flex_printf(f, "((%s < %" PRId64 ") | (%s < %" PRId64 ") | ((%s - %s).abs() <= %" PRId64
		       ")", f->i, g, f->j, g, f->i, f->j, w);
	if (r > 0) {
		mk_flex_printf(f, " | ");
		mk_flex_draws(f, t, BB_TAG_ROWS, r);
	}
	mk_flex_printf(f, ")");
	return f->err;
}

static const mk_param_info bb_params[] = {
	{"w", MK_PARAM_INT, "1", "window: neighbours on each side of the diagonal"},
	{"r", MK_PARAM_INT, "2", "random keys per query"},
	{"g", MK_PARAM_INT, "2", "number of global tokens, the first g"},
	{"seed", MK_PARAM_INT, "0", "seed of the random keys (else the global --seed)"},
};

const mk_pattern_def mk_pat_bigbird = {
	.info = {
		.name = "bigbird",
		.summary = "d <= w, r random keys per query, and the first g tokens global "
			   "(BigBird)",
		.params = bb_params,
		.nparams = sizeof bb_params / sizeof bb_params[0],
	},
	.symmetric = false,
	.sweep = {.param = "w", .lo = 0, .hi = MK_SWEEP_HI_N_1, .monotone = true, .blocked = true,
		   .order = 5},
	.bind = bb_bind,
	.row = bb_row,
	.flex = bb_flex,
	.col = bb_col,
	.prepare_cols = bb_prepare_cols,
	.release = bb_release,
};
