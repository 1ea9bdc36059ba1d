/* Names of the element types (mk_dtype), as files and numpy spell them,
 * float32 to IEEE half for the writers of float16 data, and the check for
 * NaN and Inf in float32 data. */
#include "config.h"
#include <string.h>
#include "core.h"
#include "internal.h"
#ifdef _OPENMP
#include <omp.h>
#endif

static const char *const dtype_names[] = {
	[MK_DTYPE_NONE] = "none",
	[MK_DTYPE_F32] = "float32", [MK_DTYPE_F64] = "float64", [MK_DTYPE_F16] = "float16",
	[MK_DTYPE_BOOL] = "bool",
	[MK_DTYPE_I8] = "int8", [MK_DTYPE_I16] = "int16", [MK_DTYPE_I32] = "int32",
	[MK_DTYPE_I64] = "int64",
	[MK_DTYPE_U8] = "uint8", [MK_DTYPE_U16] = "uint16", [MK_DTYPE_U32] = "uint32",
	[MK_DTYPE_U64] = "uint64",
	[MK_DTYPE_ENUM16] = "enum16", [MK_DTYPE_ENUM32] = "enum32", [MK_DTYPE_ENUM64] = "enum64",
	[MK_DTYPE_BITS8] = "bitfield8", [MK_DTYPE_BITS16] = "bitfield16",
	[MK_DTYPE_BITS32] = "bitfield32", [MK_DTYPE_BITS64] = "bitfield64",
};

const char *mk_dtype_name(mk_dtype d)
{
	size_t k = (size_t)d;
	return k < sizeof dtype_names / sizeof *dtype_names && dtype_names[k] ? dtype_names[k]
									      : "none";
}

/* IEEE binary16 (1 sign, 5 exponent bits of bias 15, 10 fraction bits) from
 * a float, rounded to nearest with ties to even, as numpy's float16() does:
 * beyond 65504 (from 65520 up) it is infinite, below 2^-14 subnormal, from
 * 2^-25 down zero; NaN stays NaN.  Written out rather than through
 * _Float16, which not every compiler and target has. */
uint16_t mk_half_from_float(float f)
{
	uint32_t x, a, h, rem, half;
	uint16_t sign;
	int shift;

	memcpy(&x, &f, sizeof x);
	sign = (uint16_t)((x >> 16) & 0x8000u);
	a = x & 0x7fffffffu;
	if (a >= 0x7f800000u) /* infinite, or NaN (kept quiet, its top fraction bits kept) */
		return (uint16_t)(sign | 0x7c00u | (a > 0x7f800000u ? 0x200u | (a >> 13 & 0x3ffu) : 0));
	if (a >= 0x477ff000u) /* rounds up past 65504 */
		return (uint16_t)(sign | 0x7c00u);
	if (a >= 0x38800000u) { /* normal: rebias the exponent (127 - 15), drop 13 bits */
		a -= 0x38000000u;
		h = a >> 13;
		rem = a & 0x1fffu;
		h += rem > 0x1000u || (rem == 0x1000u && (h & 1u)); /* a carry bumps the exponent */
		return (uint16_t)(sign | h);
	}
	/* subnormal: the value in units of 2^-24, the implicit bit made explicit */
	shift = 126 - (int)(a >> 23);
	if (shift > 24)
		return sign;
	a = (a & 0x7fffffu) | 0x800000u;
	h = a >> shift;
	rem = a & ((1u << shift) - 1u);
	half = 1u << (shift - 1);
	h += rem > half || (rem == half && (h & 1u));
	return (uint16_t)(sign | h);
}

float mk_half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, u;
	int shift = 0;
	float f;

	if (e == 31) /* infinite or NaN */
		u = sign | 0x7f800000u | m << 13;
	else if (e) /* normal: rebias the exponent (127 - 15) */
		u = sign | (e + 112) << 23 | m << 13;
	else if (!m)
		u = sign;
	else { /* subnormal, m 2^-24: normalised, as every one is in float32 */
		while (!(m & 0x400u)) {
			m <<= 1;
			shift++;
		}
		u = sign | (uint32_t)(113 - shift) << 23 | (m & 0x3ffu) << 13;
	}
	memcpy(&f, &u, sizeof f);
	return f;
}

/* All exponent bits set, as an integer test that vectorises (isfinite does
 * not, measured): built for AVX-512 and AVX2 too, since the readers check
 * every tensor and the attention backend every output. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__ELF__)
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
bool mk_floats_nonfinite(const float *x, size_t count)
{
	uint32_t hit = 0;

#pragma omp simd reduction(| : hit)
	for (size_t e = 0; e < count; e++) {
		uint32_t u;
		memcpy(&u, x + e, sizeof u);
		hit |= (uint32_t)((u & 0x7f800000u) == 0x7f800000u);
	}
	return hit != 0;
}

#define FLOATS_PIECE ((size_t)1 << 20) /* floats per thread's task */

bool mk_floats_nonfinite_all(const float *x, size_t count)
{
	int hit = 0;

	/* one thread scanning a large output or input left the others
	 * waiting (measured); inside a parallel region, this thread alone */
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic) reduction(| : hit) \
	if (count > FLOATS_PIECE && !omp_in_parallel())
#endif
	for (size_t c = 0; c < count; c += FLOATS_PIECE)
		hit |= mk_floats_nonfinite(x + c, count - c < FLOATS_PIECE ? count - c : FLOATS_PIECE);
	return hit != 0;
}
