/* The bf16 micro-kernels: Q, K and V rounded to bfloat16, products summed
 * in float32 by AVX512_BF16's VDPBF16PS, which multiplies pairs of bf16 and
 * adds both products to a float32 lane: 32 multiply-adds per instruction,
 * twice float32's FMA.  The weights P (float32 exponentials) are rounded to
 * bf16 before P V, as bf16 flash attention does.
 *
 * Pairs run along each product's reduced axis: K is packed as
 * [panel of 32 keys][d / 2][32 keys][2] (a pair of adjacent dimensions per
 * key), V as [chunk of 32 dimensions][keys / 2][32][2] (a pair of adjacent
 * keys per dimension); a strip of Q rows, or of P, is rounded into pairs on
 * the stack, so one 32-bit broadcast feeds the pair to 32 columns.  An odd d
 * or key count is padded with a zero.  Each register block is 12 rows by 32
 * columns in 24 zmm accumulators, as the float32 AVX-512 level. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "attn_internal.h"
#include "cpu_ukernel.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && __GNUC__ >= 10
#include <immintrin.h>

#define BF_MR 12
#define BF_NR 32
#define BF_CHUNK 512 /* keys of P rounded at a time (on the stack) */
#define BF_TARGET __attribute__((target("avx512f,avx512bw,avx512bf16"), optimize("O3")))

/* float32 to bf16, rounding to nearest even (the inputs are finite) */
static inline uint16_t bf_round(float x)
{
	uint32_t u;

	memcpy(&u, &x, sizeof u);
	u += 0x7fffu + ((u >> 16) & 1u);
	return (uint16_t)(u >> 16);
}

static inline uint32_t bf_pair(float lo, float hi)
{
	return (uint32_t)bf_round(lo) | (uint32_t)bf_round(hi) << 16;
}

static inline int64_t bf_pairs(int64_t n)
{
	return (n + 1) / 2;
}

/* acc[r][0..1] over pairs pp < np: a[r][pp] (a pair) times the panel's. */
BF_TARGET static inline void bf_block(const uint32_t *a, int64_t lda, const uint16_t *panel,
				      int64_t np, __m512 acc[BF_MR][2])
{
#pragma GCC unroll 12
	for (int r = 0; r < BF_MR; r++)
		acc[r][0] = acc[r][1] = _mm512_setzero_ps();
	for (int64_t pp = 0; pp < np; pp++) {
		__m512bh b0 = (__m512bh)_mm512_loadu_si512(panel + pp * 2 * BF_NR);
		__m512bh b1 = (__m512bh)_mm512_loadu_si512(panel + pp * 2 * BF_NR + BF_NR);
#pragma GCC unroll 12
		for (int r = 0; r < BF_MR; r++) {
			__m512bh x = (__m512bh)_mm512_set1_epi32((int)a[r * lda + pp]);
			acc[r][0] = _mm512_dpbf16_ps(acc[r][0], x, b0);
			acc[r][1] = _mm512_dpbf16_ps(acc[r][1], x, b1);
		}
	}
}

/* Rounds rows < rows of p (row stride ldp), keys j0 .. j0 + n, into pairs
 * pa[r][jj] for jj < np (np >= (n + 1) / 2); rows from rows to mr and pairs
 * past n are 0.  32 floats an instruction: one at a time cost as much as
 * the products at d = 64 (measured). */
BF_TARGET void mk_uk_bf16_round(const float *p, int64_t ldp, int64_t rows, int64_t mr, int64_t j0,
				int64_t n, uint32_t *pa, int64_t np)
{
	for (int64_t r = 0; r < mr; r++) {
		uint32_t *dst = pa + r * np;
		int64_t jj = 0;
		if (r >= rows) {
			memset(dst, 0, (size_t)np * sizeof *dst);
			continue;
		}
		const float *src = p + r * ldp + j0;
		for (; 2 * jj + 32 <= n; jj += 16) { /* 32 weights: 16 pairs in order */
			__m512bh h = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(src + 2 * jj + 16),
							 _mm512_loadu_ps(src + 2 * jj));
			_mm512_storeu_si512(dst + jj, (__m512i)h);
		}
		for (; jj < np; jj++)
			dst[jj] = bf_pair(2 * jj < n ? src[2 * jj] : 0.0f,
					  2 * jj + 1 < n ? src[2 * jj + 1] : 0.0f);
	}
}

/* s[r][c] = a_r . k_c, as the float32 levels' qk (cpu_ukernel.h), with a
 * and the packed keys in bf16. */
BF_TARGET static void bf_qk(const float *a, int64_t rows, const float *packed, int64_t cols,
			    int64_t d, const float *zero, float *s, int64_t lds)
{
	int64_t np = bf_pairs(d);
	const uint32_t *qa = (const uint32_t *)a; /* rounded: 12 rows of np pairs */
	const uint16_t *kb = (const uint16_t *)packed;
	__m512 acc[BF_MR][2];

	(void)zero;
	for (int64_t c = 0; c < cols; c += BF_NR) {
		int64_t w = cols - c < BF_NR ? cols - c : BF_NR;
		bf_block(qa, np, kb + c * np * 2, np, acc);
		for (int64_t r = 0; r < rows; r++) {
			if (w == BF_NR) {
				_mm512_storeu_ps(s + r * lds + c, acc[r][0]);
				_mm512_storeu_ps(s + r * lds + c + 16, acc[r][1]);
				continue;
			}
			float out[BF_NR];
			_mm512_storeu_ps(out, acc[r][0]);
			_mm512_storeu_ps(out + 16, acc[r][1]);
			memcpy(s + r * lds + c, out, (size_t)w * sizeof *out);
		}
	}
}

