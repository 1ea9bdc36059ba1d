/* The attention micro-kernels, written once and instantiated per vector
 * level by cpu_ukernel.c, which defines before including this file:
 *   UK_NAME(x)  the level's name for x (uk_qk_avx2, ...)
 *   UK_VW       floats per vector (4 SSE2, 8 AVX2, 16 AVX-512)
 *   UK_MR       rows per register block
 *   UK_TARGET   the function attributes of the level
 * A register block is UK_MR rows by two vectors: its 2 UK_MR accumulators,
 * two loaded vectors and a broadcast fit the level's registers (16 ymm:
 * 6 x 2 + 3; 32 zmm: 12 x 2 + 3), so each loaded vector feeds UK_MR fused
 * multiply-adds and each broadcast two. */

typedef float UK_NAME(vf) __attribute__((vector_size(UK_VW * 4), aligned(4)));

#define UK_NR (2 * UK_VW)

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

/* One panel of UK_NR packed columns against UK_MR rows of a, over d: the
 * products a_r . b_c into out[r][c] (UK_MR rows of stride ld). */
UK_TARGET static inline void UK_NAME(qk_block)(const float *const *a, const float *panel,
					       int64_t d, float *out, int64_t ld)
{
	UK_NAME(vf) acc[UK_MR][2];

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

/* o[r][0 .. UK_NR) += sum_j p[r][j] v[j][..] over j < cols for UK_MR rows,
 * v a panel of cols rows of UK_NR. */
UK_TARGET static inline void UK_NAME(pv_block)(const float *const *p, const float *v,
					       int64_t cols, float *const *o)
{
	UK_NAME(vf) acc[UK_MR][2];

#pragma GCC unroll 16
	for (int r = 0; r < UK_MR; r++)
		acc[r][0] = acc[r][1] = (UK_NAME(vf)){0};
	for (int64_t j = 0; j < cols; j++) {
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

/* o[r] += sum_j p[r][j] v[j] for rows r < rows (at most UK_MR): p has row
 * stride ldp, v is cols rows packed by mk_uk_pack_v, o is rows x d. */
UK_TARGET static void UK_NAME(pv)(const float *p, int64_t ldp, int64_t rows, const float *v,
				  int64_t cols, int64_t d, const float *zero, float *sink,
				  float *o)
{
	const float *pr[UK_MR];
	float *orow[UK_MR], tail[UK_MR * UK_NR];

	for (int r = 0; r < UK_MR; r++) { /* missing rows: zero weights into a sink */
		pr[r] = r < rows ? p + r * ldp : zero;
		orow[r] = r < rows ? o + r * d : sink;
	}
	for (int64_t c = 0; c < d; c += UK_NR) {
		float *oc[UK_MR];
		int64_t w = d - c < UK_NR ? d - c : UK_NR;
		for (int r = 0; r < UK_MR; r++)
			oc[r] = w == UK_NR ? orow[r] + c : tail + r * UK_NR;
		if (w < UK_NR)
			memset(tail, 0, sizeof tail);
		UK_NAME(pv_block)(pr, v + c * cols, cols, oc);
		for (int64_t r = 0; r < rows && w < UK_NR; r++) /* d's last, narrower columns */
			for (int64_t k = 0; k < w; k++)
				orow[r][c + k] += tail[r * UK_NR + k];
	}
}

#undef UK_NR
#undef UK_PREFETCH
#undef UK_AHEAD
#undef UK_BCAST
