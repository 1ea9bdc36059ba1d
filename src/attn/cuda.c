/*
 * The cuda backend: the engine's interface on an NVIDIA GPU (compute
 * capability 8.0 or later).  The engine hands over float32 tensors on the
 * host; they are uploaded into grow-only device buffers and converted to the
 * compute type there (fp32, fp16 or bf16, always accumulated in fp32).
 * Every normalisation is the CPU backend's sequence of column passes
 * g = LSE_i (s - f) and row passes f = LSE_j (s - g) (cpu.c), each one
 * kernel launch: tensor-core tiles (cuda_tiles.cu) for dense, masked and
 * block in fp16/bf16, a warp per row (cuda_rows.cu) for csr and for fp32.
 * Timing (the time slot) uploads once and times the kernels alone with CUDA
 * events, around enough back-to-back runs to amortise the launch latency.
 * Ran on an H200 (2026-11-28): check_cuda passed, memcheck and synccheck clean.
 */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cuda_dev.h"

_Static_assert(MK_CUDA_DENSE == MK_KERNEL_DENSE && MK_CUDA_MASKED == MK_KERNEL_MASKED &&
	       MK_CUDA_BLOCK == MK_KERNEL_BLOCK && MK_CUDA_CSR == MK_KERNEL_CSR &&
	       MK_CUDA_EGPU == MK_EGPU, "the .cu files use these numbers");

#define CUDA_MAX_HEAD_DIM 128 /* kernels for d = 64 and 128; smaller d is padded */
#define CUDA_F16_MAX 65504.0f

typedef struct cuda_job {
	cuda_state *c;
	mk_attn_kernel kernel;
	const mk_norm *norm;
	const mk_attn_shape *s;
	const mk_cuda_mask *mask;
	int64_t dpad;   /* the kernels' head dimension: 64 or 128 */
	size_t cells;   /* slices * n * dpad */
} cuda_job;

/* ---- uploads ------------------------------------------------------------------ */

/* fp16 has a narrow range: inputs beyond it would turn into inf, then NaN. */
static int cuda_check_range(const cuda_job *j, const float *x, size_t count, const char *what)
{
	if (j->c->dtype != MK_CUDA_F16)
		return MK_OK;
	for (size_t i = 0; i < count; i++)
		if (!(fabsf(x[i]) <= CUDA_F16_MAX)) {
			mk_error_set(MK_ERANGE, "%s[%zu] = %g is outside fp16's range; use bf16 or "
				     "fp32", what, i, (double)x[i]);
			return mk_error_param("dtype");
		}
	return MK_OK;
}

/* One tensor into dst in the compute type, its rows padded to dpad with zeros
 * (zeros add nothing to q.k nor to the output's padding columns). */
static int cuda_upload(const cuda_job *j, const float *x, cuda_buf *dst)
{
	cuda_state *c = j->c;
	size_t elem = c->dtype == MK_CUDA_F32 ? 4 : 2, rows = (size_t)(j->s->batch * j->s->heads *
								      j->s->n);
	size_t d = (size_t)j->s->d, dp = (size_t)j->dpad;
	float *stage;
	int ret;

	if ((ret = mk_cuda_reserve(dst, j->cells * elem)) ||
	    (c->dtype != MK_CUDA_F32 &&
	     (ret = mk_cuda_reserve(&c->stage, j->cells * sizeof(float)))))
		return ret;
	stage = c->dtype == MK_CUDA_F32 ? dst->p : c->stage.p;
	if (d == dp) {
		MK_CUDA_CHECK(cudaMemcpyAsync(stage, x, j->cells * sizeof *x, cudaMemcpyHostToDevice,
					      c->stream));
	} else {
		MK_CUDA_CHECK(cudaMemsetAsync(stage, 0, j->cells * sizeof *x, c->stream));
		MK_CUDA_CHECK(cudaMemcpy2DAsync(stage, dp * sizeof *x, x, d * sizeof *x,
						d * sizeof *x, rows, cudaMemcpyHostToDevice,
						c->stream));
	}
	if (c->dtype == MK_CUDA_F32)
		return MK_OK;
	return mk_cuda_convert(stage, dst->p, j->cells, c->dtype, c->stream);
}

