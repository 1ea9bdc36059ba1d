/*
 * The factorised patterns of the Sparse Transformer (Child et al., 2019),
 * each as the union of its two heads:
 *   strided: d < l (the band) or d mod l = 0 (every l-th token);
 *   fixed:   the same block of l tokens, or a "summary" key, one of the last
 *            c of each block (j mod l >= l - c).
 * causal=1 keeps j <= i, the autoregressive form of the paper.
 */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include "internal.h"
#include "pattern.h"

enum { STRIDED_L, STRIDED_CAUSAL };
enum { FIXED_L, FIXED_C, FIXED_CAUSAL };

/* Bits [lo, 64) / [0, hi) of a word, 0 <= lo < 64, 0 < hi <= 64. */
static uint64_t child_from(int64_t lo)
{
	return ~(uint64_t)0 << lo;
}

static uint64_t child_below(int64_t hi)
{
	return hi >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << hi) - 1;
}

/* Keeps only bits [lo, hi) of the words of dst that [lo, hi) touches. */
static void child_clip(uint64_t *dst, int64_t lo, int64_t hi)
{
	dst[lo >> 6] &= child_from(lo & 63);
	dst[(hi - 1) >> 6] &= child_below(hi - (((hi - 1) >> 6) << 6));
}

/* ---- strided ---- */

/* l clipped to n: a longer stride means the same mask (every d < n is in
 * the band), and the clip keeps i + l from overflowing. */
static int64_t strided_l(const mk_term *t)
{
	return t->p[STRIDED_L].i < t->n ? t->p[STRIDED_L].i : t->n;
}

static void strided_release(mk_term *t)
{
	free(t->priv);
	t->priv = NULL;
}

/* For l < 64 a row has more stride bits than words, so bind keeps the
 * multiples of l as a bitset and rows shift it instead of setting bits. */
static int strided_bind(mk_term *t)
{
	int64_t l = strided_l(t);
	uint64_t *mult;
	strided_release(t);
	if (t->p[STRIDED_L].i < 1)
		return mk_error_set(MK_EINVAL, "parameter 'l' of 'strided' must be at least 1, "
				    "got %" PRId64, t->p[STRIDED_L].i);
	t->symmetric = !t->p[STRIDED_CAUSAL].i;
	if (l >= 64)
		return MK_OK;
	mult = calloc(mk_words(t->n), sizeof *mult);
	if (!mult)
		return mk_error_set(MK_ENOMEM, "out of memory for 'strided'");
	for (int64_t x = 0; x < t->n; x += l)
		mk_bit_set(mult, x);
	t->priv = mult;
	return MK_OK;
}

/* Sets the x in [lo, hi) with x mod l = r % l in dst, which is zero in the
 * words that [lo, hi) touches. */
static void strided_residue(const mk_term *t, int64_t r, int64_t lo, int64_t hi,
			    uint64_t *dst)
{
	const uint64_t *mult = t->priv;
	int64_t l = strided_l(t);
	if (lo >= hi)
		return;
	r %= l;
	if (!mult) {
		for (int64_t x = lo + ((r - lo % l) % l + l) % l; x < hi; x += l)
			mk_bit_set(dst, x);
		return;
	}
	/* The multiples shifted up by r < l < 64, carrying across words. */
	if (r == 0) {
		mk_bits_or(dst + (lo >> 6), mult + (lo >> 6),
			   (size_t)(((hi - 1) >> 6) - (lo >> 6) + 1));
	} else {
		mk_bits_or_shl(dst, mult, (size_t)(lo >> 6), (size_t)((hi - 1) >> 6) + 1,
			       (unsigned)r);
	}
	child_clip(dst, lo, hi);
}

static void strided_row(const mk_term *t, int64_t i, uint64_t *dst)
{
	int64_t l = strided_l(t);
	int64_t hi = t->p[STRIDED_CAUSAL].i ? i + 1 : t->n;
	strided_residue(t, i, 0, hi, dst);
	mk_bits_set_range(dst, i - l + 1 < 0 ? 0 : i - l + 1, i + l < hi ? i + l : hi);
}

/* Without causal the mask is symmetric; with it, column j is i >= j. */
static void strided_col(const mk_term *t, int64_t j, uint64_t *dst)
{
	int64_t l = strided_l(t);
	if (!t->p[STRIDED_CAUSAL].i) {
		strided_row(t, j, dst);
		return;
	}
	strided_residue(t, j, j, t->n, dst);
	mk_bits_set_range(dst, j, j + l < t->n ? j + l : t->n);
}

/* ---- fixed ---- */

static void fixed_release(mk_term *t)
{
	free(t->priv);
	t->priv = NULL;
}

/* The summary keys are the same for every row: bind keeps them as a bitset
 * that rows OR in, as fast as any row of density c/l can be written. */
