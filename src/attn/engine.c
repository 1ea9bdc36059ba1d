/*
 * The attention engine's front: names of kernels and normalisations, the
 * backend table, and the checks every backend relies on, so that a backend
 * only sees shapes, kernels and masks it said it supports.
 */
#include "config.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "attn_internal.h"

static const char *const attn_kernel_names[MK_KERNEL_COUNT] = {"dense", "masked", "block",
							       "csr"};

const char *mk_attn_kernel_name(mk_attn_kernel k)
{
	return k >= 0 && k < MK_KERNEL_COUNT ? attn_kernel_names[k] : "?";
}

int mk_attn_kernel_parse(const char *s, mk_attn_kernel *out)
{
	for (int k = 0; k < MK_KERNEL_COUNT; k++)
		if (!strcmp(s, attn_kernel_names[k])) {
			*out = (mk_attn_kernel)k;
			return MK_OK;
		}
	return mk_error_set(MK_EINVAL, "unknown kernel '%s' (use dense, masked, block or csr)", s);
}

static const char *const attn_compute_names[MK_COMPUTE_COUNT] = {"fp32", "fp16", "bf16"};

const char *mk_compute_name(mk_compute t)
{
	return (unsigned)t < MK_COMPUTE_COUNT ? attn_compute_names[t] : "?";
}

void mk_compute_format(unsigned set, char *buf, size_t cap)
{
	size_t at = 0;
	if (cap)
		buf[0] = '\0';
	for (int t = 0; t < MK_COMPUTE_COUNT && at < cap; t++)
		if (set & (1u << t)) {
			int w = snprintf(buf + at, cap - at, "%s%s", at ? " " : "",
					 attn_compute_names[t]);
			at += w > 0 ? (size_t)w : 0;
		}
}

/* The number after "name:", strictly parsed. */
static int norm_number(const char *s, const char *spec, double *out)
{
	char *end;
	errno = 0;
	*out = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(*out))
		return mk_error_set(MK_EINVAL, "normalisation '%s': '%s' is not a number", spec, s);
	return MK_OK;
}

int mk_norm_parse(const char *s, mk_norm *out)
{
	double v;
	int ret;

	memset(out, 0, sizeof *out);
	if (!strcmp(s, "softmax") || !strcmp(s, "unas"))
		return (out->kind = MK_NORM_SOFTMAX), MK_OK;
	if (!strcmp(s, "dnas"))
		return (out->kind = MK_NORM_DNAS), MK_OK;
	if (!strncmp(s, "hnas:", 5)) {
		if ((ret = norm_number(s + 5, s, &v)))
			return ret;
		if (v < 0.0 || v > 1.0)
			return mk_error_set(MK_EINVAL, "normalisation '%s': u must be in [0, 1]", s);
		out->kind = MK_NORM_HNAS;
		out->u = v;
		return MK_OK;
	}
	if (!strncmp(s, "sinkhorn:", 9)) {
		if ((ret = norm_number(s + 9, s, &v)))
			return ret;
		if (v < 1 || v > 1000 || v != floor(v))
			return mk_error_set(MK_EINVAL, "normalisation '%s': K must be an integer from 1 "
					    "to 1000", s);
		out->kind = MK_NORM_SINKHORN;
		out->iters = (int)v;
		return MK_OK;
	}
	return mk_error_set(MK_EINVAL, "unknown normalisation '%s' (use softmax, dnas, hnas:U or "
			    "sinkhorn:K)", s);
}

int mk_norm_check(const mk_norm *n)
{
	switch (n->kind) {
	case MK_NORM_SOFTMAX:
	case MK_NORM_DNAS:
		return MK_OK;
	case MK_NORM_SINKHORN:
		if (n->iters < 1 || n->iters > 1000)
			return mk_error_set(MK_EINVAL, "sinkhorn needs 1 to 1000 rounds, got %d",
					    n->iters);
		return MK_OK;
	case MK_NORM_HNAS:
		if (!(n->u >= 0.0 && n->u <= 1.0))
			return mk_error_set(MK_EINVAL, "hnas needs u in [0, 1], got %g", n->u);
		return MK_OK;
	default:
		return mk_error_set(MK_EINVAL, "unknown normalisation kind %d", (int)n->kind);
	}
}