static int cuda_upload_all(cuda_job *j, const float *q, const float *k, const float *v)
{
	cuda_state *c = j->c;
	size_t count = (size_t)(j->s->batch * j->s->heads * j->s->n * j->s->d);
	size_t nf = (size_t)(j->s->batch * j->s->heads * j->s->n) * sizeof(float);
	int ret;

	j->dpad = j->s->d <= 64 ? 64 : 128;
	j->cells = (size_t)(j->s->batch * j->s->heads * j->s->n) * (size_t)j->dpad;
	if ((ret = cuda_check_range(j, q, count, "q")) || (ret = cuda_check_range(j, k, count, "k")) ||
	    (ret = cuda_check_range(j, v, count, "v")))
		return ret;
	if ((ret = cuda_upload(j, q, &c->q)) || (ret = cuda_upload(j, k, &c->k)) ||
	    (ret = cuda_upload(j, v, &c->v)) ||
	    (ret = mk_cuda_reserve(&c->o, j->cells * sizeof(float))) ||
	    (ret = mk_cuda_reserve(&c->f, nf)) || (ret = mk_cuda_reserve(&c->g, nf)))
		return ret;
	if (j->norm->kind == MK_NORM_HNAS)
		return mk_cuda_reserve(&c->o2, j->cells * sizeof(float));
	return MK_OK;
}

/* The block kernel's split pieces: (max, sum, output row) per slot row. */
static int cuda_reserve_part(cuda_job *j)
{
	int64_t slots;
	if (j->kernel != MK_KERNEL_BLOCK || !j->mask)
		return MK_OK;
	slots = j->mask->nrslots > j->mask->ncslots ? j->mask->nrslots : j->mask->ncslots;
	return mk_cuda_reserve(&j->c->part, (size_t)(j->s->batch * j->s->heads) *
				       mk_cuda_part_floats(slots, j->dpad) * sizeof(float));
}

/* ---- the normalisations ------------------------------------------------------------ */

static int cuda_pass(const cuda_job *j, bool column, const float *bias, float *lse, float *o)
{
	cuda_state *c = j->c;
	mk_cuda_pass p = {
		.kernel = (int)j->kernel, .dtype = c->dtype, .slices = j->s->batch * j->s->heads,
		.n = j->s->n, .d = j->dpad, .scale = (float)(1.0 / sqrt((double)j->s->d)),
		.a = column ? c->k.p : c->q.p, .b = column ? c->q.p : c->k.p,
		.v = o ? c->v.p : NULL, .bias = bias, .lse = lse, .o = o, .transposed = column,
		.mask = j->mask, .part = c->part.p, .stream = c->stream};

	if (j->kernel == MK_KERNEL_CSR || c->dtype == MK_CUDA_F32)
		return mk_cuda_rows_pass(&p);
	return mk_cuda_tiles_pass(&p);
}

/* K rounds of (column, row) passes from f = 0; the last row pass makes o. */
static int cuda_sinkhorn(const cuda_job *j, int rounds, float *o)
{
	cuda_state *c = j->c;
	size_t nf = (size_t)(j->s->batch * j->s->heads * j->s->n);
	int ret = mk_cuda_fill(c->f.p, 0.0f, nf, c->stream);

	for (int r = 1; r <= rounds && ret == MK_OK; r++) {
		ret = cuda_pass(j, true, c->f.p, c->g.p, NULL);
		if (ret == MK_OK)
			ret = cuda_pass(j, false, c->g.p, c->f.p, r == rounds ? o : NULL);
	}
	return ret;
}

/* Queues the whole normalisation on the stream; the output lands in c->o. */
static int cuda_norm(const cuda_job *j)
{
	cuda_state *c = j->c;
	int ret;

	switch (j->norm->kind) {
	case MK_NORM_SOFTMAX:
		return cuda_pass(j, false, NULL, c->f.p, c->o.p);
	case MK_NORM_DNAS:
		return cuda_sinkhorn(j, 1, c->o.p);
	case MK_NORM_SINKHORN:
		return cuda_sinkhorn(j, j->norm->iters, c->o.p);
	default: /* hnas: u * dnas + (1 - u) * softmax; f ends as softmax's */
		if ((ret = cuda_sinkhorn(j, 1, c->o.p)) ||
		    (ret = cuda_pass(j, false, NULL, c->f.p, c->o2.p)))
			return ret;
		return mk_cuda_blend(c->o.p, c->o2.p, j->norm->u, j->cells, c->stream);
	}
}

