/* The attention micro-kernels per vector level, and the choice among them.
 *
 * cpu_ukernel_body.h is compiled once per level with GCC's vector types:
 * AVX-512 (12 x 32 blocks in 32 zmm registers), AVX2 with FMA (6 x 16 in 16
 * ymm) and a portable one (6 x 8, SSE2 on x86-64 or whatever the target's
 * vectors are), each with a 4-row block for the strips of 4 rows or fewer.  The level is chosen at run time from the CPU, so one build
 * runs everywhere; MASKKIT_CPU_KERNEL or mk_uk_force picks another, which
 * is how the tests check every path against the reference. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "attn_internal.h"
#include "cpu_rows.h"
#include "cpu_ukernel.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define UK_X86 1
#include <immintrin.h> /* the AVX-512 level's exponential: vscalefps */
#endif

/* fp-contract lets a * b + c become one fused multiply-add (ISO C mode
 * leaves contraction off); O3 unrolls the register blocks. */
#define UK_OPT optimize("O3", "fp-contract=fast")

/* Each level twice: its register block, and a block of 4 rows that takes
 * the strips of 4 rows or fewer (a 64-row tile is 5 strips of 12 and one of
 * 4, which the 12-row block computed in full: 11 % of the block kernel's
 * products wasted). */
#define UK_VW 4
#define UK_TARGET __attribute__((UK_OPT))
#define UK_NAME(x) uk_##x##_portable_r4
#define UK_MR 4
#include "cpu_ukernel_body.h"
#undef UK_NAME
#undef UK_MR
#define UK_NAME(x) uk_##x##_portable
#define UK_SMALL(x) uk_##x##_portable_r4
#define UK_SMALL_MR 4
#define UK_MR 6
#include "cpu_ukernel_body.h"
#undef UK_NAME
#undef UK_SMALL
#undef UK_SMALL_MR
#undef UK_VW
#undef UK_MR
#undef UK_TARGET

#ifdef UK_X86
#define UK_VW 8
#define UK_TARGET __attribute__((target("avx2,fma"), UK_OPT))
#define UK_NAME(x) uk_##x##_avx2_r4
#define UK_MR 4
#include "cpu_ukernel_body.h"
#undef UK_NAME
#undef UK_MR
#define UK_NAME(x) uk_##x##_avx2
#define UK_SMALL(x) uk_##x##_avx2_r4
#define UK_SMALL_MR 4
#define UK_MR 6
#include "cpu_ukernel_body.h"
#undef UK_NAME
#undef UK_SMALL
#undef UK_SMALL_MR
#undef UK_VW
#undef UK_MR
#undef UK_TARGET

#define UK_VW 16
#define UK_TARGET __attribute__((target("avx512f,fma"), UK_OPT))
#define UK_NAME(x) uk_##x##_avx512_r4
#define UK_MR 4
#include "cpu_ukernel_body.h"
#undef UK_NAME
#undef UK_MR
#define UK_NAME(x) uk_##x##_avx512
#define UK_SMALL(x) uk_##x##_avx512_r4
#define UK_SMALL_MR 4
#define UK_MR 12
#include "cpu_ukernel_body.h"
#undef UK_NAME
#undef UK_SMALL
#undef UK_SMALL_MR
#undef UK_VW
#undef UK_MR
#undef UK_TARGET
#endif

static const mk_uk uk_levels[] = {
#ifdef UK_X86
	{"avx512", 12, 32, uk_qk_avx512, uk_pv_avx512, false, 0, uk_qk_exp_avx512},
	{"avx2", 6, 16, uk_qk_avx2, uk_pv_avx2, false, 0, uk_qk_exp_avx2},
#endif
	{"portable", 6, 8, uk_qk_portable, uk_pv_portable, false, 0, uk_qk_exp_portable},
};
#define UK_NLEVELS (sizeof uk_levels / sizeof *uk_levels)

