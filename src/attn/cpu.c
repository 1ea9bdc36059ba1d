/*
 * The CPU backend: float32, one (batch, head) slice after another, each
 * kernel parallel inside (OpenMP over query tiles or rows).  Every
 * normalisation is a sequence of two primitives (attn.h): a column pass
 * g = LSE_i (s - f) and a row pass f = LSE_j (s - g) with, the last time,
 * the output.  softmax is one row pass; sinkhorn:K is K (column, row)
 * rounds; dnas is sinkhorn:1; hnas blends the dnas and softmax outputs.
 */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <cblas.h>
#include "attn_internal.h"
#include "cpu_ukernel.h"
#include "internal.h"

#define MK_CPU_MAX_HEAD_DIM 1024
#define MK_CPU_SLICE_WORK ((int64_t)1 << 20) /* n^2 d: below it, slices go to threads */

typedef int (*cpu_col_fn)(const mk_attn_slice *x, const float *f, float *g);
typedef int (*cpu_row_fn)(const mk_attn_slice *x, const float *g, float *f, bool with_v);

static int cpu_overflow(void)
{
	return mk_error_set(MK_ERANGE, "attention scores overflow float32 (the inputs are too "
			    "large)");
}

/* A scaling is finite, or -inf for a row or column with no entry.  The
 * engine refuses inputs whose scores could overflow (mk_attn_check_scores);
 * this is the backend's own guard, for callers of run: a NaN or +inf
 * scaling read by the next pass as "no entry" would zero rows silently. */
static bool cpu_scalings_bad(const float *x, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		if (isnan(x[i]) || x[i] == INFINITY)
			return true;
	return false;
}

static int cpu_check_scalings(const float *x, int64_t n)
{
	return cpu_scalings_bad(x, n) ? cpu_overflow() : MK_OK;
}

/* K rounds of column then row scaling from f = 0; rows >= 1 scale V. */
static int cpu_sinkhorn(const mk_attn_slice *x, int rounds, float *f, float *g)
{
	bool csr = x->kernel == MK_KERNEL_CSR;
	cpu_col_fn col = csr ? mk_cpu_csr_col_pass : mk_cpu_tiles_col_pass;
	cpu_row_fn row = csr ? mk_cpu_csr_row_pass : mk_cpu_tiles_row_pass;
	int ret = MK_OK;

	for (int64_t i = 0; i < x->n; i++)
		f[i] = 0.0f;
	for (int r = 1; r <= rounds && ret == MK_OK; r++) {
		ret = col(x, f, g);
		if (ret == MK_OK)
			ret = cpu_check_scalings(g, x->kv);
		if (ret == MK_OK)
			ret = row(x, g, f, r == rounds);
	}
	return ret;
}

static int cpu_softmax(const mk_attn_slice *x, float *f)
{
	return x->kernel == MK_KERNEL_CSR ? mk_cpu_csr_row_pass(x, NULL, f, true)
					  : mk_cpu_tiles_row_pass(x, NULL, f, true);
}

/* hnas: o = u * dnas + (1 - u) * softmax, through a second output. */
static int cpu_hnas(mk_attn_slice *x, double u, float *f, float *g)
{
	size_t cells = (size_t)x->n * (size_t)x->d;
	float *soft = malloc(cells * sizeof *soft), *o = x->o;
	int ret;

	if (!soft)
		return mk_error_set(MK_ENOMEM, "out of memory for hnas (%zu floats)", cells);
	ret = cpu_sinkhorn(x, 1, f, g);
	x->o = soft;
	if (ret == MK_OK)
		ret = cpu_softmax(x, f);
	x->o = o;
	for (size_t c = 0; ret == MK_OK && c < cells; c++)
		o[c] = (float)(u * o[c] + (1.0 - u) * soft[c]);
	free(soft);
	return ret;
}

static int cpu_slice(mk_attn_slice *x, const mk_norm *norm, float *f, float *g)
{
	switch (norm->kind) {
	case MK_NORM_SOFTMAX:
		return cpu_softmax(x, f);
	case MK_NORM_DNAS:
		return cpu_sinkhorn(x, 1, f, g);
	case MK_NORM_SINKHORN:
		return cpu_sinkhorn(x, norm->iters, f, g);
	default:
		return cpu_hnas(x, norm->u, f, g);
	}
}

/* Rows with no entry end with f = -inf (hnas: both runs agree on them). */
static int64_t cpu_empty_rows(const float *f, int64_t n)
{
	int64_t e = 0;
	for (int64_t i = 0; i < n; i++)
		e += isinf(f[i]) && f[i] < 0;
	return e;
}

/* Finite inputs can still give scores beyond float32 (q.k over 3.4e38):
 * an error, never NaN in the output. */
static int cpu_check_finite(const float *o, size_t count)
{
	return mk_floats_nonfinite_all(o, count) ? cpu_overflow() : MK_OK;
}

