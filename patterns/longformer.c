/*
 * Longformer (Beltagy et al., 2020): a sliding window d <= w plus a few
 * global tokens whose rows and columns are full.  The paper puts global
 * attention on task tokens; without tokens= we place g of them at random.
 */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include "mask.h"
#include "pattern.h"

enum { LF_W, LF_G, LF_SEED, LF_TOKENS };

/* Its own stream, so that the positions do not echo the keys of random. */
#define LF_TAG_POSITIONS 3

/* The global tokens as a sorted list and as a bitset. */
typedef struct lf_priv {
	int64_t *pos;
	int64_t len;
	uint64_t *bits;
	size_t words;
} lf_priv;

static void lf_release(mk_term *t)
{
	lf_priv *p = t->priv;
	if (p) {
		free(p->pos);
		free(p->bits);
		free(p);
		t->priv = NULL;
	}
}

/* Explicit tokens: checked, then read back from the bitset sorted and
 * without repeats. */
static int lf_tokens(const mk_term *t, lf_priv *p)
{
	const mk_pval *v = &t->p[LF_TOKENS];
	for (size_t k = 0; k < v->len; k++) {
		if (v->list[k] < 0 || v->list[k] >= t->n)
			return mk_error_set(MK_EINVAL, "global token %" PRId64 " of 'longformer' "
					    "is out of range for n = %" PRId64, v->list[k], t->n);
		mk_bit_set(p->bits, v->list[k]);
	}
	for (int64_t j = 0; j < t->n; j++)
		if (mk_bit_test(p->bits, j))
			p->pos[p->len++] = j;
	return MK_OK;
}

static int lf_bind(mk_term *t)
{
	lf_priv *p;
	int64_t g = t->p[LF_G].i < t->n ? t->p[LF_G].i : t->n;
	int ret = MK_OK;
	lf_release(t);
	if (t->p[LF_TOKENS].given)
		g = (int64_t)t->p[LF_TOKENS].len < t->n ? (int64_t)t->p[LF_TOKENS].len : t->n;
	p = calloc(1, sizeof *p);
	if (!p)
		return mk_error_set(MK_ENOMEM, "out of memory for 'longformer'");
	t->priv = p;
	p->words = mk_words(t->n);
	p->bits = calloc(p->words, sizeof *p->bits);
	p->pos = malloc((size_t)(g ? g : 1) * sizeof *p->pos);
	if (!p->bits || !p->pos) {
		ret = mk_error_set(MK_ENOMEM, "out of memory for 'longformer'");
		goto out;
	}
	if (t->p[LF_TOKENS].given) {
		ret = lf_tokens(t, p);
		goto out;
	}
	p->len = mk_draw_positions(t->seed, LF_TAG_POSITIONS, g, t->n, p->pos);
	for (int64_t k = 0; k < p->len; k++)
		mk_bit_set(p->bits, p->pos[k]);
out:
	if (ret)
		lf_release(t);
	return ret;
}

static void lf_row(const mk_term *t, int64_t i, uint64_t *dst)
{
	const lf_priv *p = t->priv;
	int64_t w = t->p[LF_W].i < t->n ? t->p[LF_W].i : t->n;
	if (mk_bit_test(p->bits, i)) {
		mk_bits_set_range(dst, 0, t->n);
		return;
	}
	mk_bits_set_range(dst, i - w < 0 ? 0 : i - w, i + w + 1 > t->n ? t->n : i + w + 1);
	/* Many global tokens: one OR of the bitset beats setting them one by one. */
	if ((size_t)p->len > p->words) {
		mk_bits_or(dst, p->bits, p->words);
		return;
	}
	for (int64_t k = 0; k < p->len; k++)
		mk_bit_set(dst, p->pos[k]);
}

/* The window, and the global tokens' rows and columns from one table. */
static int lf_flex(const mk_term *t, mk_flex *f)
{
	const lf_priv *p = t->priv;
	int64_t w = t->p[LF_W].i < t->n ? t->p[LF_W].i : t->n;
	long k;

	mk_flex_printf(f, "(((%s - %s).abs() <= %" PRId64 ")", f->i, f->j, w);
	if (p->len && (k = mk_flex_table_add(f, MK_FLEX_SET, t->n, p->pos, p->len)) >= 0)
		mk_flex_printf(f, " | t%ld[%s] | t%ld[%s]", k, f->ic, k, f->jc);
	mk_flex_printf(f, ")");
	return f->err;
}

static const mk_param_info lf_params[] = {
	{"w", MK_PARAM_INT, "2", "window: neighbours on each side of the diagonal"},
	{"g", MK_PARAM_INT, "2", "number of global tokens, at random positions"},
	{"seed", MK_PARAM_INT, "0", "seed of the positions (else the global --seed)"},
	{"tokens", MK_PARAM_LIST, "", "explicit global token positions (replace g)"},
};

const mk_pattern_def mk_pat_longformer = {
	.info = {
		.name = "longformer",
		.summary = "d <= w plus g global tokens at random positions, or at tokens "
			   "(Longformer)",
		.params = lf_params,
		.nparams = sizeof lf_params / sizeof lf_params[0],
	},
	.symmetric = true,
	.sweep = {.param = "w", .lo = 0, .hi = MK_SWEEP_HI_N_1, .monotone = true, .order = 6},
	.bind = lf_bind,
	.row = lf_row,
	.flex = lf_flex,
	.release = lf_release,
};