/* o[r] += sum_j p[r][j] v[j], as the float32 levels' pv, with P rounded to
 * bf16 a chunk of keys at a time and V packed in bf16. */
BF_TARGET static void bf_pv(const float *p, int64_t ldp, int64_t rows, const float *v,
			    int64_t cols, uint64_t live, int64_t d, const float *zero, float *sink, float *o)
{
	uint32_t pa[BF_MR * (BF_CHUNK / 2)];
	const uint16_t *vb = (const uint16_t *)v;
	int64_t ncp = bf_pairs(cols); /* pairs of keys in each packed chunk of V */
	__m512 acc[BF_MR][2];

	(void)live; /* not skipped: P is rounded in chunks of keys wider than a panel */
	(void)zero;
	(void)sink;
	for (int64_t j0 = 0; j0 < cols; j0 += BF_CHUNK) {
		int64_t n = cols - j0 < BF_CHUNK ? cols - j0 : BF_CHUNK, np = bf_pairs(n);
		mk_uk_bf16_round(p, ldp, rows, BF_MR, j0, n, pa, np);
		for (int64_t c = 0; c < d; c += BF_NR) {
			int64_t w = d - c < BF_NR ? d - c : BF_NR;
			const uint16_t *chunk = vb + (c / BF_NR) * ncp * 2 * BF_NR + j0 / 2 * 2 * BF_NR;
			bf_block(pa, np, chunk, np, acc);
			for (int64_t r = 0; r < rows; r++) {
				float out[BF_NR], *row = o + r * d + c;
				if (w == BF_NR) {
					_mm512_storeu_ps(row, _mm512_add_ps(_mm512_loadu_ps(row),
									    acc[r][0]));
					_mm512_storeu_ps(row + 16, _mm512_add_ps(_mm512_loadu_ps(row + 16),
										 acc[r][1]));
					continue;
				}
				_mm512_storeu_ps(out, acc[r][0]);
				_mm512_storeu_ps(out + 16, acc[r][1]);
				for (int64_t k = 0; k < w; k++)
					row[k] += out[k];
			}
		}
	}
}

static const mk_uk bf_level = {"avx512bf16", BF_MR, BF_NR, bf_qk, bf_pv, true, 1, NULL};

bool mk_uk_bf16_avx512_supported(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	       __builtin_cpu_supports("avx512bf16");
}

const mk_uk *mk_uk_bf16_avx512(void)
{
	return mk_uk_bf16_avx512_supported() ? &bf_level : NULL;
}

/* K: [panel of 32 keys][np pairs][32 keys][2], times scale; np is d / 2
 * rounded up to a multiple of pad; zero past cols and d. */
void mk_uk_bf16_pack(const float *b, int64_t cols, int64_t d, float scale, int64_t pad,
		     float *dst)
{
	int64_t np = (bf_pairs(d) + pad - 1) / pad * pad;
	uint16_t *out = (uint16_t *)dst;

	for (int64_t c0 = 0; c0 < cols; c0 += BF_NR) {
		uint16_t *panel = out + c0 * np * 2;
		for (int64_t pp = 0; pp < np; pp++)
			for (int64_t c = 0; c < BF_NR; c++) {
				bool in = c0 + c < cols;
				float lo = in && 2 * pp < d ? scale * b[(c0 + c) * d + 2 * pp] : 0.0f;
				float hi = in && 2 * pp + 1 < d ? scale * b[(c0 + c) * d + 2 * pp + 1]
								: 0.0f;
				panel[(pp * BF_NR + c) * 2] = bf_round(lo);
				panel[(pp * BF_NR + c) * 2 + 1] = bf_round(hi);
			}
	}
}

/* V: [chunk of 32 of d][ncp pairs of keys][32][2]; ncp is cols / 2 rounded
 * up to a multiple of pad; zero past d and cols. */
void mk_uk_bf16_pack_v(const float *v, int64_t cols, int64_t d, int64_t pad, float *dst)
{
	int64_t ncp = (bf_pairs(cols) + pad - 1) / pad * pad;
	uint16_t *out = (uint16_t *)dst;

	for (int64_t c0 = 0; c0 < d; c0 += BF_NR) {
		uint16_t *chunk = out + (c0 / BF_NR) * ncp * 2 * BF_NR;
		for (int64_t jj = 0; jj < ncp; jj++)
			for (int64_t c = 0; c < BF_NR; c++) {
				bool in = c0 + c < d;
				float lo = in && 2 * jj < cols ? v[2 * jj * d + c0 + c] : 0.0f;
				float hi = in && 2 * jj + 1 < cols ? v[(2 * jj + 1) * d + c0 + c] : 0.0f;
				chunk[(jj * BF_NR + c) * 2] = bf_round(lo);
				chunk[(jj * BF_NR + c) * 2 + 1] = bf_round(hi);
			}
	}
}

#else /* no AVX512_BF16 in this compiler or target */

bool mk_uk_bf16_avx512_supported(void)
{
	return false;
}

const mk_uk *mk_uk_bf16_avx512(void)
{
	return NULL;
}

void mk_uk_bf16_round(const float *p, int64_t ldp, int64_t rows, int64_t mr, int64_t j0,
		      int64_t n, uint32_t *pa, int64_t np)
{
	(void)p, (void)ldp, (void)rows, (void)mr, (void)j0, (void)n, (void)pa, (void)np;
}

void mk_uk_bf16_pack(const float *b, int64_t cols, int64_t d, float scale, int64_t pad,
		     float *dst)
{
	(void)b, (void)cols, (void)d, (void)scale, (void)pad, (void)dst;
}

void mk_uk_bf16_pack_v(const float *v, int64_t cols, int64_t d, int64_t pad, float *dst)
{
	(void)v, (void)cols, (void)d, (void)pad, (void)dst;
}
#endif
