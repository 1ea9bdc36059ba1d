/* Device helpers shared by the cuda backend's kernels: element types, the
 * tensor-core instruction, cp.async, mask bits and warp reductions. */
#ifndef MK_CUDA_COMMON_CUH
#define MK_CUDA_COMMON_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math_constants.h>
#include <stdint.h>
#include "cuda_internal.h"

namespace mkc {

constexpr int kWarp = 32;
constexpr float kNegInf = -__builtin_huge_valf();

__host__ __device__ __forceinline__ int64_t imin(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* ---- element types ---------------------------------------------------------- */

/* Eight consecutive elements (16-byte aligned for the 2-byte types, 32 for
 * float) as floats. */
__device__ __forceinline__ void load8(const float *p, float *out)
{
	float4 a = reinterpret_cast<const float4 *>(p)[0], b = reinterpret_cast<const float4 *>(p)[1];
	out[0] = a.x; out[1] = a.y; out[2] = a.z; out[3] = a.w;
	out[4] = b.x; out[5] = b.y; out[6] = b.z; out[7] = b.w;
}

__device__ __forceinline__ float2 to_f2(__half2 h) { return __half22float2(h); }
__device__ __forceinline__ float2 to_f2(__nv_bfloat162 h) { return __bfloat1622float2(h); }

/* The 2-byte types: one 16-byte load, four pairs (T2: __half2, __nv_bfloat162). */
template <typename T2> __device__ __forceinline__ void load8_pairs(const void *p, float *out)
{
	uint4 u = *reinterpret_cast<const uint4 *>(p);
	const T2 *h = reinterpret_cast<const T2 *>(&u);
	for (int k = 0; k < 4; k++) {
		float2 f = to_f2(h[k]);
		out[2 * k] = f.x;
		out[2 * k + 1] = f.y;
	}
}
__device__ __forceinline__ void load8(const __half *p, float *out)
{
	load8_pairs<__half2>(p, out);
}
__device__ __forceinline__ void load8(const __nv_bfloat16 *p, float *out)
{
	load8_pairs<__nv_bfloat162>(p, out);
}

__device__ __forceinline__ float to_f(float x) { return x; }
__device__ __forceinline__ float to_f(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_f(__nv_bfloat16 x) { return __bfloat162float(x); }

/* Two floats as one register of the 2-byte type, the first in the low half
 * (the order mma.sync reads pairs in). */
template <typename T> __device__ __forceinline__ uint32_t pack2(float lo, float hi);
template <> __device__ __forceinline__ uint32_t pack2<__half>(float lo, float hi)
{
	__half2 h = __floats2half2_rn(lo, hi);
	return *reinterpret_cast<uint32_t *>(&h);
}
template <> __device__ __forceinline__ uint32_t pack2<__nv_bfloat16>(float lo, float hi)
{
	__nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
	return *reinterpret_cast<uint32_t *>(&h);
}

/* Two 2-byte elements from different places as one register. */
template <typename T> __device__ __forceinline__ uint32_t join2(T lo, T hi)
{
	uint16_t a = *reinterpret_cast<const uint16_t *>(&lo), b = *reinterpret_cast<const uint16_t *>(&hi);
	return (uint32_t)a | ((uint32_t)b << 16);
}

/* ---- tensor cores: D = A B + D, m16n8k16, fp32 accumulators ----------------------- */

template <typename T> __device__ __forceinline__ void mma16816(float *d, const uint32_t *a,
							       const uint32_t *b);
/* The instruction's types are part of its name: one specialisation per type. */
#define MKC_MMA16816(T, ptx)                                                                  \
	template <> __device__ __forceinline__ void mma16816<T>(float *d, const uint32_t *a,  \
								const uint32_t *b)            \
	{                                                                                     \
		asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." ptx "." ptx ".f32 "     \
			     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"       \
			     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                 \
			     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1])); \
	}
MKC_MMA16816(__half, "f16")
MKC_MMA16816(__nv_bfloat16, "bf16")
#undef MKC_MMA16816

/* ---- cp.async: 16 bytes global -> shared, zeros when !valid ------------------------ */

__device__ __forceinline__ void cp_async16(void *smem, const void *gmem, bool valid)
{
	uint32_t s = (uint32_t)__cvta_generic_to_shared(smem);
	int bytes = valid ? 16 : 0;
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem),
		     "r"(bytes) : "memory");
}
__device__ __forceinline__ void cp_async_commit()
{
	asm volatile("cp.async.commit_group;\n" ::: "memory");
}
template <int N> __device__ __forceinline__ void cp_async_wait()
{
	asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

/* ---- mask bits ---------------------------------------------------------------- */

/* Bits start .. start + 63 of a bit row of `stride` words (0 past its end). */
__device__ __forceinline__ uint64_t bit_window(const uint64_t *row, int64_t stride, int64_t start)
{
	int64_t w = start >> 6;
	int sh = (int)(start & 63);
	uint64_t lo = w < stride ? row[w] : 0, hi;
	if (sh == 0)
		return lo;
	hi = w + 1 < stride ? row[w + 1] : 0;
	return (lo >> sh) | (hi << (64 - sh));
}

__device__ __forceinline__ bool bit_at(const uint64_t *bits, int64_t stride, int64_t i, int64_t j)
{
	return (bits[i * stride + (j >> 6)] >> (j & 63)) & 1;
}

/* ---- reductions and the log-domain update ------------------------------------------- */

__device__ __forceinline__ float warp_max(float x)
{
	for (int o = kWarp / 2; o > 0; o >>= 1)
		x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, o));
	return x;
}
__device__ __forceinline__ float warp_sum(float x)
{
	for (int o = kWarp / 2; o > 0; o >>= 1)
		x += __shfl_xor_sync(0xffffffffu, x, o);
	return x;
}

/* exp(x - m) that is 0 for x = -inf, never NaN (m = -inf only when every x is). */
__device__ __forceinline__ float exp_from(float x, float m)
{
	return x == kNegInf ? 0.0f : expf(x - m);
}

/* The negated bias of one b row, -inf for a row with no entry. */
__device__ __forceinline__ float neg_bias(const float *bias, int64_t at)
{
	float b = bias ? bias[at] : 0.0f;
	return b == kNegInf ? kNegInf : -b;
}

/* lse of a finished row, -inf when nothing was visited. */
__device__ __forceinline__ float finish_lse(float m, float l)
{
	return l > 0.0f ? m + logf(l) : kNegInf;
}

} // namespace mkc

#endif
