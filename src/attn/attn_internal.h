/* Shared by the attention engine's files (src/attn/). */
#ifndef MK_ATTN_INTERNAL_H
#define MK_ATTN_INTERNAL_H

#include <stdint.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "attn.h"
#include "attn_backend.h"

/* Vector clones of hot loops: the build targets baseline x86-64, whose
 * SSE2 would make the exponentials cost more than the two products.  The
 * x86-64-v3 and v4 levels bring FMA, and fp-contract lets polynomials use
 * it (ISO C mode leaves contraction off): the exponential takes a third
 * fewer instructions. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__ELF__)
#define MK_ATTN_CLONES                                                                      \
	__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"),       \
		       optimize("fp-contract=fast")))
#else
#define MK_ATTN_CLONES
#endif

static inline bool mk_attn_in_parallel(void)
{
#ifdef _OPENMP
	return omp_in_parallel();
#else
	return false;
#endif
}

struct mk_attn_layout {
	int64_t n, tile, nt;        /* rows (queries), tile size, nt = ceil(n / tile) */
	int64_t kv, nt_kv;          /* columns (keys) and their tiles: n and nt when square */
	size_t stride;              /* words per bit row */
	uint64_t *bits;             /* n x stride: the element mask */
	/* row view: query-tile r has tiles rptr[r] .. rptr[r+1]-1, key-tile
	 * index rcol[], rfull[] = 1 when every cell of the tile is set */
	int64_t *rptr, *rcol;
	uint8_t *rfull;
	/* column view (nt_kv + 1 offsets): key-tile c has query tiles
	 * cptr[c] .. cptr[c+1]-1 */
	int64_t *cptr, *crow;
	uint8_t *cfull;
	/* CSR of the entries: row i's columns are col[ptr[i] .. ptr[i+1]-1] */
	int64_t *ptr;
	int32_t *col;
	uint64_t nnz;
	int64_t nonempty_tiles, empty_rows;
	/* a copy on a device, owned by the backend that prepared the layout
	 * (freed with it through dev_free) */
	void *dev;
	void (*dev_free)(void *dev);
};

static inline int mk_attn_bit(const mk_attn_layout *l, int64_t i, int64_t j)
{
	return (int)((l->bits[(size_t)i * l->stride + (size_t)(j >> 6)] >> (j & 63)) & 1);
}

/* The CPU backend's kernels (cpu_tiles.c: dense, masked, block; cpu_csr.c: csr).
 * Each runs one (batch, head) slice: q and o are n x d, k and v kv x d; f (n)
 * and g (kv) are the log-domain row and column scalings (see attn.h). */
typedef struct mk_attn_slice {
	int64_t n, d;
	int64_t kv; /* keys */
	float scale; /* 1 / sqrt(d) */
	const float *q, *k, *v;
	float *o;
	const mk_attn_layout *mask; /* NULL: dense */
	mk_attn_kernel kernel;
	bool bf16; /* the tiled kernels round Q, K, V and P to bf16 (sums stay float32) */
} mk_attn_slice;

/* g_j = LSE_i (s_ij - f_i) over the entries the kernel visits (-inf for an
 * empty column). */
int mk_cpu_tiles_col_pass(const mk_attn_slice *x, const float *f, float *g);
/* f_i = LSE_j (s_ij - g_j) (g NULL: 0), and when o is set in x, o_i =
 * sum_j exp(s_ij - g_j - f_i) v_j (a zero row where f_i = -inf). */
int mk_cpu_tiles_row_pass(const mk_attn_slice *x, const float *g, float *f, bool with_v);
/* softmax (the row pass with V, g = 0) over count slices of one shape and
 * mask (cpu_heads.c): f of slice h at lse + h n.  Their work items form one
 * list over the threads, where the slices one by one met at each end.
 * progress (may be NULL) hears of the slices whose o is final, in order. */
int mk_cpu_tiles_softmax_slices(const mk_attn_slice *xs, int64_t count, float *lse,
				mk_progress_fn progress, void *parg);
/* The CSR transposed: column j's rows, increasing, are row[cptr[j] ..
 * cptr[j+1]-1] (malloc'ed; both NULL on failure, with a message). */
int mk_attn_csr_transpose(const mk_attn_layout *l, int64_t **cptr, int32_t **row);
int mk_cpu_csr_col_pass(const mk_attn_slice *x, const float *f, float *g);
int mk_cpu_csr_row_pass(const mk_attn_slice *x, const float *g, float *f, bool with_v);

#endif
