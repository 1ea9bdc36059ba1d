/* The attention micro-kernels, written once and instantiated per vector
 * level by cpu_ukernel.c, which defines before including this file:
 *   UK_NAME(x)  the level's name for x (uk_qk_avx2, ...)
 *   UK_VW       floats per vector (4 SSE2, 8 AVX2, 16 AVX-512)
 *   UK_MR       rows per register block
 *   UK_TARGET   the function attributes of the level
 *   UK_SMALL(x) (optional) the name of x with a smaller block, UK_SMALL_MR
 *               rows, instantiated before: strips of at most UK_SMALL_MR
 *               rows go to it rather than to a block mostly of zero rows
 * A register block is UK_MR rows by two vectors: its 2 UK_MR accumulators,
 * two loaded vectors and a broadcast fit the level's registers (16 ymm:
 * 6 x 2 + 3; 32 zmm: 12 x 2 + 3), so each loaded vector feeds UK_MR fused
 * multiply-adds and each broadcast two. */

typedef float UK_NAME(vf) __attribute__((vector_size(UK_VW * 4), aligned(4)));
typedef int32_t UK_NAME(vi) __attribute__((vector_size(UK_VW * 4), aligned(4)));
typedef uint32_t UK_NAME(vu) __attribute__((vector_size(UK_VW * 4), aligned(4)));

#define UK_NR (2 * UK_VW)
#define UK_LANES ((uint32_t)-1 >> (32 - UK_VW)) /* a bit per lane */

/* Rows of a packed panel ahead of the one read that are prefetched: the
 * panels stream from L2 (a key block's K and V are 256 KiB), and without it
 * a fifth of qk's samples sat on the panel's loads (perf annotate, AVX-512
 * on an Ice Lake Xeon); 8 rows (1 KiB there) gained 2-4 % alone. */
#define UK_PREFETCH 8
/* The address rows rows past x: integer arithmetic, since past the last
 * panel it points beyond the buffer (harmless to a prefetch) */
#define UK_AHEAD(x, rows) \
	((const void *)((uintptr_t)(x) + (uintptr_t)(rows) * UK_NR * sizeof(float)))

/* x in every lane: x - 0 is x for every x (where 0 + x is not, for -0),
 * so this folds to one broadcast */
#define UK_BCAST(x) ((x) - (UK_NAME(vf)){0})

/* The products a_r . b_c of one panel of UK_NR packed columns against
 * UK_MR rows of a, over d, into acc (inlined: the accumulators stay in
 * registers). */
UK_TARGET static inline __attribute__((always_inline)) void
UK_NAME(qk_acc)(const float *const *a, const float *panel, int64_t d, UK_NAME(vf) acc[UK_MR][2])
{
#pragma GCC unroll 16
	for (int r = 0; r < UK_MR; r++)
		acc[r][0] = acc[r][1] = (UK_NAME(vf)){0};
	for (int64_t p = 0; p < d; p++) {
		UK_NAME(vf) b0 = *(const UK_NAME(vf) *)(panel + p * UK_NR);
		UK_NAME(vf) b1 = *(const UK_NAME(vf) *)(panel + p * UK_NR + UK_VW);
		__builtin_prefetch(UK_AHEAD(panel, p + UK_PREFETCH));
		__builtin_prefetch(UK_AHEAD(panel + UK_VW, p + UK_PREFETCH));
#pragma GCC unroll 16
		for (int r = 0; r < UK_MR; r++) {
			UK_NAME(vf) x = UK_BCAST(a[r][p]);
			acc[r][0] += x * b0;
			acc[r][1] += x * b1;
		}
	}
}

/* qk_acc's products into out[r][c] (UK_MR rows of stride ld). */
UK_TARGET static inline void UK_NAME(qk_block)(const float *const *a, const float *panel,
					       int64_t d, float *out, int64_t ld)
{
	UK_NAME(vf) acc[UK_MR][2];

	UK_NAME(qk_acc)(a, panel, d, acc);
#pragma GCC unroll 16
	for (int r = 0; r < UK_MR; r++) {
		*(UK_NAME(vf) *)(out + r * ld) = acc[r][0];
		*(UK_NAME(vf) *)(out + r * ld + UK_VW) = acc[r][1];
	}
}

