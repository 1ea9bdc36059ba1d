/*
 * The attention backends' table (private to the library, as ggml keeps
 * ggml-backend-impl.h): what a backend implements, and the backends built
 * in.  Users hold a backend as the opaque mk_attn_backend of attn.h.
 */
#ifndef MK_ATTN_BACKEND_H
#define MK_ATTN_BACKEND_H

#include "mask.h"
#include "attn.h"

/* A backend: a small table of function pointers, filled with designated
 * initialisers; optional slots may be NULL. */
struct mk_attn_backend {
	const char *name;
	unsigned kernels;     /* bit (1u << k) for each supported mk_attn_kernel */
	int64_t max_head_dim;
	unsigned dtypes;      /* bit (1u << t) for each mk_compute t it computes in */
	/* The mask in the layout the kernels need (NULL: mk_attn_layout_new). */
	int (*prepare)(const struct mk_attn_backend *b, const mk_mask *m, int64_t tile,
		       uint64_t max_memory, mk_attn_layout **out);
	/* A timestamp in seconds taken once the backend's queued work has
	 * finished (a GPU synchronises first); NULL: the monotonic clock. */
	double (*clock)(const struct mk_attn_backend *b);
	/* mask may be NULL for MK_KERNEL_DENSE only; its n must equal s->n.
	 * progress (may be NULL) as in mk_attn_run_progress. */
	int (*run)(const struct mk_attn_backend *b, mk_attn_kernel kernel, const mk_norm *norm,
		   const mk_attn_shape *s, const float *q, const float *k, const float *v,
		   const mk_attn_layout *mask, float *o, mk_attn_stats *st,
		   mk_progress_fn progress, void *parg);
	/* Selects the device and compute type for later runs (mk_attn_configure
	 * has checked that dtype is one of dtypes); NULL: one device. */
	int (*configure)(const struct mk_attn_backend *b, int device, mk_compute dtype);
	/* Runs reps + warmup times on inputs uploaded once, timing each of the
	 * last reps runs on the device (secs[reps], seconds per run; a GPU may
	 * time several back-to-back runs for each entry, to amortise launch
	 * latency); o and st as in run.  NULL: the caller times run with clock. */
	int (*time)(const struct mk_attn_backend *b, mk_attn_kernel kernel, const mk_norm *norm,
		    const mk_attn_shape *s, const float *q, const float *k, const float *v,
		    const mk_attn_layout *mask, int warmup, int reps, double *secs, float *o,
		    mk_attn_stats *st);
	/* Devices this backend can run on (MPI ranks on a node take one each);
	 * NULL: 1. */
	int (*devices)(const struct mk_attn_backend *b);
	/* Fills the accelerator fields of a machine description; may be NULL. */
	void (*describe)(const struct mk_attn_backend *b, mk_machine *m);
	/* Frees what the backend holds between runs (device buffers, streams);
	 * a later run sets them up again.  NULL: nothing to free. */
	void (*release)(const struct mk_attn_backend *b);
	void *ctx;
};

/* The cpu backend (cpu.c). */
extern const mk_attn_backend mk_attn_cpu;
/* The cuda backend (cuda.c), or NULL with a message when no device is usable. */
const mk_attn_backend *mk_attn_cuda_get(void);

/* b->release, when the backend has one (see there). */
void mk_attn_release(const mk_attn_backend *b);

#endif
