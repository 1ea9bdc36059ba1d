/* The cuda backend's host state (cuda_dev.c), shared with cuda.c. */
#ifndef MK_CUDA_DEV_H
#define MK_CUDA_DEV_H

#include "attn_internal.h"
#include "cuda_internal.h"

/* A device buffer that only grows, so that repeated runs do not allocate. */
typedef struct cuda_buf {
	void *p;
	size_t cap; /* bytes */
} cuda_buf;

typedef struct cuda_state {
	int probed, count;        /* devices, once probed */
	int usable;               /* the first usable device, or -1 */
	char why[200];            /* why none is usable */
	int device;               /* selected, -1 before the first configure */
	int ready;                /* stream, events and kernels set up on device */
	mk_cuda_dtype dtype;
	cudaStream_t stream;
	cudaEvent_t ev[2];
	/* q, k, v in dtype; o, o2 (hnas) and f, g in float32; staging for
	 * float32 inputs before conversion; split pieces' states */
	cuda_buf q, k, v, o, o2, f, g, stage, part;
} cuda_state;

extern cuda_state mk_cuda_global; /* the backend's ctx */
/* Probes the devices once: MK_OK, or MK_EINVAL with "no usable CUDA device". */
int mk_cuda_probe(cuda_state *c);
/* Selects device and dtype; frees the buffers of another device. */
int mk_cuda_select(cuda_state *c, int device, mk_compute dtype);
/* Frees the buffers, stream and events; the next run selects again. */
void mk_cuda_release(cuda_state *c);
int mk_cuda_reserve(cuda_buf *b, size_t bytes);
/* The layout's device copy for kernel on device (the current one): the one
 * prepared with l, else uploaded for the run (*temp set: the caller frees it
 * with mk_cuda_mask_free after the run). */
int mk_cuda_mask_get(const mk_attn_layout *l, int device, int kernel, const mk_cuda_mask **out,
		     mk_cuda_mask **temp);
int mk_cuda_mask_upload(const mk_attn_layout *l, mk_cuda_mask **out);
void mk_cuda_mask_free(void *m); /* NULL-safe */
void mk_cuda_describe(const mk_attn_backend *b, mk_machine *m);

#endif