/* s[r][c] = a_r . b_c for rows r < rows (at most UK_MR) and the cols
 * columns packed (and scaled) by mk_uk_pack; s has row stride lds.  Whole
 * blocks are stored in place, the others through out. */
UK_TARGET static void UK_NAME(qk)(const float *a, int64_t rows, const float *packed,
				  int64_t cols, int64_t d, const float *zero, float *s,
				  int64_t lds)
{
	const float *ar[UK_MR];
	float out[UK_MR * UK_NR];

#ifdef UK_SMALL
	if (rows <= UK_SMALL_MR) {
		UK_SMALL(qk)(a, rows, packed, cols, d, zero, s, lds);
		return;
	}
#endif
	for (int r = 0; r < UK_MR; r++) /* missing rows read zeros, and are not stored */
		ar[r] = r < rows ? a + r * d : zero;
	for (int64_t c = 0; c < cols; c += UK_NR) {
		int64_t w = cols - c < UK_NR ? cols - c : UK_NR;
		if (w == UK_NR && rows == UK_MR) {
			UK_NAME(qk_block)(ar, packed + c * d, d, s + c, lds);
			continue;
		}
		UK_NAME(qk_block)(ar, packed + c * d, d, out, UK_NR);
		for (int64_t r = 0; r < rows; r++)
			memcpy(s + r * lds + c, out + r * UK_NR, (size_t)w * sizeof *s);
	}
}

/* o[r][0 .. UK_NR) += sum_j p[r][j] v[j][..] over j0 <= j < j1 for UK_MR
 * rows, v a panel of rows of UK_NR. */
UK_TARGET static inline void UK_NAME(pv_block)(const float *const *p, const float *v,
					       int64_t j0, int64_t j1, float *const *o)
{
	UK_NAME(vf) acc[UK_MR][2];

#pragma GCC unroll 16
	for (int r = 0; r < UK_MR; r++)
		acc[r][0] = acc[r][1] = (UK_NAME(vf)){0};
	for (int64_t j = j0; j < j1; j++) {
		UK_NAME(vf) v0 = *(const UK_NAME(vf) *)(v + j * UK_NR);
		UK_NAME(vf) v1 = *(const UK_NAME(vf) *)(v + j * UK_NR + UK_VW);
		__builtin_prefetch(UK_AHEAD(v, j + UK_PREFETCH));
		__builtin_prefetch(UK_AHEAD(v + UK_VW, j + UK_PREFETCH));
#pragma GCC unroll 16
		for (int r = 0; r < UK_MR; r++) {
			UK_NAME(vf) x = UK_BCAST(p[r][j]);
			acc[r][0] += x * v0;
			acc[r][1] += x * v1;
		}
	}
#pragma GCC unroll 16
	for (int r = 0; r < UK_MR; r++) {
		*(UK_NAME(vf) *)o[r] += acc[r][0];
		*(UK_NAME(vf) *)(o[r] + UK_VW) += acc[r][1];
	}
}

/* Whether key panel k (keys k UK_NR ..) is in live (panels past 63 are). */
static inline bool UK_NAME(panel_live)(uint64_t live, int64_t k)
{
	return k >= 64 || (live >> k & 1);
}

/* o[r] += sum_j p[r][j] v[j] for rows r < rows (at most UK_MR): p has row
 * stride ldp, v is cols rows packed by mk_uk_pack_v, o is rows x d; the
 * runs of live key panels only (the others' weights are 0). */
UK_TARGET static void UK_NAME(pv)(const float *p, int64_t ldp, int64_t rows, const float *v,
				  int64_t cols, uint64_t live, int64_t d, const float *zero,
				  float *sink, float *o)
{
	const float *pr[UK_MR];
	float *orow[UK_MR], tail[UK_MR * UK_NR];

#ifdef UK_SMALL
	if (rows <= UK_SMALL_MR) {
		UK_SMALL(pv)(p, ldp, rows, v, cols, live, d, zero, sink, o);
		return;
	}
#endif
	for (int r = 0; r < UK_MR; r++) { /* missing rows: zero weights into a sink */
		pr[r] = r < rows ? p + r * ldp : zero;
		orow[r] = r < rows ? o + r * d : sink;
	}
	if (d % UK_NR)
		memset(tail, 0, sizeof tail);
	for (int64_t k0 = 0, k1; k0 * UK_NR < cols; k0 = k1) {
		bool on = UK_NAME(panel_live)(live, k0);
		for (k1 = k0 + 1; k1 * UK_NR < cols && UK_NAME(panel_live)(live, k1) == on;)
			k1++;
		for (int64_t c = 0; on && c < d; c += UK_NR) {
			float *oc[UK_MR];
			for (int r = 0; r < UK_MR; r++)
				oc[r] = d - c >= UK_NR ? orow[r] + c : tail + r * UK_NR;
			UK_NAME(pv_block)(pr, v + c * cols, k0 * UK_NR,
					  k1 * UK_NR < cols ? k1 * UK_NR : cols, oc);
		}
	}
	for (int64_t r = 0; r < rows && d % UK_NR; r++) /* d's last, narrower columns */
		for (int64_t k = 0; k < d % UK_NR; k++)
			orow[r][d - d % UK_NR + k] += tail[r * UK_NR + k];
}