/* The compute type of later runs (mk_attn_configure), process-wide as the
 * backend is: bf16 rounds Q, K, V and the weights to bfloat16 in the tiled
 * kernels (dense, masked, block; csr stays float32) and sums in float32. */
static mk_compute cpu_dtype = MK_COMPUTE_FP32;

static int cpu_threads(bool across)
{
#ifdef _OPENMP
	return across ? omp_get_max_threads() : 1;
#else
	(void)across;
	return 1;
#endif
}

static int cpu_thread(void)
{
#ifdef _OPENMP
	return omp_get_thread_num();
#else
	return 0;
#endif
}

/* One run's inputs and its first error (message per thread, so a failing
 * slice's is carried back to the caller's). */
typedef struct cpu_job {
	mk_attn_kernel kernel;
	const mk_norm *norm;
	const mk_attn_shape *s;
	const float *q, *k, *v;
	const mk_attn_layout *mask;
	float *o;
	mk_attn_stats *st;
	int ret;
	char msg[512];
} cpu_job;

/* Slice bh of the job's tensors. */
static mk_attn_slice cpu_slice_of(const cpu_job *j, int64_t bh)
{
	const mk_attn_shape *s = j->s;
	int64_t kv = mk_attn_kv(s);
	size_t at = (size_t)bh * (size_t)s->n * (size_t)s->d;
	size_t kat = (size_t)bh * (size_t)kv * (size_t)s->d;

	return (mk_attn_slice){.n = s->n, .kv = kv, .d = s->d,
			       .scale = (float)(1.0 / sqrt((double)s->d)), .q = j->q + at,
			       .k = j->k + kat, .v = j->v + kat, .o = j->o + at, .mask = j->mask,
			       .kernel = j->kernel, .bf16 = cpu_dtype == MK_COMPUTE_BF16};
}

/* Slice bh, with the scalings f (n + kv floats of the calling thread). */
static void cpu_run_slice(cpu_job *j, int64_t bh, float *f)
{
	const mk_attn_shape *s = j->s;
	size_t slice = (size_t)s->n * (size_t)s->d;
	mk_attn_slice x = cpu_slice_of(j, bh);
	int r;

	#pragma omp atomic read
	r = j->ret;
	if (r != MK_OK)
		return;
	r = cpu_slice(&x, j->norm, f, f + s->n);
	if (r == MK_OK)
		r = cpu_check_finite(x.o, slice);
	if (r == MK_OK)
		r = cpu_check_scalings(f, s->n);
	if (r != MK_OK) {
		#pragma omp critical(mk_cpu_error)
		if (j->msg[0] == '\0') {
			snprintf(j->msg, sizeof j->msg, "%s", mk_error());
			#pragma omp atomic write
			j->ret = r;
		}
	} else if (bh == 0) {
		j->st->empty_rows = cpu_empty_rows(f, s->n);
	}
}

/* The slices a run reports finished, checked as cpu_run_slice checks each
 * before they are passed on: a caller told that a slice is final must not
 * hear of an error in it afterwards.  Runs on a worker thread (whose error
 * message the caller would not see): it only notes a bad slice. */
typedef struct cpu_checked {
	const cpu_job *j;
	const float *f;
	int64_t done; /* slices checked */
	bool bad;
	mk_progress_fn progress;
	void *parg;
} cpu_checked;

static void cpu_check_progress(int64_t done, int64_t slices, void *arg)
{
	cpu_checked *c = arg;
	const mk_attn_shape *s = c->j->s;
	size_t slice = (size_t)s->n * (size_t)s->d;

	for (; c->done < done && !c->bad; c->done++)
		c->bad = mk_floats_nonfinite_all(c->j->o + (size_t)c->done * slice, slice) ||
			 cpu_scalings_bad(c->f + c->done * s->n, s->n);
	if (!c->bad && c->progress)
		c->progress(done, slices, c->parg);
}

/* softmax on the tiled kernels, every slice at once (their work items one
 * list over the threads: mk_cpu_tiles_softmax_slices), each slice checked
 * as cpu_run_slice checks one, as it is finished. */
static int cpu_run_softmax_slices(const cpu_job *j, mk_progress_fn progress, void *parg)
{
	const mk_attn_shape *s = j->s;
	int64_t slices = s->batch * s->heads;
	mk_attn_slice *xs = malloc((size_t)slices * sizeof *xs);
	float *f = malloc((size_t)slices * (size_t)s->n * sizeof *f);
	cpu_checked c = {.j = j, .f = f, .progress = progress, .parg = parg};
	int ret;

	if (!xs || !f) {
		ret = mk_error_set(MK_ENOMEM, "out of memory for %lld attention slices",
				   (long long)slices);
		goto cleanup;
	}
	for (int64_t bh = 0; bh < slices; bh++)
		xs[bh] = cpu_slice_of(j, bh);
	ret = mk_cpu_tiles_softmax_slices(xs, slices, f, cpu_check_progress, &c);
	if (ret == MK_OK && !c.bad && c.done < slices) /* a guard: a run reports them all */
		cpu_check_progress(slices, slices, &c);
	if (ret == MK_OK && c.bad)
		ret = cpu_overflow();
	if (ret == MK_OK)
		j->st->empty_rows = cpu_empty_rows(f, s->n);
cleanup:
	free(xs);
	free(f);
	return ret;
}