/* The output (unpadded) and the empty rows of the first slice (f = -inf). */
static int cuda_download(const cuda_job *j, float *o, mk_attn_stats *st)
{
	cuda_state *c = j->c;
	size_t d = (size_t)j->s->d, dp = (size_t)j->dpad, n = (size_t)j->s->n;
	size_t rows = (size_t)(j->s->batch * j->s->heads) * n;
	float *f = malloc(n * sizeof *f);
	cudaError_t err;

	if (!f)
		return mk_error_set(MK_ENOMEM, "out of memory for %zu row scalings", n);
	/* the kernels' errors surface here, at the first synchronisation */
	err = cudaMemcpy2DAsync(o, d * sizeof *o, c->o.p, dp * sizeof *o, d * sizeof *o, rows,
				cudaMemcpyDeviceToHost, c->stream);
	if (err == cudaSuccess)
		err = cudaMemcpyAsync(f, c->f.p, n * sizeof *f, cudaMemcpyDeviceToHost, c->stream);
	if (err == cudaSuccess)
		err = cudaStreamSynchronize(c->stream);
	if (err != cudaSuccess) {
		free(f);
		return mk_cuda_fail(err, "the attention kernels or the download of their output",
				    __FILE__, __LINE__);
	}
	st->empty_rows = 0;
	for (size_t i = 0; i < n; i++)
		st->empty_rows += isinf(f[i]) && f[i] < 0;
	free(f);
	for (size_t i = 0; i < rows * d; i++)
		if (!isfinite(o[i]))
			return mk_error_set(MK_ERANGE, "attention scores overflow the compute type "
					    "(the inputs are too large)");
	return MK_OK;
}

/* ---- the backend's slots ------------------------------------------------------------- */

static int cuda_setup(cuda_job *j, cuda_state *c, mk_attn_kernel kernel, const mk_norm *norm,
		      const mk_attn_shape *s, const mk_attn_layout *l, mk_cuda_mask **temp)
{
	int ret;
	*j = (cuda_job){.c = c, .kernel = kernel, .norm = norm, .s = s};
	if (!c->ready && ((ret = mk_cuda_probe(c)) ||
			  (ret = mk_cuda_select(c, c->device >= 0 ? c->device : c->usable,
						(mk_compute)c->dtype))))
		return ret;
	MK_CUDA_CHECK(cudaSetDevice(j->c->device));
	return mk_cuda_mask_get(l, c->device, (int)kernel, &j->mask, temp);
}

/* calls back-to-back runs between two events on the stream: seconds per run. */
static int cuda_time_calls(const cuda_job *j, int calls, double *secs)
{
	float ms = 0.0f;
	int ret;
	MK_CUDA_CHECK(cudaEventRecord(j->c->ev[0], j->c->stream));
	for (int k = 0; k < calls; k++)
		if ((ret = cuda_norm(j)))
			return ret;
	MK_CUDA_CHECK(cudaEventRecord(j->c->ev[1], j->c->stream));
	MK_CUDA_CHECK(cudaEventSynchronize(j->c->ev[1]));
	MK_CUDA_CHECK(cudaEventElapsedTime(&ms, j->c->ev[0], j->c->ev[1]));
	*secs = 1e-3 * (double)ms / calls;
	return MK_OK;
}

/* Runs per event pair, so that a pair spans about CUDA_TIMED_SPAN seconds:
 * a single short run would time its launch latency as much as its kernels. */
#define CUDA_TIMED_SPAN 1e-3
#define CUDA_MAX_CALLS 100

static int cuda_calls(double one)
{
	double calls = one > 0.0 ? CUDA_TIMED_SPAN / one : CUDA_MAX_CALLS;
	return calls < 1.0 ? 1 : calls > CUDA_MAX_CALLS ? CUDA_MAX_CALLS : (int)calls;
}

/* One run (secs NULL), or warmup runs, a calibration run, then reps timed
 * event pairs on inputs uploaded once; then the output comes back.  Each run
 * writes the whole output, so repeating one changes nothing. */
static int cuda_exec(cuda_state *c, mk_attn_kernel kernel, const mk_norm *norm,
		     const mk_attn_shape *s,
		     const float *q, const float *k, const float *v, const mk_attn_layout *mask,
		     int warmup, int reps, double *secs, float *o, mk_attn_stats *st)
{
	cuda_job j;
	mk_cuda_mask *temp = NULL;
	double one = 0.0;
	int ret, calls = 1;

	if ((ret = cuda_setup(&j, c, kernel, norm, s, mask, &temp)) ||
	    (ret = cuda_upload_all(&j, q, k, v)) || (ret = cuda_reserve_part(&j)))
		goto out;
	if (!secs)
		ret = cuda_norm(&j);
	for (int w = 0; secs && w < warmup && !ret; w++)
		ret = cuda_norm(&j);
	if (secs && !ret && !(ret = cuda_time_calls(&j, 1, &one)))
		calls = cuda_calls(one);
	for (int r = 0; secs && r < reps && !ret; r++)
		ret = cuda_time_calls(&j, calls, &secs[r]);
	if (!ret)
		ret = cuda_download(&j, o, st);
out:
	if (temp) {
		(void)cudaStreamSynchronize(j.c->stream);
		mk_cuda_mask_free(temp);
	}
	return ret;
}