/* The polynomial of 2^f for |f| <= 1/2 (cpu_rows.c's tiles_exp: fitted for
 * relative error, 1.9e-7 at most, and exactly 1 at 0). */
UK_TARGET static inline UK_NAME(vf) UK_NAME(exp2_poly)(UK_NAME(vf) f)
{
	UK_NAME(vf) y = UK_BCAST(1.326302532e-3f);

	y = y * f + 9.671429172e-3f;
	y = y * f + 5.550738797e-2f;
	y = y * f + 2.402224392e-1f;
	y = y * f + 6.931470037e-1f;
	return y * f + 1.0f;
}

#if UK_VW == 16
/* exp(x) for x <= 0 in the lanes whose bit in keep is set, 0 in the others:
 * x = (n + f) ln 2 with n an integer and |f| <= 1/2, 2^f from the
 * polynomial, times 2^n by vscalefps; 0 below 2^-125 (so exp(-inf) = 0),
 * NaN stays NaN (an unordered compare keeps its lane).  12 instructions
 * where tiles_exp's bit tricks, portable, take 20. */
UK_TARGET static inline UK_NAME(vf) UK_NAME(exp_keep)(UK_NAME(vf) x, uint32_t keep)
{
	UK_NAME(vf) t = x * 1.44269504088896341f, r = t + 12582912.0f, n = r - 12582912.0f;
	__mmask16 live = _mm512_cmp_ps_mask((__m512)t, _mm512_set1_ps(-125.0f), _CMP_NLE_UQ);

	return (UK_NAME(vf))_mm512_maskz_scalef_ps(live & (__mmask16)keep,
						   (__m512)UK_NAME(exp2_poly)(t - n), (__m512)n);
}
#else
/* exp(x) for x <= 0 in the lanes whose bit in keep is set (bit k for lane
 * k), 0 in the others: cpu_rows.c's tiles_exp on vectors, 2^n made from
 * exponent bits; 0 below 2^-125 (so exp(-inf) = 0) and NaN stays NaN.  The
 * casts between vf and vi reinterpret bits; a comparison gives -1 or 0 per
 * lane. */
UK_TARGET static inline UK_NAME(vf) UK_NAME(exp_keep)(UK_NAME(vf) x, uint32_t keep)
{
	const UK_NAME(vf) lo = UK_BCAST(-100.0f), magic = UK_BCAST(12582912.0f);
	UK_NAME(vi) under = x < lo, tiny, lane, bits;
	UK_NAME(vf) xc = (UK_NAME(vf))((under & (UK_NAME(vi))lo) | (~under & (UK_NAME(vi))x));
	UK_NAME(vf) t = xc * 1.44269504088896341f, r = t + magic, nf = r - magic, e;

	tiny = nf > -126.0f;
	/* r's low mantissa bits hold n: n + 127 in the exponent field is 2^n */
	e = UK_NAME(exp2_poly)(t - nf) *
	    (UK_NAME(vf))(tiny & (UK_NAME(vi))(((UK_NAME(vu))r - (0x4b400000u - 127u)) << 23));
	if (keep == (uint32_t)-1 >> (32 - UK_VW))
		return e;
	bits = (UK_NAME(vi)){0} + (int32_t)keep;
	for (int k = 0; k < UK_VW; k++)
		lane[k] = 1 << k;
	return (UK_NAME(vf))((UK_NAME(vi))e & ((bits & lane) != 0));
}
#endif

