/* Shared by the cuda backend's host file (cuda.c, C) and its kernels (the
 * .cu files, C++): plain structs and one C-callable entry per kernel family.
 * Device pointers are plain pointers here; the .cu files cast them. */
#ifndef MK_CUDA_INTERNAL_H
#define MK_CUDA_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>
#include "block_plan.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MK_CUDA_EGPU (-6) /* MK_EGPU, for the .cu files that do not see maskkit.h */

/* Records the failed call, file and line (mk_error_set) and returns MK_EGPU. */
int mk_cuda_fail(cudaError_t err, const char *what, const char *file, int line);

/* Returns MK_EGPU from the calling function when x fails (never aborts). */
#define MK_CUDA_CHECK(x)                                                          \
	do {                                                                      \
		cudaError_t mk_cuda_err_ = (x);                                   \
		if (mk_cuda_err_ != cudaSuccess)                                  \
			return mk_cuda_fail(mk_cuda_err_, #x, __FILE__, __LINE__); \
	} while (0)

/* mk_attn_kernel's values (cuda.c checks that they agree). */
#define MK_CUDA_DENSE 0
#define MK_CUDA_MASKED 1
#define MK_CUDA_BLOCK 2
#define MK_CUDA_CSR 3

typedef enum mk_cuda_dtype { MK_CUDA_F32, MK_CUDA_F16, MK_CUDA_BF16 } mk_cuda_dtype;

/* Rows a tile kernel's thread block reduces, and keys it stages at once. */
#define MK_CUDA_BM 64
#define MK_CUDA_BN 64

/* A mask on the device (the layout's arrays, int64 offsets, int32 indices). */
typedef struct mk_cuda_mask {
	int device;                      /* where it lives */
	int64_t n, tile, nt;
	int64_t stride;                  /* words per bit row */
	const uint64_t *bits;            /* n x stride */
	const int64_t *rptr, *cptr;      /* tile lists by rows and by columns */
	const int32_t *rcol, *crow;
	const uint8_t *rfull, *cfull;
	const int64_t *ptr, *cscptr;     /* CSR and its transpose (CSC), NULL
					  * until the first csr run */
	const int32_t *col, *cscrow;
	const mk_block_item *ritems, *citems; /* block plans, by rows and by columns */
	const mk_block_split *rsplits, *csplits;
	int64_t nritems, ncitems, nrsplits, ncsplits, nrslots, ncslots;
} mk_cuda_mask;

/* One reduction lse_a = LSE_b (scale a.b - bias_b) over the cells the
 * kernel visits, for every (batch, head) slice (see attn.h): the row
 * pass (a = Q, b = K, bias g, o = P V when v is set) or the column pass
 * (a = K, b = Q, bias f, transposed). */
typedef struct mk_cuda_pass {
	int kernel;                /* mk_attn_kernel */
	mk_cuda_dtype dtype;
	int64_t slices, n, d;
	float scale;
	const void *a, *b, *v;     /* slices x n x d of dtype */
	const float *bias;         /* slices x n, or NULL for 0 */
	float *lse;                /* slices x n */
	float *o;                  /* slices x n x d, or NULL without v */
	bool transposed;           /* cell (a, b) is mask bit (b, a) */
	const mk_cuda_mask *mask;  /* NULL for dense */
	float *part;               /* split pieces' states: block kernel only */
	cudaStream_t stream;
} mk_cuda_pass;

/* Floats of split-piece state the block kernel needs per slice. */
size_t mk_cuda_part_floats(int64_t slots, int64_t d);

/* cuda_tiles.cu, on the current device: MK_CUDA_EGPU when the build has no
 * kernel image for it; else opts the kernels into their shared memory (once
 * per device, not at each launch). */
int mk_cuda_tiles_init(void);
/* cuda_tiles.cu: dense, masked and block with tensor cores (fp16, bf16). */
int mk_cuda_tiles_pass(const mk_cuda_pass *p);
/* cuda_rows.cu: a warp per reduced row; csr in every dtype, and dense,
 * masked and block in fp32 (which tensor cores would round to tf32). */
int mk_cuda_rows_pass(const mk_cuda_pass *p);
/* cuda_util.cu: float32 to dtype, o = u * o + (1 - u) * other, and the
 * count of -inf in x[0..n). */
int mk_cuda_convert(const float *src, void *dst, size_t count, mk_cuda_dtype dtype,
		    cudaStream_t stream);
int mk_cuda_blend(float *o, const float *other, double u, size_t count, cudaStream_t stream);
int mk_cuda_fill(float *x, float value, size_t count, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
