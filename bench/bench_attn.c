/*
 * bench_attn: times the CPU attention kernels on random float32 tensors.
 *
 *   bench_attn N D BH TILE REPS NORM EXPR [KERNEL...]
 *   bench_attn sgemm N REPS       the sgemm rate at N x N x N
 *
 * EXPR is a mask expression (at n = N); kernels default to all four.  One
 * line per kernel: name, tile density, nnz, median and min seconds of REPS
 * runs after one warm-up, and GFLOP/s dense-equivalent (4 BH N^2 D) and
 * actual (4 BH |M| D).  Never part of `make check`.
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cblas.h>
#include "maskkit.h"

static double bench_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int bench_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void bench_fill(float *x, size_t count, uint64_t seed)
{
	for (size_t k = 0; k < count; k++) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		x[k] = (float)((double)(seed >> 11) / 4503599627370496.0 - 1.0);
	}
}

static int bench_kernel(const mk_attn_backend *b, mk_attn_kernel kern, const mk_norm *norm,
			const mk_attn_shape *s, float *const t[4], const mk_attn_layout *l,
			int reps)
{
	double *times = calloc((size_t)reps, sizeof *times), dense, actual;
	mk_attn_stats st;
	int ret = mk_attn_run(b, kern, norm, s, t[0], t[1], t[2], l, t[3], &st);

	for (int r = 0; ret == MK_OK && r < reps; r++) {
		double t0 = bench_now();
		ret = mk_attn_run(b, kern, norm, s, t[0], t[1], t[2], l, t[3], &st);
		times[r] = bench_now() - t0;
	}
	if (ret) {
		fprintf(stderr, "bench_attn: %s: %s\n", mk_attn_kernel_name(kern), mk_error());
		free(times);
		return 1;
	}
	qsort(times, (size_t)reps, sizeof *times, bench_cmp);
	dense = 4.0 * (double)(s->batch * s->heads) * (double)s->n * (double)s->n * (double)s->d;
	actual = kern == MK_KERNEL_DENSE ? dense
					 : 4.0 * (double)(s->batch * s->heads) *
						   (double)mk_attn_layout_nnz(l) * (double)s->d;
	printf("%-7s density %.4f nnz %10llu  median %.5f s  min %.5f s  %7.2f GFLOP/s dense-eq"
	       "  %7.2f actual\n", mk_attn_kernel_name(kern), mk_attn_layout_density(l),
	       (unsigned long long)mk_attn_layout_nnz(l), times[reps / 2], times[0],
	       dense / times[reps / 2] / 1e9, actual / times[reps / 2] / 1e9);
	free(times);
	return 0;
}

/* The machine's sgemm rate through the library maskkit links: the bound
 * the attention kernels' two products work against. */
static int bench_sgemm(int64_t n, int reps)
{
	float *a = malloc((size_t)(n * n) * sizeof *a), *c = malloc((size_t)(n * n) * sizeof *c);
	double *times = calloc((size_t)reps, sizeof *times);

	if (!a || !c || !times)
		return 1;
	bench_fill(a, (size_t)(n * n), 7);
	for (int r = -1; r < reps; r++) {
		double t0 = bench_now();
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, (int)n, (int)n, 1.0f, a,
			    (int)n, a, (int)n, 0.0f, c, (int)n);
		if (r >= 0)
			times[r] = bench_now() - t0;
	}
	qsort(times, (size_t)reps, sizeof *times, bench_cmp);
	printf("sgemm   n %lld  median %.5f s  %7.2f GFLOP/s\n", (long long)n, times[reps / 2],
	       2.0 * (double)n * (double)n * (double)n / times[reps / 2] / 1e9);
	free(a);
	free(c);
	free(times);
	return 0;
}

int main(int argc, char **argv)
{
	mk_attn_shape s = {.batch = 1, .heads = 1};
	mk_expr *e = NULL;
	mk_mask *m = NULL;
	mk_attn_layout *l = NULL;
	mk_norm norm;
	float *t[4] = {NULL};
	int64_t tile;
	int reps, fail = 0;
	const mk_attn_backend *b = mk_attn_backend_get("cpu");

	if (argc == 4 && !strcmp(argv[1], "sgemm"))
		return bench_sgemm(strtoll(argv[2], NULL, 10), (int)strtol(argv[3], NULL, 10));
	if (argc < 8) {
		fprintf(stderr, "usage: bench_attn N D BH TILE REPS NORM EXPR [KERNEL...]\n");
		return 2;
	}
	s.n = strtoll(argv[1], NULL, 10);
	s.d = strtoll(argv[2], NULL, 10);
	s.heads = strtoll(argv[3], NULL, 10);
	tile = strtoll(argv[4], NULL, 10);
	reps = (int)strtol(argv[5], NULL, 10);
	if (s.n < 1 || s.d < 1 || s.heads < 1 || tile < 1 || reps < 1 ||
	    mk_norm_parse(argv[6], &norm) || mk_expr_parse(argv[7], &e) ||
	    mk_expr_bind(e, &(mk_bind_opts){.n = s.n}) || mk_expr_to_mask(e, &m) ||
	    mk_attn_layout_new(m, tile, 0, &l)) {
		fprintf(stderr, "bench_attn: bad arguments: %s\n", mk_error());
		return 2;
	}
	for (int k = 0; k < 4; k++) {
		size_t count = (size_t)(s.heads * s.n * s.d);
		if (!(t[k] = malloc(count * sizeof(float))))
			return 1;
		bench_fill(t[k], count, (uint64_t)k + 1);
	}
	for (int k = 8; k < argc || (argc == 8 && k < 8 + MK_KERNEL_COUNT); k++) {
		mk_attn_kernel kern = (mk_attn_kernel)(k - 8);
		if (argc > 8 && mk_attn_kernel_parse(argv[k], &kern)) {
			fprintf(stderr, "bench_attn: %s\n", mk_error());
			return 2;
		}
		fail |= bench_kernel(b, kern, &norm, &s, t, l, reps);
	}
	for (int k = 0; k < 4; k++)
		free(t[k]);
	mk_attn_layout_free(l);
	mk_mask_free(m);
	mk_expr_free(e);
	return fail;
}
