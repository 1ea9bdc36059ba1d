/* The cuda backend's small element-wise kernels: float32 inputs converted to
 * the compute type, hnas's blend of two outputs, and fills.  Grid-stride
 * loops, so any count fits one launch. */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include "cuda_internal.h"

namespace {

constexpr int kThreads = 256;

unsigned util_blocks(size_t count)
{
	size_t b = (count + kThreads - 1) / kThreads;
	return (unsigned)(b < 65535 ? (b ? b : 1) : 65535);
}

template <typename T> __device__ T util_from_float(float x);
template <> __device__ __half util_from_float<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __nv_bfloat16 util_from_float<__nv_bfloat16>(float x)
{
	return __float2bfloat16_rn(x);
}

template <typename T>
__global__ void util_convert(const float *__restrict__ src, T *__restrict__ dst, size_t count)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
	     i += (size_t)gridDim.x * blockDim.x)
		dst[i] = util_from_float<T>(src[i]);
}

__global__ void util_blend(float *__restrict__ o, const float *__restrict__ other, float u,
			   size_t count)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
	     i += (size_t)gridDim.x * blockDim.x)
		o[i] = u * o[i] + (1.0f - u) * other[i];
}

__global__ void util_fill(float *x, float value, size_t count)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
	     i += (size_t)gridDim.x * blockDim.x)
		x[i] = value;
}

} // namespace

extern "C" int mk_cuda_convert(const float *src, void *dst, size_t count, mk_cuda_dtype dtype,
			       cudaStream_t stream)
{
	if (dtype == MK_CUDA_F16)
		util_convert<<<util_blocks(count), kThreads, 0, stream>>>(src, (__half *)dst, count);
	else if (dtype == MK_CUDA_BF16)
		util_convert<<<util_blocks(count), kThreads, 0, stream>>>(
			src, (__nv_bfloat16 *)dst, count);
	else
		MK_CUDA_CHECK(cudaMemcpyAsync(dst, src, count * sizeof(float),
					      cudaMemcpyDeviceToDevice, stream));
	MK_CUDA_CHECK(cudaGetLastError());
	return 0;
}

extern "C" int mk_cuda_blend(float *o, const float *other, double u, size_t count,
			     cudaStream_t stream)
{
	util_blend<<<util_blocks(count), kThreads, 0, stream>>>(o, other, (float)u, count);
	MK_CUDA_CHECK(cudaGetLastError());
	return 0;
}

extern "C" int mk_cuda_fill(float *x, float value, size_t count, cudaStream_t stream)
{
	util_fill<<<util_blocks(count), kThreads, 0, stream>>>(x, value, count);
	MK_CUDA_CHECK(cudaGetLastError());
	return 0;
}