void mk_norm_format(const mk_norm *n, char *buf, size_t cap)
{
	switch (n->kind) {
	case MK_NORM_DNAS:
		snprintf(buf, cap, "dnas");
		break;
	case MK_NORM_HNAS:
		snprintf(buf, cap, "hnas:%g", n->u);
		break;
	case MK_NORM_SINKHORN:
		snprintf(buf, cap, "sinkhorn:%d", n->iters);
		break;
	default:
		snprintf(buf, cap, "softmax");
	}
}

const mk_attn_backend *mk_attn_backend_get(const char *name)
{
	if (!strcmp(name, "cpu"))
		return &mk_attn_cpu;
	if (!strcmp(name, "cuda")) {
#if HAVE_CUDA
		return mk_attn_cuda_get();
#else
		mk_error_set(MK_EINVAL, "backend 'cuda' is not built into this maskkit (it has the "
			     "cpu backend only)");
		return NULL;
#endif
	}
	mk_error_set(MK_EINVAL, "unknown backend '%s' (use cpu or cuda)", name);
	return NULL;
}

const char *mk_attn_backend_name(const mk_attn_backend *b)
{
	return b->name;
}

unsigned mk_attn_backend_kernels(const mk_attn_backend *b)
{
	return b->kernels;
}

int64_t mk_attn_backend_max_head_dim(const mk_attn_backend *b)
{
	return b->max_head_dim;
}

unsigned mk_attn_backend_dtypes(const mk_attn_backend *b)
{
	return b->dtypes;
}

static int attn_check(const mk_attn_backend *b, mk_attn_kernel kernel, const mk_norm *norm,
		      const mk_attn_shape *s, const mk_attn_layout *mask)
{
	if (kernel < 0 || kernel >= MK_KERNEL_COUNT || !(b->kernels & (1u << kernel)))
		return mk_error_set(MK_EINVAL, "backend '%s' has no kernel '%s'", b->name,
				    mk_attn_kernel_name(kernel));
	if (s->batch < 1 || s->heads < 1 || s->n < 1 || s->d < 1)
		return mk_error_set(MK_EINVAL, "attention shape must be positive, got batch %lld, "
				    "heads %lld, n %lld, d %lld", (long long)s->batch,
				    (long long)s->heads, (long long)s->n, (long long)s->d);
	if (s->d > b->max_head_dim)
		return mk_error_set(MK_ERANGE, "head dimension %lld is above backend '%s''s "
				    "limit of %lld", (long long)s->d, b->name,
				    (long long)b->max_head_dim);
	if (s->n > MK_N_MAX || s->kv_len < 0 || s->kv_len > MK_N_MAX)
		return mk_error_set(MK_ERANGE, "n = %lld and kv_len = %lld must be in 1..%lld",
				    (long long)s->n, (long long)mk_attn_kv(s), (long long)MK_N_MAX);
	if (mk_attn_kv(s) != s->n && b != &mk_attn_cpu) {
		mk_error_set(MK_EINVAL, "the %s backend takes q_len = kv_len only (here %lld and "
			     "%lld): use the cpu backend", b->name, (long long)s->n,
			     (long long)mk_attn_kv(s));
		return mk_error_param("backend");
	}
	if (kernel != MK_KERNEL_DENSE && !mask)
		return mk_error_set(MK_EINVAL, "kernel '%s' needs a mask",
				    mk_attn_kernel_name(kernel));
	if (mask && (mask->n != s->n || mask->kv != mk_attn_kv(s)))
		return mk_error_set(MK_EINVAL, "the mask is %lld x %lld but the tensors need %lld x "
				    "%lld (queries x keys)", (long long)mask->n, (long long)mask->kv,
				    (long long)s->n, (long long)mk_attn_kv(s));
	return mk_norm_check(norm);
}