/* Small slices (below MK_CPU_SLICE_WORK) are spread over the threads whole;
 * large ones one at a time, each kernel parallel inside.  The error message
 * is per thread, so a failing slice's is carried back to the caller's. */
static int cpu_run(const mk_attn_backend *b, mk_attn_kernel kernel, const mk_norm *norm,
		   const mk_attn_shape *s, const float *q, const float *k, const float *v,
		   const mk_attn_layout *mask, float *o, mk_attn_stats *st,
		   mk_progress_fn progress, void *parg)
{
	int64_t kv = mk_attn_kv(s), per = s->n + kv; /* f and g */
	int64_t slices = s->batch * s->heads;
	bool across = slices > 1 && s->n * kv * s->d < MK_CPU_SLICE_WORK;
	/* only the sgemm path calls BLAS: the micro-kernels need OpenBLAS
	 * neither loaded (it is loaded on first use) nor its threads lowered */
	bool blas = cpu_dtype != MK_COMPUTE_BF16 && !mk_uk_get();
	int nthreads = cpu_threads(across), ret = blas ? mk_blas_room(across ? nthreads : 1) : MK_OK;
	float *f = ret ? NULL : malloc((size_t)nthreads * (size_t)per * sizeof *f);
	cpu_job job = {kernel, norm, s, q, k, v, mask, o, st, MK_OK, ""};

	(void)b;
	if (ret)
		return ret;
	if (!f)
		return mk_error_set(MK_ENOMEM, "out of memory for attention scalings");
#ifdef OPENBLAS_VERSION
	/* the kernels call BLAS from OpenMP threads: BLAS threads of its own
	 * would oversubscribe the cores.  Set once for the run, since OpenBLAS
	 * ends and starts a worker each time the count goes down and up. */
	int blas_threads = blas ? openblas_get_num_threads() : 1;
	if (blas)
		openblas_set_num_threads(1);
#endif
	/* one slice at a time runs outside any parallel region: an inactive
	 * one (if false) would give each kernel's team new threads */
	if (!across && slices > 1 && norm->kind == MK_NORM_SOFTMAX && kernel != MK_KERNEL_CSR) {
		ret = cpu_run_softmax_slices(&job, progress, parg);
		if (ret)
			snprintf(job.msg, sizeof job.msg, "%s", mk_error());
		job.ret = ret;
	} else if (across) {
		#pragma omp parallel for schedule(dynamic) num_threads(nthreads)
		for (int64_t bh = 0; bh < slices; bh++)
			cpu_run_slice(&job, bh, f + (size_t)cpu_thread() * (size_t)per);
		if (job.ret == MK_OK && progress) /* finished in any order: all at once */
			progress(slices, slices, parg);
	} else {
		for (int64_t bh = 0; bh < slices && job.ret == MK_OK; bh++) {
			cpu_run_slice(&job, bh, f);
			if (job.ret == MK_OK && progress)
				progress(bh + 1, slices, parg);
		}
	}
	ret = job.ret;
#ifdef OPENBLAS_VERSION
	if (blas)
		openblas_set_num_threads(blas_threads);
#endif
	free(f);
	return ret ? mk_error_set(ret, "%s", job.msg) : MK_OK;
}

static int cpu_configure(const mk_attn_backend *b, int device, mk_compute dtype)
{
	if (device != 0)
		return mk_error_set(MK_EINVAL, "backend '%s' has no device %d (it runs on the host)",
				    b->name, device);
	if (dtype == MK_COMPUTE_BF16 && !mk_uk_bf16())
		return mk_error_set(MK_EINVAL, "the cpu backend computes in bf16 only where the CPU "
				    "has AVX512_BF16, and this one has not (fp32 runs everywhere)");
	cpu_dtype = dtype;
	return MK_OK;
}

const mk_attn_backend mk_attn_cpu = {
	.name = "cpu",
	.kernels = (1u << MK_KERNEL_DENSE) | (1u << MK_KERNEL_MASKED) | (1u << MK_KERNEL_BLOCK) |
		   (1u << MK_KERNEL_CSR),
	.max_head_dim = MK_CPU_MAX_HEAD_DIM,
	.dtypes = (1u << MK_COMPUTE_FP32) | (1u << MK_COMPUTE_BF16),
	.run = cpu_run,
	.configure = cpu_configure,
};
