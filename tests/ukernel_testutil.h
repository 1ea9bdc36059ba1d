/* Shared by the micro-kernel tests (check_ukernel.c, check_ukernel_bf16.c):
 * inputs, the shapes and normalisations every kernel is checked on, and the
 * products of one level against double loops. */
#ifndef MK_UKERNEL_TESTUTIL_H
#define MK_UKERNEL_TESTUTIL_H

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "maskkit.h"
#include "cpu_ukernel.h"

static inline uint64_t uk_seed_next(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s >> 11;
}

/* count floats uniform in [-1, 1) from seed */
static inline float *uk_randoms(size_t count, uint64_t seed)
{
	float *x = malloc((count ? count : 1) * sizeof *x);
	ck_assert_ptr_nonnull(x);
	for (size_t k = 0; k < count; k++)
		x[k] = (float)((double)uk_seed_next(&seed) / 4503599627370496.0 - 1.0);
	return x;
}

/* Shapes past one key block (512 keys, or 327 at d = 100), d not a multiple
 * of any panel, masks with global rows (split into pieces) and empty rows. */
static const struct {
	const char *expr;
	int64_t n, d;
} uk_shapes[] = {
	{"local40 + global1", 1200, 40}, {"causal", 77, 5}, {"local3 + random2", 530, 64},
	{"strided64 + global2", 1100, 24}, {"causal", 700, 100},
};
#define UK_NSHAPES ((int)(sizeof uk_shapes / sizeof *uk_shapes))

static const mk_norm uk_norms[] = {
	{.kind = MK_NORM_SOFTMAX}, {.kind = MK_NORM_DNAS},
	{.kind = MK_NORM_HNAS, .u = 0.3}, {.kind = MK_NORM_SINKHORN, .iters = 3},
};
#define UK_NNORMS (sizeof uk_norms / sizeof *uk_norms)

/* qk and pv of one level at rows x cols x d against double loops on the
 * inputs as rnd leaves them (the identity for float32, bf16's rounding for
 * the bf16 levels, whose qk takes its rows already rounded). */
static inline void uk_check_products(const mk_uk *uk, int64_t rows, int64_t cols, int64_t d,
				     float (*rnd)(float))
{
	int64_t lds = cols + 3, sz = mk_uk_packed_size(uk, cols, d);
	float *a = uk_randoms((size_t)(rows * d), 1), *b = uk_randoms((size_t)(cols * d), 2);
	float *pw = uk_randoms((size_t)(rows * lds), 3), *o = uk_randoms((size_t)(rows * d), 4);
	float *o0 = malloc((size_t)(rows * d) * sizeof *o0), *s = malloc((size_t)(rows * lds) * sizeof *s);
	float *kp = malloc((size_t)sz * sizeof *kp), *vp = malloc((size_t)sz * sizeof *vp);
	float *zero = calloc((size_t)(cols + d), sizeof *zero), *sink = malloc((size_t)d * sizeof *sink);
	const float scale = 0.375f; /* exact: scale b rounds as b would */
	int64_t np = uk->bf16 ? ((d + 1) / 2 + uk->pad - 1) / uk->pad * uk->pad : 0;
	uint32_t *ar = uk->bf16 ? malloc((size_t)(uk->mr * np) * sizeof *ar) : NULL;

	memcpy(o0, o, (size_t)(rows * d) * sizeof *o);
	for (int64_t k = 0; k < rows * lds; k++)
		s[k] = 12345.0f; /* the gaps past cols must stay untouched */
	if (ar)
		mk_uk_bf16_round(a, d, rows, uk->mr, 0, d, ar, np);
	mk_uk_pack(uk, b, cols, d, scale, kp);
	mk_uk_pack_v(uk, b, cols, d, vp);
	uk->qk(ar ? (const float *)ar : a, rows, kp, cols, d, zero, s, lds);
	uk->pv(pw, lds, rows, vp, cols, MK_UK_ALL, d, zero, sink, o);
	for (int64_t r = 0; r < rows; r++) {
		for (int64_t c = 0; c < cols; c++) {
			double want = 0.0;
			for (int64_t p = 0; p < d; p++)
				want += (double)rnd(a[r * d + p]) * rnd(scale * b[c * d + p]);
			ck_assert_msg(fabs(s[r * lds + c] - want) <= 1e-6 * (double)d,
				      "%s qk %lldx%lldx%lld: s[%lld][%lld] = %.9g, want %.9g", uk->name,
				      (long long)rows, (long long)cols, (long long)d, (long long)r,
				      (long long)c, (double)s[r * lds + c], want);
		}
		for (int64_t c = cols; c < lds; c++)
			ck_assert(s[r * lds + c] == 12345.0f);
		for (int64_t c = 0; c < d; c++) {
			double want = o0[r * d + c];
			for (int64_t j = 0; j < cols; j++)
				want += (double)rnd(pw[r * lds + j]) * rnd(b[j * d + c]);
			ck_assert_msg(fabs(o[r * d + c] - want) <= 1e-6 * (double)cols,
				      "%s pv %lldx%lldx%lld: o[%lld][%lld] = %.9g, want %.9g", uk->name,
				      (long long)rows, (long long)cols, (long long)d, (long long)r,
				      (long long)c, (double)o[r * d + c], want);
		}
	}
	free(a), free(b), free(pw), free(o), free(o0), free(s), free(kp), free(vp);
	free(zero), free(sink), free(ar);
}

#endif