/* o comes back from the device whole: progress hears of it once, at the end */
static int cuda_run(const mk_attn_backend *b, mk_attn_kernel kernel, const mk_norm *norm,
		    const mk_attn_shape *s, const float *q, const float *k, const float *v,
		    const mk_attn_layout *mask, float *o, mk_attn_stats *st,
		    mk_progress_fn progress, void *parg)
{
	int ret = cuda_exec(b->ctx, kernel, norm, s, q, k, v, mask, 0, 0, NULL, o, st);

	if (ret == MK_OK && progress)
		progress(s->batch * s->heads, s->batch * s->heads, parg);
	return ret;
}

static int cuda_time(const mk_attn_backend *b, mk_attn_kernel kernel, const mk_norm *norm,
		     const mk_attn_shape *s, const float *q, const float *k, const float *v,
		     const mk_attn_layout *mask, int warmup, int reps, double *secs, float *o,
		     mk_attn_stats *st)
{
	return cuda_exec(b->ctx, kernel, norm, s, q, k, v, mask, warmup, reps, secs, o, st);
}

/* The backend's buffers, stream and events; the device copies of layouts
 * stay with their layouts. */
static void cuda_release_slot(const mk_attn_backend *b)
{
	cuda_state *c = b->ctx;
	if (c->stream)
		(void)cudaStreamSynchronize(c->stream);
	mk_cuda_release(c);
}

static int cuda_configure(const mk_attn_backend *b, int device, mk_compute dtype)
{
	return mk_cuda_select(b->ctx, device, dtype);
}

static int cuda_devices(const mk_attn_backend *b)
{
	cuda_state *c = b->ctx;
	return mk_cuda_probe(c) == MK_OK ? c->count : 0;
}

/* The layout, with its device copy made once here rather than at each run. */
static int cuda_prepare(const mk_attn_backend *b, const mk_mask *m, int64_t tile,
			uint64_t max_memory, mk_attn_layout **out)
{
	mk_cuda_mask *dev = NULL;
	cuda_state *c = b->ctx;
	int ret;

	if ((ret = mk_attn_layout_new(m, tile, max_memory, out)))
		return ret;
	if ((!c->ready && ((ret = mk_cuda_probe(c)) ||
			   (ret = mk_cuda_select(c, c->device >= 0 ? c->device : c->usable,
						 (mk_compute)c->dtype)))) ||
	    (ret = mk_cuda_mask_upload(*out, &dev))) {
		mk_attn_layout_free(*out);
		*out = NULL;
		return ret;
	}
	(*out)->dev = dev;
	(*out)->dev_free = mk_cuda_mask_free;
	return MK_OK;
}

/* The clock of the run slot: the device's queue drained first. */
static double cuda_clock(const mk_attn_backend *b)
{
	struct timespec t;
	const cuda_state *c = b->ctx;
	if (c->stream)
		(void)cudaStreamSynchronize(c->stream);
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static const mk_attn_backend attn_cuda = {
	.name = "cuda",
	.kernels = (1u << MK_KERNEL_DENSE) | (1u << MK_KERNEL_MASKED) | (1u << MK_KERNEL_BLOCK) |
		   (1u << MK_KERNEL_CSR),
	.max_head_dim = CUDA_MAX_HEAD_DIM,
	.dtypes = (1u << MK_COMPUTE_FP32) | (1u << MK_COMPUTE_FP16) | (1u << MK_COMPUTE_BF16),
	.prepare = cuda_prepare,
	.clock = cuda_clock,
	.run = cuda_run,
	.configure = cuda_configure,
	.time = cuda_time,
	.devices = cuda_devices,
	.describe = mk_cuda_describe,
	.release = cuda_release_slot,
	.ctx = &mk_cuda_global,
};

const mk_attn_backend *mk_attn_cuda_get(void)
{
	return mk_cuda_probe(attn_cuda.ctx) ? NULL : &attn_cuda;
}
