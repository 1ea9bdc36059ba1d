/*
 * The tiled kernels (dense, masked, block) on tensor cores, fp16 and bf16
 * with fp32 accumulation, head dimensions 64 and 128.  One pass computes
 * lse_a = LSE_b (scale a.b - bias_b) over the cells it visits and, in the
 * row pass, o_a = sum_b exp(scale a.b - bias_b - lse_a) v_b (flash
 * attention's online softmax); the column pass is the same with a = K and
 * b = Q and the mask read transposed, so one kernel serves both.
 *
 * A thread block of 4 warps takes 64 rows of a (16 per warp, held in shared
 * memory) and walks 64-row chunks of b: K then V staged by cp.async (V's copy
 * overlaps the scores), S = A B^T by mma.sync m16n8k16 into registers, the
 * running max and sum updated per row, and P (the accumulator registers
 * re-packed as the A operand, no trip through shared memory) times V into
 * fp32 output registers.  masked tests the bit mask in every chunk; block
 * visits only the layout's non-empty tiles, the mask only in partial ones,
 * following the host's plan (block_plan.h): rows with many tiles are split
 * into pieces whose (max, sum, output) states a second kernel merges.
 *
 * Ran on an H200 (2026-11-28): check_cuda passed, memcheck and synccheck clean;
 * 115-122 TFLOP/s dense at bf16, d = 128 (12 % of the peak: no wgmma yet).
 */
#include "cuda_common.cuh"

namespace {
using namespace mkc;

constexpr int BM = MK_CUDA_BM, BN = MK_CUDA_BN, kThreads = 128, kPad = 8;
static_assert(BM == 4 * 16 && BN == 64, "4 warps of 16 rows, 64-bit mask windows");

struct TilesArgs {
	const void *a, *b, *v;
	const float *bias;
	float *lse, *o, *part;
	int64_t slices, n, nslots, tile, stride;
	float scale;
	int kernel;
	bool transposed;
	const uint64_t *bits;
	const int64_t *ptr;
	const int32_t *idx;
	const uint8_t *full;
	const mk_block_item *items;
	const mk_block_split *splits;
};

/* Rows padded by 16 bytes: the fragment loads of the 8 row groups then fall
 * in different banks; every row start stays 16-byte aligned for cp.async. */
template <typename T, int D> struct Smem {
	T a[BM][D + kPad], k[BN][D + kPad], v[BN][D + kPad];
	float nb[BN];     /* negated bias of the chunk's b rows, -inf past its end */
	uint64_t win[64]; /* the chunk's mask bits (see tiles_chunk) */
};

template <int D> struct Acc {
	float o[D / 8][4]; /* output fragments: rows g and g + 8, 2 columns each */
	float m[2], l[2];  /* rows g and g + 8: running max, this thread's part of the sum */
};

/* 64 rows from r0 of an n x D slice into shared memory; rows past n are zeros. */
template <typename T, int D>
__device__ void tiles_load(T (*dst)[D + kPad], const T *src, int64_t r0, int64_t n)
{
	constexpr int kChunks = D / 8; /* 16-byte pieces per row */
	for (int c = threadIdx.x; c < 64 * kChunks; c += kThreads) {
		int r = c / kChunks, col = (c % kChunks) * 8;
		bool ok = r0 + r < n;
		cp_async16(&dst[r][col], src + (ok ? (r0 + r) * D + col : 0), ok);
	}
}

/* S = A B^T for the warp's 16 rows and the chunk's 64 columns. */
template <typename T, int D>
__device__ __forceinline__ void tiles_scores(const Smem<T, D> &sm, float (*s)[4], int warp, int g,
					     int t4)
{
	for (int nt = 0; nt < BN / 8; nt++)
		s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.0f;
#pragma unroll
	for (int kk = 0; kk < D / 16; kk++) {
		const T *a0 = &sm.a[warp * 16 + g][kk * 16 + 2 * t4];
		const T *a1 = &sm.a[warp * 16 + g + 8][kk * 16 + 2 * t4];
		uint32_t af[4] = {*reinterpret_cast<const uint32_t *>(a0),
				  *reinterpret_cast<const uint32_t *>(a1),
				  *reinterpret_cast<const uint32_t *>(a0 + 8),
				  *reinterpret_cast<const uint32_t *>(a1 + 8)};
#pragma unroll
		for (int nt = 0; nt < BN / 8; nt++) {
			const T *b0 = &sm.k[nt * 8 + g][kk * 16 + 2 * t4];
			uint32_t bf[2] = {*reinterpret_cast<const uint32_t *>(b0),
					  *reinterpret_cast<const uint32_t *>(b0 + 8)};
			mma16816<T>(s[nt], af, bf);
		}
	}
}

/* Scales, biases and masks the scores, then the online-softmax update: s
 * becomes the weights P, the state and the output are rescaled. */
template <typename T, int D>
__device__ __forceinline__ void tiles_softmax(const TilesArgs &x, const Smem<T, D> &sm,
					      Acc<D> &acc, float (*s)[4], bool test, int warp,
					      int g, int t4)
{
	float mx[2] = {kNegInf, kNegInf}, sum[2] = {0.0f, 0.0f}, alpha[2];
#pragma unroll
	for (int nt = 0; nt < BN / 8; nt++)
#pragma unroll
		for (int e = 0; e < 4; e++) {
			int ra = warp * 16 + g + (e >> 1) * 8, cb = nt * 8 + 2 * t4 + (e & 1);
			float val = s[nt][e] * x.scale + sm.nb[cb];
			if (test) {
				uint64_t w = x.transposed ? sm.win[cb] : sm.win[ra];
				if (!((w >> (x.transposed ? ra : cb)) & 1))
					val = kNegInf;
			}
			s[nt][e] = val;
			mx[e >> 1] = fmaxf(mx[e >> 1], val);
		}
#pragma unroll
	for (int h = 0; h < 2; h++) {
		/* the 4 threads of a row group are lanes 4g .. 4g + 3 */
		mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 1));
		mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 2));
		float mn = fmaxf(acc.m[h], mx[h]);
		/* nothing seen yet (mn = -inf): keep the zero state as it is */
		alpha[h] = mn == kNegInf ? 1.0f : exp_from(acc.m[h], mn);
		acc.m[h] = mn;
	}
