/*
 * A warp per reduced row: the csr kernel in every compute type, and dense,
 * masked and block in fp32 (tensor cores would round fp32 to tf32, beyond
 * the fp32 tolerance).  The same pass as the tiled kernels, lse_a =
 * LSE_b (scale a.b - bias_b) with, in the row pass, o_a = P V.
 *
 * The warp takes the candidates b of its row 32 at a time, one per lane:
 * SDDMM (each lane the dot product of its b with the row, held in shared
 * memory), the row's running max and sum by warp shuffles, then SpMM (the
 * lanes over the head dimension, each candidate's weight broadcast, V rows
 * read coalesced).  Candidates: the CSR entries (the transpose for the
 * column pass), every column (dense; masked tests the bits) or the columns
 * of the row's non-empty tiles (block; the bits only in partial tiles).
 *
 * Ran on an H200 (2026-11-28): check_cuda passed, memcheck and synccheck clean.
 */
#include "cuda_common.cuh"

namespace {
using namespace mkc;

constexpr int kWarps = 4, kThreads = kWarps * kWarp;

struct RowsArgs {
	const void *a, *b, *v;
	const float *bias;
	float *lse, *o;
	int64_t slices, n, tile, stride;
	float scale;
	int kernel;
	bool transposed;
	const uint64_t *bits;
	const int64_t *tptr;  /* block: tile lists */
	const int32_t *tidx;
	const uint8_t *tfull;
	const int64_t *eptr;  /* csr: entries */
	const int32_t *eidx;
};

template <int D> struct RowState {
	float m, l;       /* running max and sum (the same in every lane) */
	float o[D / 32];  /* this lane's output columns lane, lane + 32, ... */
};

/* 32 candidates, lane's being cand (valid or not), into the row's state. */
template <typename T, int D>
__device__ __forceinline__ void rows_group(const RowsArgs &x, RowState<D> &st, const float *sa,
					   const T *b, const T *v, int64_t bh, int64_t cand,
					   bool valid)
{
	int lane = threadIdx.x % kWarp;
	float s = kNegInf, nb = valid ? neg_bias(x.bias, bh * x.n + cand) : kNegInf;

	if (nb != kNegInf) {
		const T *br = b + cand * D;
		float dot = 0.0f, e[8];
#pragma unroll 4
		for (int k = 0; k < D; k += 8) {
			load8(br + k, e);
#pragma unroll
			for (int i = 0; i < 8; i++)
				dot += sa[k + i] * e[i];
		}
		s = dot * x.scale + nb;
	}
	float gmax = warp_max(s);
	if (gmax == kNegInf) /* the whole warp agrees: nothing here */
		return;
	float mn = fmaxf(st.m, gmax), alpha = exp_from(st.m, mn), p = exp_from(s, mn);
	st.l = st.l * alpha + warp_sum(p);
	st.m = mn;
	if (!v)
		return;
#pragma unroll
	for (int k = 0; k < D / 32; k++)
		st.o[k] *= alpha;
	for (int j = 0; j < kWarp; j++) {
		float pj = __shfl_sync(0xffffffffu, p, j);
		long long bj = __shfl_sync(0xffffffffu, (long long)cand, j);
		if (pj == 0.0f) /* uniform: pj is the same in every lane */
			continue;
		const T *vr = v + bj * D;
#pragma unroll
		for (int k = 0; k < D / 32; k++)
			st.o[k] += pj * to_f(vr[lane + 32 * k]);
	}
}

/* The candidates lo .. hi - 1, their mask bits tested when test is set. */
template <typename T, int D>
__device__ void rows_range(const RowsArgs &x, RowState<D> &st, const float *sa, const T *b,
			   const T *v, int64_t bh, int64_t a, int64_t lo, int64_t hi, bool test)
{
	int lane = threadIdx.x % kWarp;
	for (int64_t j0 = lo; j0 < hi; j0 += kWarp) {
		int64_t j = j0 + lane;
		bool valid = j < hi;
		if (valid && test)
			valid = x.transposed ? bit_at(x.bits, x.stride, j, a) : bit_at(x.bits, x.stride, a, j);
		rows_group<T, D>(x, st, sa, b, v, bh, valid ? j : 0, valid);
	}
}

template <typename T, int D>
__device__ void rows_walk(const RowsArgs &x, RowState<D> &st, const float *sa, const T *b,
			  const T *v, int64_t bh, int64_t a)
{
	int lane = threadIdx.x % kWarp;
	if (x.kernel == MK_CUDA_CSR) {
		int64_t end = x.eptr[a + 1];
		for (int64_t e0 = x.eptr[a]; e0 < end; e0 += kWarp) {
			int64_t e = e0 + lane;
			rows_group<T, D>(x, st, sa, b, v, bh, e < end ? (int64_t)x.eidx[e] : 0, e < end);
		}
	} else if (x.kernel == MK_CUDA_BLOCK) {
		int64_t r = a / x.tile;
		for (int64_t pos = x.tptr[r]; pos < x.tptr[r + 1]; pos++) {
			int64_t lo = (int64_t)x.tidx[pos] * x.tile;
			rows_range<T, D>(x, st, sa, b, v, bh, a, lo, imin(lo + x.tile, x.n),
					 !x.tfull[pos]);
		}
	} else {
		rows_range<T, D>(x, st, sa, b, v, bh, a, 0, x.n, x.kernel == MK_CUDA_MASKED);
	}
}

template <typename T, int D> __global__ void __launch_bounds__(kThreads) rows_kernel(RowsArgs x)
{
	__shared__ float sa_all[kWarps][D];
	int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
	int64_t a = (int64_t)blockIdx.x * kWarps + warp;
	float *sa = sa_all[warp];

	if (a >= x.n) /* whole warps leave; no block-wide barrier follows */
		return;
	for (int64_t bh = blockIdx.y; bh < x.slices; bh += gridDim.y) {
		const T *ar = static_cast<const T *>(x.a) + (bh * x.n + a) * D;
		const T *b = static_cast<const T *>(x.b) + bh * x.n * D;
		const T *v = x.v ? static_cast<const T *>(x.v) + bh * x.n * D : nullptr;
		RowState<D> st;
		st.m = kNegInf;
		st.l = 0.0f;
#pragma unroll
		for (int k = 0; k < D / 32; k++)
			st.o[k] = 0.0f;
		__syncwarp();
		for (int k = lane; k < D; k += kWarp)
			sa[k] = to_f(ar[k]);
		__syncwarp();
		rows_walk<T, D>(x, st, sa, b, v, bh, a);
		if (lane == 0)
			x.lse[bh * x.n + a] = finish_lse(st.m, st.l);
		if (x.o) {
			float inv = st.l > 0.0f ? 1.0f / st.l : 0.0f;
#pragma unroll
			for (int k = 0; k < D / 32; k++)
				x.o[(bh * x.n + a) * D + lane + 32 * k] = st.o[k] * inv;
		}
	}
}

template <typename T, int D> int rows_launch(const RowsArgs &x, cudaStream_t stream)
{
	dim3 grid((unsigned)((x.n + kWarps - 1) / kWarps), (unsigned)imin(x.slices, (int64_t)65535));
	rows_kernel<T, D><<<grid, kThreads, 0, stream>>>(x);
	MK_CUDA_CHECK(cudaGetLastError());
	return 0;
}

template <typename T> int rows_dispatch_d(const RowsArgs &x, int64_t d, cudaStream_t stream)
{
	return d == 64 ? rows_launch<T, 64>(x, stream) : rows_launch<T, 128>(x, stream);
}

} // namespace