static int fixed_bind(mk_term *t)
{
	int64_t l = t->p[FIXED_L].i, c = t->p[FIXED_C].i;
	uint64_t *sum;
	fixed_release(t);
	if (l < 1)
		return mk_error_set(MK_EINVAL, "parameter 'l' of 'fixed' must be at least 1, "
				    "got %" PRId64, l);
	if (c < 1 || c > l)
		return mk_error_set(MK_EINVAL, "parameter 'c' of 'fixed' must be between 1 and "
				    "l = %" PRId64 ", got %" PRId64, l, c);
	sum = calloc(mk_words(t->n), sizeof *sum);
	if (!sum)
		return mk_error_set(MK_ENOMEM, "out of memory for 'fixed'");
	/* Compared with room, not added to base, since l may be near INT64_MAX
	 * (base + l only runs once l < n or base = 0, so cannot overflow). */
	for (int64_t base = 0; base < t->n; base += l) {
		int64_t room = t->n - base;
		mk_bits_set_range(sum, l - c < room ? base + l - c : t->n,
				  l < room ? base + l : t->n);
	}
	t->priv = sum;
	return MK_OK;
}

/* The block of l tokens holding i: [*lo, *hi). */
static void fixed_block(const mk_term *t, int64_t i, int64_t *lo, int64_t *hi)
{
	int64_t l = t->p[FIXED_L].i;
	*lo = i - i % l;
	*hi = l < t->n - *lo ? *lo + l : t->n;
}

static void fixed_row(const mk_term *t, int64_t i, uint64_t *dst)
{
	const uint64_t *sum = t->priv;
	int64_t lo, hi;
	fixed_block(t, i, &lo, &hi);
	if (t->p[FIXED_CAUSAL].i) {
		mk_bits_or(dst, sum, (size_t)(i >> 6) + 1);
		child_clip(dst, 0, i + 1);
		hi = i + 1;
	} else {
		mk_bits_or(dst, sum, mk_words(t->n));
	}
	mk_bits_set_range(dst, lo, hi);
}

/* A summary key is seen by every query (every later one when causal);
 * any other key only by its own block. */
static void fixed_col(const mk_term *t, int64_t j, uint64_t *dst)
{
	bool causal = t->p[FIXED_CAUSAL].i != 0;
	int64_t lo, hi;
	if (mk_bit_test(t->priv, j)) {
		mk_bits_set_range(dst, causal ? j : 0, t->n);
		return;
	}
	fixed_block(t, j, &lo, &hi);
	mk_bits_set_range(dst, causal ? j : lo, hi);
}

/* ---- mask_mods (pattern.h) ---- */

static void child_causal_flex(const mk_term *t, int k, mk_flex *f)
{
	if (t->p[k].i)
		mk_flex_printf(f, " & (%s <= %s)", f->j, f->i);
	mk_flex_printf(f, ")");
}

static int strided_flex(const mk_term *t, mk_flex *f)
{
	int64_t l = strided_l(t);

	mk_flex_printf(f, "((((%s - %s).abs() < %" PRId64 ") | ((%s - %s).abs() %% %" PRId64
		       " == 0))", f->i, f->j, l, f->i, f->j, l);
	child_causal_flex(t, STRIDED_CAUSAL, f);
	return f->err;
}

/* The summary keys: j mod l >= l - c, in the last block too (bind clips its
 * range at n, which j < n already is). */
static int fixed_flex(const mk_term *t, mk_flex *f)
{
	int64_t l = t->p[FIXED_L].i, c = t->p[FIXED_C].i;

	mk_flex_printf(f, "(((%s // %" PRId64 " == %s // %" PRId64 ") | (%s %% %" PRId64
		       " >= %" PRId64 "))", f->i, l, f->j, l, f->j, l, l - c);
	child_causal_flex(t, FIXED_CAUSAL, f);
	return f->err;
}

static const mk_param_info strided_params[] = {
	{"l", MK_PARAM_INT, "4", "stride: band width and step between strided keys"},
	{"causal", MK_PARAM_BOOL, "0", "keep only keys at or before the query (j <= i)"},
};

static const mk_param_info fixed_params[] = {
	{"l", MK_PARAM_INT, "4", "block length"},
	{"c", MK_PARAM_INT, "1", "summary keys at the end of each block, 1 <= c <= l"},
	{"causal", MK_PARAM_BOOL, "0", "keep only keys at or before the query (j <= i)"},
};

const mk_pattern_def mk_pat_strided = {
	.info = {
		.name = "strided",
		.summary = "d < l or d mod l = 0: a band and every l-th key (Sparse Transformer)",
		.shorthand = "l",
		.params = strided_params,
		.nparams = sizeof strided_params / sizeof strided_params[0],
	},
	.symmetric = false, /* only without causal */
	.sweep = {.param = "l", .lo = 1, .hi = MK_SWEEP_HI_N, .order = 2},
	.bind = strided_bind,
	.row = strided_row,
	.flex = strided_flex,
	.col = strided_col,
	.release = strided_release,
};

const mk_pattern_def mk_pat_fixed = {
	.info = {
		.name = "fixed",
		.summary = "floor(i/l) = floor(j/l) or j mod l >= l - c "
			   "(Sparse Transformer, fixed)",
		.shorthand = "l",
		.params = fixed_params,
		.nparams = sizeof fixed_params / sizeof fixed_params[0],
	},
	.symmetric = false,
	.sweep = {.param = "l", .extra = ",c=1", .lo = 1, .hi = MK_SWEEP_HI_N, .order = 3},
	.bind = fixed_bind,
	.row = fixed_row,
	.flex = fixed_flex,
	.col = fixed_col,
	.release = fixed_release,
};