#pragma unroll
	for (int nt = 0; nt < BN / 8; nt++)
#pragma unroll
		for (int e = 0; e < 4; e++) {
			s[nt][e] = exp_from(s[nt][e], acc.m[e >> 1]);
			sum[e >> 1] += s[nt][e];
		}
#pragma unroll
	for (int h = 0; h < 2; h++)
		acc.l[h] = acc.l[h] * alpha[h] + sum[h];
#pragma unroll
	for (int dn = 0; dn < D / 8; dn++) {
		acc.o[dn][0] *= alpha[0];
		acc.o[dn][1] *= alpha[0];
		acc.o[dn][2] *= alpha[1];
		acc.o[dn][3] *= alpha[1];
	}
}

/* O += P V: the score accumulators of n-tiles 2j and 2j + 1 are exactly the
 * A fragment of the 16-key step j. */
template <typename T, int D>
__device__ __forceinline__ void tiles_pv(const Smem<T, D> &sm, Acc<D> &acc, float (*s)[4], int g,
					 int t4)
{
#pragma unroll
	for (int j = 0; j < BN / 16; j++) {
		uint32_t af[4] = {pack2<T>(s[2 * j][0], s[2 * j][1]), pack2<T>(s[2 * j][2], s[2 * j][3]),
				  pack2<T>(s[2 * j + 1][0], s[2 * j + 1][1]),
				  pack2<T>(s[2 * j + 1][2], s[2 * j + 1][3])};
		int kr = j * 16 + 2 * t4;
#pragma unroll
		for (int dn = 0; dn < D / 8; dn++) {
			int col = dn * 8 + g;
			uint32_t bf[2] = {join2<T>(sm.v[kr][col], sm.v[kr + 1][col]),
					  join2<T>(sm.v[kr + 8][col], sm.v[kr + 9][col])};
			mma16816<T>(acc.o[dn], af, bf);
		}
	}
}