bool mk_uk_supported(const char *name)
{
	if (!name)
		return false;
#ifdef UK_X86
	__builtin_cpu_init();
	if (!strcmp(name, "avx512"))
		return __builtin_cpu_supports("avx512f");
	if (!strcmp(name, "avx2"))
		return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
	return !strcmp(name, "portable") || !strcmp(name, "blas");
}

static const mk_uk *uk_by_name(const char *name)
{
	for (size_t k = 0; k < UK_NLEVELS; k++)
		if (!strcmp(uk_levels[k].name, name))
			return &uk_levels[k];
	return NULL;
}

/* The widest level the CPU runs (the portable one always does). */
static const mk_uk *uk_default(void)
{
	for (size_t k = 0; k < UK_NLEVELS; k++)
		if (mk_uk_supported(uk_levels[k].name))
			return &uk_levels[k];
	return &uk_levels[UK_NLEVELS - 1];
}

static const mk_uk *uk_forced;
static bool uk_is_forced, uk_blas;

int mk_uk_force(const char *name)
{
	if (!name) {
		uk_is_forced = false;
		return MK_OK;
	}
	if (!mk_uk_supported(name))
		return mk_error_set(MK_EINVAL, "CPU kernel '%s' is unknown or not run by this CPU "
				    "(avx512, avx2, portable, blas)", name);
	uk_blas = !strcmp(name, "blas");
	uk_forced = uk_blas ? NULL : uk_by_name(name);
	uk_is_forced = true;
	return MK_OK;
}

const mk_uk *mk_uk_get(void)
{
	const char *env;

	if (uk_is_forced)
		return uk_forced;
	/* an unknown or unsupported name falls back to the default: a variable
	 * meant for tests must not make a user's command fail */
	env = getenv("MASKKIT_CPU_KERNEL");
	if (env && mk_uk_supported(env))
		return strcmp(env, "blas") ? uk_by_name(env) : NULL;
	return uk_default();
}

int64_t mk_uk_packed_size(const mk_uk *uk, int64_t cols, int64_t d)
{
	int64_t nr = uk->nr;

	/* rows are padded to whole panels for K, columns to whole chunks for V
	 * (bf16 takes half of that, or less) */
	return (cols + nr - 1) / nr * nr * ((d + nr - 1) / nr * nr);
}

void mk_uk_pack(const mk_uk *uk, const float *b, int64_t cols, int64_t d, float scale,
		float *dst)
{
	int64_t nr = uk->nr;

	if (uk->bf16) {
		mk_uk_bf16_pack(b, cols, d, scale, uk->pad, dst);
		return;
	}
	for (int64_t c0 = 0; c0 < cols; c0 += nr) {
		int64_t w = cols - c0 < nr ? cols - c0 : nr;
		float *panel = dst + c0 * d;
		for (int64_t c = 0; c < w; c++)
			for (int64_t p = 0; p < d; p++)
				panel[p * nr + c] = scale * b[(c0 + c) * d + p];
		for (int64_t c = w; c < nr; c++)
			for (int64_t p = 0; p < d; p++)
				panel[p * nr + c] = 0.0f;
	}
}

void mk_uk_pack_v(const mk_uk *uk, const float *v, int64_t cols, int64_t d, float *dst)
{
	int64_t nr = uk->nr;

	if (uk->bf16) {
		mk_uk_bf16_pack_v(v, cols, d, uk->pad, dst);
		return;
	}
	for (int64_t c0 = 0; c0 < d; c0 += nr) {
		int64_t w = d - c0 < nr ? d - c0 : nr;
		float *chunk = dst + c0 * cols;
		for (int64_t j = 0; j < cols; j++) {
			memcpy(chunk + j * nr, v + j * d + c0, (size_t)w * sizeof *chunk);
			for (int64_t c = w; c < nr; c++)
				chunk[j * nr + c] = 0.0f;
		}
	}
}
