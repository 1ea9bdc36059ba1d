/* The CPU tiled kernels' products (cpu_ukernel.c); private to src/attn.
 *
 * cblas_sgemm packs both operands on every call, and cannot keep K (or V)
 * packed across the query tiles that reuse it: on the attention's skinny
 * products (256 x 512 x 64) that repacking and the lower rate cost the
 * kernels a fifth of their time.  These register-blocked micro-kernels read
 * the key side from panels packed once per pass, and V in place. */
#ifndef MK_CPU_UKERNEL_H
#define MK_CPU_UKERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A vector level's kernels: qk: s[r][c] = a_r . b_c for rows r < rows (at
 * most mr) of a (row stride d) against cols columns packed (and scaled) by
 * mk_uk_pack; pv: o[r] += sum_j p[r][j] v[j] for rows r < rows (at most mr),
 * p of row stride ldp, v the cols rows packed by mk_uk_pack_v, o rows x d;
 * live has bit k clear where every weight of key panel k (keys k nr ..
 * k nr + nr - 1) is 0, which pv may then skip (MK_UK_ALL: none known 0;
 * panels past 63 are always taken).  zero is a zeroed row of at least
 * max(cols, d) floats, sink a row of d. */
typedef struct mk_uk {
	const char *name;
	int mr, nr; /* rows per register block, columns per packed panel */
	void (*qk)(const float *a, int64_t rows, const float *packed, int64_t cols, int64_t d,
		   const float *zero, float *s, int64_t lds);
	void (*pv)(const float *p, int64_t ldp, int64_t rows, const float *v, int64_t cols,
		   uint64_t live, int64_t d, const float *zero, float *sink, float *o);
	bool bf16; /* Q, K, V and P rounded to bf16 (cpu_ukernel_bf16.c), sums float32 */
	int pad;   /* bf16: pairs per packed row rounded up to a multiple of this */
	/* qk with softmax's exponentials from the row bound fused in (NULL:
	 * qk, then mk_tiles_row_exp): s[r][c] = exp(a_r . b_c - m[r]), 0
	 * where the mask is clear (bits: row 0's bit row, rows stride words
	 * apart, column c at bit j0 + c; NULL: no mask), sums[r] += row sum;
	 * key panels not in live (as pv's) are known empty: their s is 0,
	 * not computed */
	void (*qk_exp)(const float *a, int64_t rows, const float *packed, int64_t cols,
		       uint64_t live, int64_t d, const float *zero, const float *m,
		       const uint64_t *bits, size_t stride, int64_t j0, float *s, int64_t lds,
		       float *sums);
} mk_uk;

#define MK_UK_ALL UINT64_MAX /* pv's live: every key panel */

/* The kernels the tiled kernels use: the widest level this CPU runs, or the
 * one MASKKIT_CPU_KERNEL names (avx512, avx2, portable; blas: NULL, the
 * sgemm path), or the one mk_uk_force chose.  NULL: use cblas_sgemm. */
const mk_uk *mk_uk_get(void);
/* Forces a level by name (NULL: back to the default); fails for an unknown
 * name or one this CPU cannot run.  For tests and benchmarks. */
int mk_uk_force(const char *name);
/* Whether this CPU runs the level (a name as above). */
bool mk_uk_supported(const char *name);

/* The bf16 levels' qk takes a already rounded, mr rows of pairs (d / 2
 * rounded up to a multiple of pad) as mk_uk_bf16_round makes them, rows
 * past `rows` zero.
 * The bf16 levels: AMX (cpu_ukernel_amx.c, tiles of 16 x 32 bf16) where
 * the CPU and the kernel allow it, else AVX512_BF16 (cpu_ukernel_bf16.c);
 * NULL where neither runs.  The float32 levels' contract, on Q, K, V and P
 * rounded to bf16, sums in float32.  MASKKIT_CPU_BF16=amx|avx512bf16 or
 * mk_uk_bf16_force picks one (NULL: back to the default). */
#define MK_UK_BF16_MAX_D 1024
const mk_uk *mk_uk_bf16(void);
int mk_uk_bf16_force(const char *name);
bool mk_uk_bf16_supported(const char *name);
const mk_uk *mk_uk_bf16_avx512(void);
bool mk_uk_bf16_avx512_supported(void);
const mk_uk *mk_uk_bf16_amx(void);
/* Rows < rows of p (row stride ldp), columns j0 .. j0 + n, rounded to bf16
 * pairs pa[r][jj], jj < np; rows up to mr and pairs past n are 0. */
void mk_uk_bf16_round(const float *p, int64_t ldp, int64_t rows, int64_t mr, int64_t j0,
		      int64_t n, uint32_t *pa, int64_t np);
/* mk_uk_pack and mk_uk_pack_v for them, pairs padded to multiples of pad. */
void mk_uk_bf16_pack(const float *b, int64_t cols, int64_t d, float scale, int64_t pad,
		     float *dst);
void mk_uk_bf16_pack_v(const float *v, int64_t cols, int64_t d, int64_t pad, float *dst);

/* Floats one block of cols rows of d takes once packed (either way). */
int64_t mk_uk_packed_size(const mk_uk *uk, int64_t cols, int64_t d);
/* Packs rows b[0 .. cols) (row stride d), times scale, into panels of nr
 * columns: dst[panel][p][c] = scale b[panel nr + c][p], zero past cols.
 * The scale goes in here once rather than on every score. */
void mk_uk_pack(const mk_uk *uk, const float *b, int64_t cols, int64_t d, float scale,
		float *dst);
/* Packs rows v[0 .. cols) (row stride d) into column chunks of nr:
 * dst[chunk][j][c] = v[j][chunk nr + c], zero past d. */
void mk_uk_pack_v(const mk_uk *uk, const float *v, int64_t cols, int64_t d, float *dst);

#endif