/* One chunk of b rows k0 .. kend - 1 (at most 64) against the block's a rows
 * from row0.  win holds, per a row (or per b row when transposed), the 64
 * mask bits of the other side's chunk. */
template <typename T, int D>
__device__ void tiles_chunk(const TilesArgs &x, Smem<T, D> &sm, Acc<D> &acc, int64_t bh,
			    int64_t row0, int64_t k0, int64_t kend, bool test)
{
	const T *b = static_cast<const T *>(x.b) + bh * x.n * D;
	const T *v = x.v ? static_cast<const T *>(x.v) + bh * x.n * D : nullptr;
	int tid = threadIdx.x, warp = tid / 32, g = (tid % 32) >> 2, t4 = tid & 3;
	float s[BN / 8][4];

	tiles_load<T, D>(sm.k, b, k0, x.n);
	cp_async_commit();
	if (v) {
		tiles_load<T, D>(sm.v, v, k0, x.n);
		cp_async_commit();
	}
	if (tid < BN) {
		int64_t key = k0 + tid;
		sm.nb[tid] = key < kend ? neg_bias(x.bias, bh * x.n + key) : kNegInf;
		if (test) {
			int64_t row = x.transposed ? key : row0 + tid;
			int64_t start = x.transposed ? row0 : k0;
			sm.win[tid] = row < x.n ? bit_window(x.bits + row * x.stride, x.stride, start)
						: 0;
		}
	}
	if (v)
		cp_async_wait<1>(); /* A and K have landed; V may still be in flight */
	else
		cp_async_wait<0>();
	__syncthreads();
	tiles_scores<T, D>(sm, s, warp, g, t4);
	tiles_softmax<T, D>(x, sm, acc, s, test, warp, g, t4);
	if (v) {
		cp_async_wait<0>();
		__syncthreads();
		tiles_pv<T, D>(sm, acc, s, g, t4);
	}
	__syncthreads(); /* the next chunk overwrites k, v, nb and win */
}

/* The block's rows into lse and o, or, for a piece of a split row, its
 * unnormalised state into the piece's slot. */
template <int D>
__device__ void tiles_finish(const TilesArgs &x, Acc<D> &acc, int64_t bh, int64_t row0,
			     int64_t rend, int64_t slot)
{
	int tid = threadIdx.x, warp = tid / 32, g = (tid % 32) >> 2, t4 = tid & 3;
#pragma unroll
	for (int h = 0; h < 2; h++) {
		float l = acc.l[h];
		l += __shfl_xor_sync(0xffffffffu, l, 1);
		l += __shfl_xor_sync(0xffffffffu, l, 2);
		int64_t row = row0 + warp * 16 + g + 8 * h, li = row - row0;
		if (row >= rend)
			continue;
		if (slot < 0) {
			float inv = l > 0.0f ? 1.0f / l : 0.0f;
			if (t4 == 0)
				x.lse[bh * x.n + row] = finish_lse(acc.m[h], l);
			if (!x.o)
				continue;
			float *o = x.o + (bh * x.n + row) * D;
#pragma unroll
			for (int dn = 0; dn < D / 8; dn++) {
				o[dn * 8 + 2 * t4] = acc.o[dn][2 * h] * inv;
				o[dn * 8 + 2 * t4 + 1] = acc.o[dn][2 * h + 1] * inv;
			}
			continue;
		}
		float *base = x.part + bh * x.nslots * BM * (D + 2);
		int64_t at = slot * BM + li;
		if (t4 == 0) {
			base[at] = acc.m[h];
			base[x.nslots * BM + at] = l;
		}
		if (!x.o)
			continue;
		float *po = base + 2 * x.nslots * BM + at * D;
#pragma unroll
		for (int dn = 0; dn < D / 8; dn++) {
			po[dn * 8 + 2 * t4] = acc.o[dn][2 * h];
			po[dn * 8 + 2 * t4 + 1] = acc.o[dn][2 * h + 1];
		}
	}
}

/* Every b chunk of one a block: all of them (dense, masked) or those of the
 * item's tiles (block). */