/* The largest squared norm of n rows of d; NaN propagates. */
MK_ATTN_CLONES static double attn_max_norm2(int64_t n, int64_t d, const float *x)
{
	double top = 0;

	for (int64_t i = 0; i < n; i++) {
		double a = 0;
#pragma omp simd reduction(+ : a)
		for (int64_t c = 0; c < d; c++)
			a += (double)x[i * d + c] * x[i * d + c];
		if (isnan(a) || a > top) /* a NaN stays: no a > NaN */
			top = a;
	}
	return top;
}

/* Cauchy-Schwarz, which also bounds sgemm's partial sums. */
static double attn_bound(int64_t n, int64_t kv, int64_t d, const float *q, const float *k)
{
	return sqrt(attn_max_norm2(n, d, q)) * sqrt(attn_max_norm2(kv, d, k)) / sqrt((double)d);
}

double mk_attn_score_bound(int64_t n, int64_t d, const float *q, const float *k)
{
	return attn_bound(n, n, d, q, k);
}

/* Checked before any kernel runs, on the inputs alone, so that every kernel
 * and backend refuses the same inputs: the kernels themselves differ in
 * where they would overflow (sgemm's float32 partial sums, csr's double
 * dot products), and a NaN reduced as "no entry" gives zeros, not an error.
 * One pass over Q and K, slices in parallel: next to a sparse kernel's work
 * it is not free. */
int mk_attn_check_scores(const mk_attn_shape *s, const float *q, const float *k)
{
	int64_t slices = s->batch * s->heads, kv = mk_attn_kv(s);
	size_t slice = (size_t)s->n * (size_t)s->d, kslice = (size_t)kv * (size_t)s->d;
	double top = 0.0;

#pragma omp parallel for reduction(max : top) if (slices > 1 && slices * (int64_t)slice >= \
						      ((int64_t)1 << 18))
	for (int64_t bh = 0; bh < slices; bh++) {
		double b = attn_bound(s->n, kv, s->d, q + (size_t)bh * slice,
				      k + (size_t)bh * kslice);
		b = isnan(b) ? INFINITY : b;
		top = b > top ? b : top;
	}
	if (!(top <= MK_ATTN_SCORE_MAX))
		return mk_error_set(MK_ERANGE, "attention scores could reach %.3g, beyond float32 "
				    "(the inputs are too large)", top);
	/* sgemm sums q.k before the 1/sqrt(d) scaling: at large d those sums
	 * leave float32 while the scores would not */
	if (!(top * sqrt((double)s->d) <= MK_ATTN_DOT_MAX))
		return mk_error_set(MK_ERANGE, "the dot products of Q and K could reach %.3g before "
				    "the 1/sqrt(d) scaling, beyond float32 (the inputs are too large)",
				    top * sqrt((double)s->d));
	return MK_OK;
}

int mk_attn_configure(const mk_attn_backend *b, int device, mk_compute dtype)
{
	int ret;
	if ((ret = mk_attn_check_dtype(b, dtype)))
		return ret;
	if (b->configure)
		return b->configure(b, device, dtype);
	if (device != 0)
		return mk_error_set(MK_EINVAL, "backend '%s' has no device %d (it runs on the host)",
				    b->name, device);
	return MK_OK;
}

int mk_attn_devices(const mk_attn_backend *b)
{
	return b->devices ? b->devices(b) : 1;
}

void mk_attn_release(const mk_attn_backend *b)
{
	if (b && b->release)
		b->release(b);
}