int mk_cuda_rows_pass(const mk_cuda_pass *p)
{
	const mk_cuda_mask *m = p->mask;
	bool c = p->transposed;
	RowsArgs x = {p->a, p->b, p->o ? p->v : nullptr, p->bias, p->lse, p->o, p->slices, p->n,
		      m ? m->tile : 1, m ? m->stride : 0, p->scale, p->kernel, c,
		      m ? m->bits : nullptr, m ? (c ? m->cptr : m->rptr) : nullptr,
		      m ? (c ? m->crow : m->rcol) : nullptr, m ? (c ? m->cfull : m->rfull) : nullptr,
		      m ? (c ? m->cscptr : m->ptr) : nullptr, m ? (c ? m->cscrow : m->col) : nullptr};

	if ((p->d != 64 && p->d != 128) || (p->kernel != MK_CUDA_DENSE && !m) ||
	    (p->kernel == MK_CUDA_CSR && !m->cscrow))
		return mk_cuda_fail(cudaErrorInvalidValue, "rows pass arguments", __FILE__, __LINE__);
	if (p->dtype == MK_CUDA_F16)
		return rows_dispatch_d<__half>(x, p->d, p->stream);
	if (p->dtype == MK_CUDA_BF16)
		return rows_dispatch_d<__nv_bfloat16>(x, p->d, p->stream);
	return rows_dispatch_d<float>(x, p->d, p->stream);
}
