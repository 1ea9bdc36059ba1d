/*
 * Segment patterns: `prefix` (a prefix-LM: a bidirectional prefix, causal
 * after it) and `document` (packed sequences of a ragged batch: tokens
 * attend within their own document only).
 */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include "mask.h"
#include "pattern.h"

enum { PREFIX_P };
enum { DOCUMENT_LENGTHS, DOCUMENT_CAUSAL };

/* ---- prefix ---- */

static int prefix_bind(mk_term *t)
{
	if (t->p[PREFIX_P].i < 0)
		return mk_error_set(MK_EINVAL, "parameter 'p' of 'prefix' must be non-negative, "
				    "got %" PRId64, t->p[PREFIX_P].i);
	return MK_OK;
}

/* j < p or j <= i */
static void prefix_row(const mk_term *t, int64_t i, uint64_t *dst)
{
	int64_t p = t->p[PREFIX_P].i, hi = i + 1 > p ? i + 1 : p;
	mk_bits_set_range(dst, 0, hi < t->n ? hi : t->n);
}

/* A prefix key is seen by every query, a later key by the queries from it on. */
static void prefix_col(const mk_term *t, int64_t j, uint64_t *dst)
{
	mk_bits_set_range(dst, j < t->p[PREFIX_P].i ? 0 : j, t->n);
}

/* ---- document ---- */

/* bind keeps the documents' starts: start[k] for k < ndocs, then the end of
 * the last one (positions from there on belong to no document: padding). */
typedef struct docs {
	int64_t ndocs;
	int64_t start[];
} docs;

static void document_release(mk_term *t)
{
	free(t->priv);
	t->priv = NULL;
}

static int document_bind(mk_term *t)
{
	const mk_pval *v = &t->p[DOCUMENT_LENGTHS];
	docs *d;
	int64_t end = 0;

	document_release(t);
	if (v->len == 0)
		return mk_error_set(MK_EINVAL, "'document' needs lengths=L1,L2,...: the documents' "
				    "lengths in tokens, in order");
	d = malloc(sizeof *d + (v->len + 1) * sizeof d->start[0]);
	if (!d)
		return mk_error_set(MK_ENOMEM, "out of memory");
	for (size_t k = 0; k < v->len; k++) {
		if (v->list[k] < 1 || v->list[k] > t->n - end) {
			free(d);
			if (v->list[k] < 1)
				return mk_error_set(MK_EINVAL, "length %zu of 'document' must be at "
						    "least 1, got %" PRId64, k + 1, v->list[k]);
			return mk_error_set(MK_EINVAL, "the lengths of 'document' add up to more "
					    "than the %" PRId64 " positions", t->n);
		}
		d->start[k] = end;
		end += v->list[k];
	}
	d->ndocs = (int64_t)v->len;
	d->start[v->len] = end;
	t->priv = d;
	t->symmetric = t->p[DOCUMENT_CAUSAL].i == 0;
	return MK_OK;
}

/* The document holding position i, or -1 past the last one. */
static int64_t document_of(const docs *d, int64_t i)
{
	int64_t lo = 0, hi = d->ndocs;

	if (i >= d->start[d->ndocs])
		return -1;
	while (hi - lo > 1) { /* start[lo] <= i < start[hi] */
		int64_t mid = lo + (hi - lo) / 2;
		if (d->start[mid] <= i)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static void document_row(const mk_term *t, int64_t i, uint64_t *dst)
{
	const docs *d = t->priv;
	int64_t k = document_of(d, i);

	if (k >= 0)
		mk_bits_set_range(dst, d->start[k], t->p[DOCUMENT_CAUSAL].i ? i + 1 : d->start[k + 1]);
}

/* Causal: key j is seen by the queries of its document from j on. */
static void document_col(const mk_term *t, int64_t j, uint64_t *dst)
{
	const docs *d = t->priv;
	int64_t k = document_of(d, j);

	if (k >= 0)
		mk_bits_set_range(dst, t->p[DOCUMENT_CAUSAL].i ? j : d->start[k], d->start[k + 1]);
}

/* ---- mask_mods (pattern.h) ---- */

static int prefix_flex(const mk_term *t, mk_flex *f)
{
	mk_flex_printf(f, "((%s < %" PRId64 ") | (%s <= %s))", f->j, t->p[PREFIX_P].i, f->j,
		       f->i);
	return f->err;
}

/* The documents' ids from their lengths (-1: padding past their sum). */
static int document_flex(const mk_term *t, mk_flex *f)
{
	const mk_pval *v = &t->p[DOCUMENT_LENGTHS];
	long k = mk_flex_table_add(f, MK_FLEX_SEGMENTS, t->n, v->list, (int64_t)v->len);

	if (k < 0)
		return f->err;
	mk_flex_printf(f, "((t%ld[%s] == t%ld[%s]) & (t%ld[%s] >= 0)", k, f->ic, k, f->jc, k, f->ic);
	if (t->p[DOCUMENT_CAUSAL].i)
		mk_flex_printf(f, " & (%s <= %s)", f->j, f->i);
	mk_flex_printf(f, ")");
	return f->err;
}

static const mk_param_info prefix_params[] = {
	{"p", MK_PARAM_INT, "0", "length of the bidirectional prefix"},
};

static const mk_param_info document_params[] = {
	{"lengths", MK_PARAM_LIST, NULL, "the documents' lengths in order; positions past "
					 "their sum are padding (empty rows)"},
	{"causal", MK_PARAM_BOOL, "0", "keep only keys at or before the query (j <= i)"},
};

const mk_pattern_def mk_pat_prefix = {
	.info = {
		.name = "prefix",
		.summary = "j < p or j <= i: a bidirectional prefix of p tokens, causal after it "
			   "(prefix-LM)",
		.shorthand = "p",
		.params = prefix_params,
		.nparams = sizeof prefix_params / sizeof prefix_params[0],
	},
	.symmetric = false,
	.bind = prefix_bind,
	.row = prefix_row,
	.flex = prefix_flex,
	.col = prefix_col,
};

const mk_pattern_def mk_pat_document = {
	.info = {
		.name = "document",
		.summary = "i and j in the same document: packed sequences of a ragged batch",
		.params = document_params,
		.nparams = sizeof document_params / sizeof document_params[0],
	},
	.symmetric = false,
	.bind = document_bind,
	.row = document_row,
	.flex = document_flex,
	.col = document_col,
	.release = document_release,
};