int mk_attn_time(const mk_attn_backend *b, mk_attn_kernel kernel, const mk_norm *norm,
		 const mk_attn_shape *s, const float *q, const float *k, const float *v,
		 const mk_attn_layout *mask, int warmup, int reps, double *secs, float *o,
		 mk_attn_stats *st)
{
	int ret = attn_check(b, kernel, norm, s, mask);
	if (ret || (ret = mk_attn_check_scores(s, q, k)))
		return ret;
	if (!b->time)
		return mk_error_set(MK_EINVAL, "backend '%s' has no device timer", b->name);
	if (warmup < 0 || reps < 1)
		return mk_error_set(MK_EINVAL, "timing needs warmup >= 0 and reps >= 1, got %d and %d",
				    warmup, reps);
	memset(st, 0, sizeof *st);
	return b->time(b, kernel, norm, s, q, k, v, kernel == MK_KERNEL_DENSE ? NULL : mask,
		       warmup, reps, secs, o, st);
}

int mk_attn_run_progress(const mk_attn_backend *b, mk_attn_kernel kernel, const mk_norm *norm,
			 const mk_attn_shape *s, const float *q, const float *k, const float *v,
			 const mk_attn_layout *mask, float *o, mk_attn_stats *st,
			 mk_progress_fn progress, void *parg)
{
	int ret = attn_check(b, kernel, norm, s, mask);
	if (ret || (ret = mk_attn_check_scores(s, q, k)))
		return ret;
	memset(st, 0, sizeof *st);
	return b->run(b, kernel, norm, s, q, k, v, kernel == MK_KERNEL_DENSE ? NULL : mask, o, st,
		      progress, parg);
}

int mk_attn_run(const mk_attn_backend *b, mk_attn_kernel kernel, const mk_norm *norm,
		const mk_attn_shape *s, const float *q, const float *k, const float *v,
		const mk_attn_layout *mask, float *o, mk_attn_stats *st)
{
	return mk_attn_run_progress(b, kernel, norm, s, q, k, v, mask, o, st, NULL, NULL);
}

int mk_attn_prepare(const mk_attn_backend *b, const mk_mask *m, int64_t tile,
		    uint64_t max_memory, mk_attn_layout **out)
{
	if (b != &mk_attn_cpu && !mk_mask_square(m)) {
		mk_error_set(MK_EINVAL, "the %s backend takes square masks only (here %lld x %lld): "
			     "use the cpu backend", b->name, (long long)mk_mask_n(m),
			     (long long)mk_mask_cols(m));
		return mk_error_param("backend");
	}
	if (b->prepare)
		return b->prepare(b, m, tile, max_memory, out);
	return mk_attn_layout_new(m, tile, max_memory, out);
}

double mk_attn_clock(const mk_attn_backend *b)
{
	struct timespec t;
	if (b->clock)
		return b->clock(b);
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* "fp32", "fp32 or bf16", "fp32, fp16 or bf16": a set for a sentence */
static void attn_compute_words(unsigned set, char *buf, size_t cap)
{
	int n = 0, k = 0;
	size_t at = 0;

	for (int t = 0; t < MK_COMPUTE_COUNT; t++)
		n += (set >> t) & 1u;
	buf[0] = '\0';
	for (int t = 0; t < MK_COMPUTE_COUNT && at < cap; t++) {
		if (!(set & (1u << t)))
			continue;
		int w = snprintf(buf + at, cap - at, "%s%s", k == 0 ? "" : k == n - 1 ? " or " : ", ",
				 attn_compute_names[t]);
		at += w > 0 ? (size_t)w : 0;
		k++;
	}
}

int mk_attn_check_dtype(const mk_attn_backend *b, mk_compute dtype)
{
	char have[40];
	if ((unsigned)dtype < MK_COMPUTE_COUNT && (b->dtypes & (1u << dtype)))
		return MK_OK;
	attn_compute_words(b->dtypes, have, sizeof have);
	if ((unsigned)dtype >= MK_COMPUTE_COUNT)
		return mk_error_set(MK_EINVAL, "unknown compute type %d (the %s backend computes "
				    "in %s)", (int)dtype, b->name, have[0] ? have : "?");
	return mk_error_set(MK_EINVAL, "the %s backend computes in %s, not '%s'", b->name,
			    have[0] ? have : "?", mk_compute_name(dtype));
}