template <typename T, int D>
__device__ void tiles_walk(const TilesArgs &x, Smem<T, D> &sm, Acc<D> &acc, int64_t bh,
			   int64_t row0, int64_t r, int64_t t0, int64_t t1)
{
	if (x.kernel != MK_CUDA_BLOCK) {
		for (int64_t k0 = 0; k0 < x.n; k0 += BN)
			tiles_chunk<T, D>(x, sm, acc, bh, row0, k0, imin(k0 + BN, x.n),
					  x.kernel == MK_CUDA_MASKED);
		return;
	}
	for (int64_t t = t0; t < t1; t++) {
		int64_t pos = x.ptr[r] + t, lo = (int64_t)x.idx[pos] * x.tile;
		int64_t hi = imin(lo + x.tile, x.n);
		bool test = !x.full[pos];
		for (int64_t k0 = lo; k0 < hi; k0 += BN)
			tiles_chunk<T, D>(x, sm, acc, bh, row0, k0, imin(k0 + BN, hi), test);
	}
}

template <typename T, int D> __global__ void __launch_bounds__(kThreads) tiles_kernel(TilesArgs x)
{
	extern __shared__ __align__(16) unsigned char tiles_raw[];
	Smem<T, D> &sm = *reinterpret_cast<Smem<T, D> *>(tiles_raw);
	int64_t row0 = (int64_t)blockIdx.x * BM, rend = imin(row0 + BM, x.n), r = 0, t0 = 0, t1 = 0;
	int64_t slot = -1;

	if (x.kernel == MK_CUDA_BLOCK) {
		mk_block_item it = x.items[blockIdx.x];
		r = it.r;
		row0 = r * x.tile + (int64_t)it.sub * BM;
		rend = imin(imin(r * x.tile + x.tile, x.n), row0 + BM);
		t0 = it.t0;
		t1 = it.t1;
		slot = it.slot;
	}
	for (int64_t bh = blockIdx.y; bh < x.slices; bh += gridDim.y) {
		Acc<D> acc;
		for (int dn = 0; dn < D / 8; dn++)
			acc.o[dn][0] = acc.o[dn][1] = acc.o[dn][2] = acc.o[dn][3] = 0.0f;
		acc.m[0] = acc.m[1] = kNegInf;
		acc.l[0] = acc.l[1] = 0.0f;
		tiles_load<T, D>(sm.a, static_cast<const T *>(x.a) + bh * x.n * D, row0, x.n);
		cp_async_commit();
		tiles_walk<T, D>(x, sm, acc, bh, row0, r, t0, t1);
		cp_async_wait<0>(); /* an item with no tile never waited for A */
		tiles_finish<D>(x, acc, bh, row0, rend, slot);
		__syncthreads(); /* the next slice overwrites a */
	}
}

/* Merges the pieces of each split row block: the states are brought to their
 * common max before they are summed.  A warp per row, lanes over d. */
template <int D> __global__ void __launch_bounds__(kThreads) tiles_merge(TilesArgs x)
{
	mk_block_split sp = x.splits[blockIdx.x];
	int64_t lo = (int64_t)sp.r * x.tile + (int64_t)sp.sub * BM;
	int64_t hi = imin(imin((int64_t)sp.r * x.tile + x.tile, x.n), lo + BM);
	int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

	for (int64_t bh = blockIdx.y; bh < x.slices; bh += gridDim.y) {
		const float *base = x.part + bh * x.nslots * BM * (D + 2);
		const float *pl = base + x.nslots * BM, *po = base + 2 * x.nslots * BM;
		for (int64_t i = lo + warp; i < hi; i += kThreads / 32) {
			int64_t li = i - lo;
			float mx = kNegInf, l = 0.0f;
			for (int64_t s = sp.slot0; s < sp.slot1; s++)
				mx = fmaxf(mx, base[s * BM + li]);
			for (int64_t s = sp.slot0; s < sp.slot1; s++)
				l += pl[s * BM + li] * exp_from(base[s * BM + li], mx);
			if (lane == 0)
				x.lse[bh * x.n + i] = finish_lse(mx, l);
			for (int k = lane; x.o && k < D; k += 32) {
				float sum = 0.0f;
				for (int64_t s = sp.slot0; s < sp.slot1 && l > 0.0f; s++)
					sum += exp_from(base[s * BM + li], mx) * po[(s * BM + li) * D + k];
				x.o[(bh * x.n + i) * D + k] = l > 0.0f ? sum / l : 0.0f;
			}
		}
	}
}

