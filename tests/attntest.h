/* What the attention engine's unit tests share (check_attn.c,
 * check_attn_api.c): inputs drawn from a fixed generator, masks from
 * expressions, layouts, the CPU backend and the normalisations named. */
#ifndef MK_ATTNTEST_H
#define MK_ATTNTEST_H

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include "maskkit.h"
#include "attn_backend.h"

/* Uniform on [-sqrt 3, sqrt 3] (variance 1) from a 64-bit LCG. */
static inline float test_value(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return (float)(sqrt(3.0) * (2.0 * ((double)(*s >> 11) + 0.5) / 9007199254740992.0 - 1.0));
}

static inline void *xcalloc(size_t count, size_t size)
{
	void *p = calloc(count ? count : 1, size);
	ck_assert_ptr_nonnull(p);
	return p;
}

/* Q, K, V (variance 1) and O (a sentinel, so unwritten cells show),
 * all in one allocation that q owns. */
typedef struct tdata {
	mk_attn_shape s;
	size_t len;
	float *q, *k, *v, *o;
} tdata;

static inline tdata tdata_new(int64_t batch, int64_t heads, int64_t n, int64_t d, uint64_t seed)
{
	tdata t = {.s = {batch, heads, n, d}, .len = (size_t)(batch * heads * n * d)};
	t.q = xcalloc(4 * t.len, sizeof *t.q);
	t.k = t.q + t.len;
	t.v = t.k + t.len;
	t.o = t.v + t.len;
	for (size_t i = 0; i < 3 * t.len; i++)
		t.q[i] = test_value(&seed);
	return t;
}

static inline mk_mask *build(const char *text, int64_t n, uint64_t seed)
{
	mk_expr *e;
	mk_mask *m;
	mk_bind_opts o = {.n = n, .seed = seed};
	ck_assert_msg(mk_expr_parse(text, &e) == MK_OK, "%s: %s", text, mk_error());
	ck_assert_msg(mk_expr_bind(e, &o) == MK_OK, "%s: %s", text, mk_error());
	ck_assert_int_eq(mk_expr_to_mask(e, &m), MK_OK);
	mk_expr_free(e);
	return m;
}

static inline mk_attn_layout *layout(const mk_mask *m, int64_t tile)
{
	mk_attn_layout *l = NULL;
	ck_assert_msg(mk_attn_layout_new(m, tile, 0, &l) == MK_OK, "layout: %s", mk_error());
	ck_assert_ptr_nonnull(l);
	return l;
}

static inline const mk_attn_backend *cpu(void)
{
	const mk_attn_backend *b = mk_attn_backend_get("cpu");
	ck_assert_msg(b != NULL, "no cpu backend: %s", mk_error());
	return b;
}

/* The kernels are run under the first NNORMS; all are canonical spellings. */
static const struct ncase {
	const char *text;
	mk_norm norm;
} ncases[] = {
	{"softmax", {.kind = MK_NORM_SOFTMAX}},
	{"dnas", {.kind = MK_NORM_DNAS}},
	{"hnas:0.3", {.kind = MK_NORM_HNAS, .u = 0.3}},
	{"sinkhorn:5", {.kind = MK_NORM_SINKHORN, .iters = 5}},
	{"hnas:0.5", {.kind = MK_NORM_HNAS, .u = 0.5}},
	{"sinkhorn:10", {.kind = MK_NORM_SINKHORN, .iters = 10}},
};
#define NNORMS 4
#define NCASES_NORM ((int)(sizeof ncases / sizeof ncases[0]))

#endif