/* qk_block, then each score s of row r becomes exp(s - m[r]) in keep[r]'s
 * columns (bit c for column c) and 0 elsewhere, its sum added to sum[r]:
 * softmax's exponentials from the row bound taken while the block is in
 * registers, not in another pass over the stored scores.  Not inlined: in
 * the loop over panels the exponential's constants were hoisted out of it
 * and pushed the accumulators to the stack (28 % slower, measured). */
UK_TARGET __attribute__((noinline)) static void UK_NAME(qk_exp_block)(const float *const *a, const float *panel,
						   int64_t d, const float *m, const uint32_t *keep,
						   UK_NAME(vf) *sum, float *out, int64_t ld)
{
	UK_NAME(vf) acc[UK_MR][2];

	UK_NAME(qk_acc)(a, panel, d, acc);
#pragma GCC unroll 16
	for (int r = 0; r < UK_MR; r++) {
		UK_NAME(vf) mr = UK_BCAST(m[r]);
		UK_NAME(vf) e0 = UK_NAME(exp_keep)(acc[r][0] - mr, keep[r] & UK_LANES);
		UK_NAME(vf) e1 = UK_NAME(exp_keep)(acc[r][1] - mr, keep[r] >> UK_VW & UK_LANES);
		sum[r] += e0 + e1;
		*(UK_NAME(vf) *)(out + r * ld) = e0;
		*(UK_NAME(vf) *)(out + r * ld + UK_VW) = e1;
	}
}

/* The fixed-bound softmax's score block: s[r][c] = exp(a_r . b_c - m[r])
 * for rows r < rows (at most UK_MR) and the cols packed columns, 0 where
 * the mask (bits: the bit row of row 0, rows stride words apart, column c at
 * bit j0 + c; NULL: none) is clear; sums[r] += the row's sum.  A panel
 * of UK_NR columns not in live is known empty: 0 without its products. */
UK_TARGET static void UK_NAME(qk_exp)(const float *a, int64_t rows, const float *packed,
				      int64_t cols, uint64_t live, int64_t d, const float *zero,
				      const float *m, const uint64_t *bits, size_t stride,
				      int64_t j0, float *s, int64_t lds, float *sums)
{
	const float *ar[UK_MR];
	float mr[UK_MR], out[UK_MR * UK_NR];
	UK_NAME(vf) sum[UK_MR];
	uint32_t keep[UK_MR];

#ifdef UK_SMALL
	if (rows <= UK_SMALL_MR) {
		UK_SMALL(qk_exp)(a, rows, packed, cols, live, d, zero, m, bits, stride, j0, s, lds,
				 sums);
		return;
	}
#endif
	for (int r = 0; r < UK_MR; r++) { /* missing rows read zeros, keep nothing */
		ar[r] = r < rows ? a + r * d : zero;
		mr[r] = r < rows ? m[r] : 0.0f;
		sum[r] = (UK_NAME(vf)){0};
	}
	for (int64_t c = 0; c < cols; c += UK_NR) {
		int64_t w = cols - c < UK_NR ? cols - c : UK_NR;
		uint32_t cover = (uint32_t)-1 >> (32 - w); /* the panel's real columns */
		bool whole = w == UK_NR && rows == UK_MR;
		if (!UK_NAME(panel_live)(live, c / UK_NR)) { /* known empty: its weights, 0 */
			for (int64_t r = 0; r < rows; r++)
				memset(s + r * lds + c, 0, (size_t)w * sizeof *s);
			continue;
		}
		for (int64_t r = 0; r < UK_MR; r++)
			keep[r] = r >= rows ? 0u
				  : bits    ? mk_tiles_bits32(bits + (size_t)r * stride, stride,
							      j0 + c) & cover
					    : cover;
		UK_NAME(qk_exp_block)(ar, packed + c * d, d, mr, keep, sum, whole ? s + c : out,
				      whole ? lds : UK_NR);
		for (int64_t r = 0; r < rows && !whole; r++)
			memcpy(s + r * lds + c, out + r * UK_NR, (size_t)w * sizeof *s);
	}
	for (int64_t r = 0; r < rows; r++) {
		float t = 0.0f;
		for (int k = 0; k < UK_VW; k++)
			t += sum[r][k];
		sums[r] += t;
	}
}

#undef UK_NR
#undef UK_LANES
#undef UK_PREFETCH
#undef UK_AHEAD
#undef UK_BCAST