template <typename T, int D> int tiles_launch(const TilesArgs &x, int64_t nitems, int64_t nsplits,
					      cudaStream_t stream)
{
	size_t smem = sizeof(Smem<T, D>);
	dim3 grid((unsigned)nitems, (unsigned)imin(x.slices, (int64_t)65535));

	tiles_kernel<T, D><<<grid, kThreads, smem, stream>>>(x);
	MK_CUDA_CHECK(cudaGetLastError());
	if (nsplits > 0) {
		tiles_merge<D><<<dim3((unsigned)nsplits, grid.y), kThreads, 0, stream>>>(x);
		MK_CUDA_CHECK(cudaGetLastError());
	}
	return 0;
}

template <typename T> int tiles_dispatch_d(const TilesArgs &x, int64_t d, int64_t nitems,
					  int64_t nsplits, cudaStream_t stream)
{
	if (d == 64)
		return tiles_launch<T, 64>(x, nitems, nsplits, stream);
	return tiles_launch<T, 128>(x, nitems, nsplits, stream);
}

/* Above the default 48 KiB for d = 128: opt in (sm_80 allows 163 KiB). */
template <typename T, int D> int tiles_opt_in()
{
	cudaFuncAttributes attr;
	/* fails without an image for the current device */
	MK_CUDA_CHECK(cudaFuncGetAttributes(&attr, tiles_kernel<T, D>));
	MK_CUDA_CHECK(cudaFuncSetAttribute(tiles_kernel<T, D>,
					   cudaFuncAttributeMaxDynamicSharedMemorySize,
					   (int)sizeof(Smem<T, D>)));
	return 0;
}

} // namespace

int mk_cuda_tiles_init(void)
{
	int ret;
	if ((ret = tiles_opt_in<__half, 64>()) || (ret = tiles_opt_in<__half, 128>()) ||
	    (ret = tiles_opt_in<__nv_bfloat16, 64>()))
		return ret;
	return tiles_opt_in<__nv_bfloat16, 128>();
}

size_t mk_cuda_part_floats(int64_t slots, int64_t d)
{
	return (size_t)slots * MK_CUDA_BM * (size_t)(d + 2);
}

int mk_cuda_tiles_pass(const mk_cuda_pass *p)
{
	const mk_cuda_mask *m = p->mask;
	TilesArgs x = {p->a, p->b, p->v, p->bias, p->lse, p->o, p->part, p->slices, p->n, 0,
		       m ? m->tile : 1, m ? m->stride : 0, p->scale, p->kernel, p->transposed,
		       m ? m->bits : nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};
	int64_t nitems = (p->n + BM - 1) / BM, nsplits = 0;

	if ((p->d != 64 && p->d != 128) || (p->kernel != MK_CUDA_DENSE && !m) ||
	    p->dtype == MK_CUDA_F32)
		return mk_cuda_fail(cudaErrorInvalidValue, "tiles pass arguments", __FILE__, __LINE__);
	if (!p->o)
		x.v = nullptr;
	if (p->kernel == MK_CUDA_BLOCK) {
		bool c = p->transposed;
		x.ptr = c ? m->cptr : m->rptr;
		x.idx = c ? m->crow : m->rcol;
		x.full = c ? m->cfull : m->rfull;
		x.items = c ? m->citems : m->ritems;
		x.splits = c ? m->csplits : m->rsplits;
		x.nslots = c ? m->ncslots : m->nrslots;
		nitems = c ? m->ncitems : m->nritems;
		nsplits = c ? m->ncsplits : m->nrsplits;
	}
	if (p->dtype == MK_CUDA_F16)
		return tiles_dispatch_d<__half>(x, p->d, nitems, nsplits, p->stream);
	return tiles_dispatch_d<__nv_bfloat16>(x, p->d, nitems, nsplits, p->stream);
}
