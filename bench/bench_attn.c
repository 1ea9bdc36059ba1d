/*
 * bench_attn: times the CPU attention kernels on float32 tensors.
 *
 *   bench_attn [-i QKV] N D BH TILE REPS NORM EXPR [KERNEL...]
 *   bench_attn [-i QKV] split N D BH REPS   where dense's time goes
 *   bench_attn -s [-i QKV] N D BH TILE 1 NORM EXPR   serve, below
 *   bench_attn sgemm N REPS                 the sgemm rate at N x N x N
 *   bench_attn bandwidth MIB REPS           the memory's read rate
 *
 * -i QKV names a raw float32 file holding Q, K and V one after the other,
 * each [BH, N, D] in native byte order (what a peer is given too, so both
 * sides compute on the same bytes); without it they are filled uniform in
 * [-1, 1) by a fixed generator.  EXPR is a mask expression (at n = N);
 * kernels default to all four.  One line per kernel: name, tile density,
 * nnz, median and min seconds of REPS runs after one warm-up, and GFLOP/s
 * dense-equivalent (4 BH N^2 D) and actual (4 BH |M| D).  With -s (serve)
 * it reads kernel names from stdin, one per line, and answers each with one
 * run's seconds: a peer in another process can then alternate with it run
 * by run, so that a change in the machine's speed falls on both.  Never
 * part of `make check`.
 */
#include "config.h"
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cblas.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "maskkit.h"
#include "cpu_rows.h"
#include "cpu_ukernel.h"

/* the dense kernel's score block (cpu_tiles_run.c's TILES_QUERY_TILE and
 * TILES_KEY_BLOCK; with the micro-kernels 512 x 64 / d keys past d = 64):
 * split times the products at the shapes the kernel gives them */
#define BENCH_QUERY_TILE 256
#define BENCH_KEY_BLOCK 512

static int64_t bench_key_block(int64_t d)
{
	if (mk_uk_get() && d > 64)
		return BENCH_KEY_BLOCK * 64 / d > 64 ? BENCH_KEY_BLOCK * 64 / d : 64;
	return BENCH_KEY_BLOCK;
}

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

static double bench_median(double *times, int reps)
{
	qsort(times, (size_t)reps, sizeof *times, bench_cmp);
	return times[reps / 2];
}

static void bench_fill(float *x, size_t count, uint64_t seed)
{
	for (size_t k = 0; k < count; k++) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		x[k] = (float)((double)(seed >> 11) / 4503599627370496.0 - 1.0);
	}
}

/* Q, K, V (t[0..2], count floats each) from the file, or the generator's
 * fill without one; t[3] (the output) zeroed.  Non-zero on failure. */
static int bench_inputs(const char *path, float *const t[4], size_t count)
{
	FILE *f = path ? fopen(path, "rb") : NULL;
	int bad = 0;

	if (path && !f) {
		perror(path);
		return 1;
	}
	for (int k = 0; k < 3; k++) {
		if (!f)
			bench_fill(t[k], count, (uint64_t)k + 1);
		else if (fread(t[k], sizeof(float), count, f) != count)
			bad = 1;
	}
	memset(t[3], 0, count * sizeof(float));
	if (f && (bad || fgetc(f) != EOF)) {
		fprintf(stderr, "bench_attn: '%s' is not 3 x %zu float32 (Q, K, V)\n", path, count);
		bad = 1;
	}
	if (f)
		fclose(f);
	return bad;
}

static int bench_tensors(const char *path, const mk_attn_shape *s, float *t[4])
{
	size_t count = (size_t)(s->batch * s->heads * s->n * s->d);

	for (int k = 0; k < 4; k++)
		if (!(t[k] = malloc(count * sizeof(float))))
			return 1;
	return bench_inputs(path, t, count);
}

static double bench_run_once(const mk_attn_backend *b, mk_attn_kernel kern, const mk_norm *norm,
			     const mk_attn_shape *s, float *const t[4], const mk_attn_layout *l)
{
	mk_attn_stats st;
	double t0 = bench_now();

	if (mk_attn_run(b, kern, norm, s, t[0], t[1], t[2], l, t[3], &st)) {
		fprintf(stderr, "bench_attn: %s: %s\n", mk_attn_kernel_name(kern), mk_error());
		return -1.0;
	}
	return bench_now() - t0;
}

static int bench_kernel(const mk_attn_backend *b, mk_attn_kernel kern, const mk_norm *norm,
			const mk_attn_shape *s, float *const t[4], const mk_attn_layout *l,
			int reps)
{
	double *times = calloc((size_t)reps, sizeof *times), dense, actual, med;
	int ret = times && bench_run_once(b, kern, norm, s, t, l) >= 0.0 ? 0 : 1;

	for (int r = 0; !ret && r < reps; r++)
		ret = (times[r] = bench_run_once(b, kern, norm, s, t, l)) < 0.0;
	if (ret) {
		free(times);
		return 1;
	}
	med = bench_median(times, reps);
	dense = 4.0 * (double)(s->batch * s->heads) * (double)s->n * (double)s->n * (double)s->d;
	actual = kern == MK_KERNEL_DENSE ? dense
					 : 4.0 * (double)(s->batch * s->heads) *
						   (double)mk_attn_layout_nnz(l) * (double)s->d;
	printf("%-7s density %.4f nnz %10llu  median %.5f s  min %.5f s  %7.2f GFLOP/s dense-eq"
	       "  %7.2f actual\n", mk_attn_kernel_name(kern), mk_attn_layout_density(l),
	       (unsigned long long)mk_attn_layout_nnz(l), med, times[0], dense / med / 1e9,
	       actual / med / 1e9);
	free(times);
	return 0;
}

/* -s: the layout's density, then one run of the kernel each line of stdin
 * names, its seconds on stdout (flushed: the caller waits for it before its
 * own run). */
static int bench_serve(const mk_attn_backend *b, const mk_norm *norm, const mk_attn_shape *s,
		       float *const t[4], const mk_attn_layout *l)
{
	char line[64];

	printf("density %.4f nnz %llu\n", mk_attn_layout_density(l),
	       (unsigned long long)mk_attn_layout_nnz(l));
	fflush(stdout);
	while (fgets(line, sizeof line, stdin)) {
		mk_attn_kernel kern;
		double secs;

		line[strcspn(line, "\r\n")] = '\0';
		if (mk_attn_kernel_parse(line, &kern)) {
			fprintf(stderr, "bench_attn: %s\n", mk_error());
			return 2;
		}
		if ((secs = bench_run_once(b, kern, norm, s, t, l)) < 0.0)
			return 1;
		printf("%.6f\n", secs);
		fflush(stdout);
	}
	return 0;
}

/* The machine's sgemm rate through the library maskkit links: the bound
 * the attention kernels' two products work against.  The best of the
 * readings is the peak; the median says how steady it was. */
static int bench_sgemm(int64_t n, int reps)
{
	float *a = malloc((size_t)(n * n) * sizeof *a), *c = malloc((size_t)(n * n) * sizeof *c);
	double *times = calloc((size_t)reps, sizeof *times);
	double flops = 2.0 * (double)(n * n) * (double)n;

	if (n < 1 || reps < 1 || !a || !c || !times)
		return 1;
	bench_fill(a, (size_t)(n * n), 7);
	for (int r = -1; r < reps; r++) {
		double t0 = bench_now();
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, (int)n, (int)n, 1.0f, a,
			    (int)n, a, (int)n, 0.0f, c, (int)n);
		if (r >= 0)
			times[r] = bench_now() - t0;
	}
	bench_median(times, reps);
	printf("sgemm   n %lld  median %.5f s  %7.2f GFLOP/s  best %.5f s  %7.2f GFLOP/s\n",
	       (long long)n, times[reps / 2], flops / times[reps / 2] / 1e9, times[0],
	       flops / times[0] / 1e9);
	free(a);
	free(c);
	free(times);
	return 0;
}

/* The memory's read rate: a sum over MIB MiB (far beyond the caches) by
 * every thread, best of REPS; the roofline's slope. */
static int bench_bandwidth(int64_t mib, int reps)
{
	size_t count = (size_t)mib << 18;
	float *a = malloc(count * sizeof *a);
	double best = 0.0, median, *times = calloc((size_t)reps, sizeof *times);
	volatile float sink = 0.0f;

	if (mib < 1 || reps < 1 || !a || !times)
		return 1;
	bench_fill(a, count, 3);
	for (int r = -1; r < reps; r++) {
		double t0 = bench_now();
		float sum = 0.0f;
#pragma omp parallel for simd reduction(+:sum) schedule(static)
		for (size_t k = 0; k < count; k++)
			sum += a[k];
		sink += sum;
		if (r >= 0)
			times[r] = bench_now() - t0;
	}
	median = bench_median(times, reps);
	best = times[0];
	printf("bandwidth read %lld MiB  median %.5f s  %7.2f GB/s  best %.5f s  %7.2f GB/s\n",
	       (long long)mib, median, (double)(count * sizeof *a) / median / 1e9, best,
	       (double)(count * sizeof *a) / best / 1e9);
	free(a);
	free(times);
	return 0;
}

static int bench_threads(void)
{
#ifdef _OPENMP
	return omp_get_max_threads();
#else
	return 1;
#endif
}

static int bench_thread(void)
{
#ifdef _OPENMP
	return omp_get_thread_num();
#else
	return 0;
#endif
}

/* The two products of one score block, as the dense kernel makes them:
 * s = scale q k^T (rows x cols) and o += s v.  One function, so that it can
 * follow the kernel when its products change. */
/* One score block's two products as the kernel computes them: with the
 * micro-kernels, strips of mr rows against the block's packed K and V (kp,
 * vp: packed once per head, as the kernel does per pass), else sgemm. */
static void bench_products_block(const float *q, const float *k, const float *v,
				 const float *kp, const float *vp, int64_t rows, int64_t cols,
				 int64_t d, float scale, float *s, float *o, const float *zero,
				 float *sink)
{
	const mk_uk *uk = mk_uk_get();
	int64_t ld = bench_key_block(d);

	if (!uk) {
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)rows, (int)cols, (int)d,
			    scale, q, (int)d, k, (int)d, 0.0f, s, (int)ld);
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, (int)d, (int)cols,
			    1.0f, s, (int)ld, v, (int)d, 1.0f, o, (int)d);
		return;
	}
	for (int64_t i = 0; i < rows; i += uk->mr) {
		int64_t sr = rows - i < uk->mr ? rows - i : uk->mr;
		uk->qk(q + i * d, sr, kp, cols, d, zero, s, ld);
		uk->pv(s, ld, sr, vp, cols, MK_UK_ALL, d, zero, sink, o + i * d);
	}
}

typedef struct bench_split {
	const mk_attn_shape *s;
	float *const *t;   /* Q, K, V, O */
	float **sc, **o;   /* per thread: a score block, an output tile */
	int64_t tiles;     /* query tiles per head */
	int64_t kb, nkb;   /* keys per block, blocks per head */
	float *kp, *vp;    /* with the micro-kernels: every block packed, pstride apart */
	int64_t pstride;
	float *zero, *sink; /* a zero row; a row of d per thread */
} bench_split;

static int64_t bench_min(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* Every score block of every head and query tile, the threads over
 * (head, query tile) as the kernel's: the products (exps false) or the
 * exponentials of the block's rows (exps true), in seconds. */
static double bench_split_pass(const bench_split *x, bool exps)
{
	const mk_attn_shape *s = x->s;
	int64_t n = s->n, d = s->d, items = s->batch * s->heads * x->tiles;
	float scale = (float)(1.0 / sqrt((double)d));
	double t0 = bench_now();

#pragma omp parallel for schedule(dynamic)
	for (int64_t it = 0; it < items; it++) {
		int64_t h = it / x->tiles, i0 = (it % x->tiles) * BENCH_QUERY_TILE;
		int64_t rows = bench_min(BENCH_QUERY_TILE, n - i0);
		size_t at = (size_t)(h * n * d);
		float *sc = x->sc[bench_thread()], *o = x->o[bench_thread()];

		for (int64_t j0 = 0; j0 < n; j0 += x->kb) {
			int64_t cols = bench_min(x->kb, n - j0);
			size_t pk = (size_t)((h * x->nkb + j0 / x->kb) * x->pstride);
			if (!exps) {
				bench_products_block(x->t[0] + at + (size_t)(i0 * d),
						     x->t[1] + at + (size_t)(j0 * d),
						     x->t[2] + at + (size_t)(j0 * d),
						     x->kp ? x->kp + pk : NULL,
						     x->vp ? x->vp + pk : NULL, rows, cols, d,
						     scale, sc, o, x->zero,
						     x->sink + bench_thread() * d);
				continue;
			}
			/* the block keeps its values bounded: exp(x - 4) of what
			 * it holds tends to 0.018, every call costs the same */
			for (int64_t r = 0; r < rows; r++)
				mk_tiles_row_exp(sc + r * x->kb, 4.0f, cols);
		}
	}
	return bench_now() - t0;
}

/* With the micro-kernels, every key block of every head packed as the kernel
 * packs them (once per pass, not timed: O(n d) against the products'
 * O(n^2 d)); the zero row and sinks they take. */
static int bench_split_pack(bench_split *x, int nt)
{
	const mk_uk *uk = mk_uk_get();
	const mk_attn_shape *s = x->s;
	int64_t n = s->n, d = s->d, heads = s->batch * s->heads;
	float scale = (float)(1.0 / sqrt((double)d));

	x->nkb = (n + x->kb - 1) / x->kb;
	x->zero = calloc((size_t)(x->kb > d ? x->kb : d), sizeof(float));
	x->sink = malloc((size_t)(nt * d) * sizeof(float));
	if (!x->zero || !x->sink)
		return 1;
	if (!uk)
		return 0;
	x->pstride = mk_uk_packed_size(uk, x->kb, d);
	x->kp = malloc((size_t)(heads * x->nkb * x->pstride) * sizeof(float));
	x->vp = malloc((size_t)(heads * x->nkb * x->pstride) * sizeof(float));
	if (!x->kp || !x->vp)
		return 1;
	for (int64_t h = 0; h < heads; h++)
		for (int64_t b = 0; b < x->nkb; b++) {
			size_t at = (size_t)(h * n * d + b * x->kb * d);
			size_t pk = (size_t)((h * x->nkb + b) * x->pstride);
			int64_t cols = bench_min(x->kb, n - b * x->kb);
			mk_uk_pack(uk, x->t[1] + at, cols, d, scale, x->kp + pk);
			mk_uk_pack_v(uk, x->t[2] + at, cols, d, x->vp + pk);
		}
	return 0;
}

/* EXPR's mask at n and its tile layout (the caller frees all three). */
static int bench_layout(const char *expr, int64_t n, int64_t tile, mk_expr **e, mk_mask **m,
			mk_attn_layout **l)
{
	return mk_expr_parse(expr, e) || mk_expr_bind(*e, &(mk_bind_opts){.n = n}) ||
	       mk_expr_to_mask(*e, m) || mk_attn_layout_new(*m, tile, 0, l);
}

/* Where the dense kernel's time goes at one shape: the kernel itself, its
 * two products alone at its block shape, its exponentials alone (n^2 per
 * head), in turn each repetition so that a disturbance falls on all three;
 * the rest (memory, the row statistics, the mask, threads) is the
 * difference. */
static int bench_split_run(const char *path, const mk_attn_shape *s, int reps)
{
	const mk_attn_backend *b = mk_attn_backend_get("cpu");
	int nt = bench_threads(), ret = 1;
	float *t[4] = {NULL}, *sc[256] = {NULL}, *o[256] = {NULL};
	double *times = calloc(3 * (size_t)reps, sizeof *times), med[3];
	bench_split x = {.s = s, .t = t, .sc = sc, .o = o,
			 .tiles = (s->n + BENCH_QUERY_TILE - 1) / BENCH_QUERY_TILE,
			 .kb = bench_key_block(s->d)};
	mk_expr *e = NULL;
	mk_mask *m = NULL;
	mk_attn_layout *l = NULL;
	mk_norm norm;
#ifdef OPENBLAS_VERSION
	int blas_threads = openblas_get_num_threads();
#endif

	if (!times || nt > 256 || bench_tensors(path, s, t) || mk_norm_parse("softmax", &norm) ||
	    bench_layout("full", s->n, 64, &e, &m, &l))
		goto out;
	if (bench_split_pack(&x, nt))
		goto out;
	for (int k = 0; k < nt; k++) {
		/* zeros: the micro-kernels fill a strip's rows, the exponentials
		 * read them all */
		sc[k] = calloc((size_t)(BENCH_QUERY_TILE * x.kb), sizeof(float));
		o[k] = calloc((size_t)(BENCH_QUERY_TILE * s->d), sizeof(float));
		if (!sc[k] || !o[k])
			goto out;
	}
#ifdef OPENBLAS_VERSION
	openblas_set_num_threads(1); /* the kernel's setting: BLAS under our threads */
#endif
	bench_split_pass(&x, false); /* warm-up; leaves each score block real scores */
	bench_split_pass(&x, true);
#ifdef OPENBLAS_VERSION
	openblas_set_num_threads(blas_threads);
#endif
	if (bench_run_once(b, MK_KERNEL_DENSE, &norm, s, t, l) < 0.0)
		goto out;
	for (int r = 0; r < reps; r++) {
		if ((times[r] = bench_run_once(b, MK_KERNEL_DENSE, &norm, s, t, l)) < 0.0)
			goto out;
#ifdef OPENBLAS_VERSION
		openblas_set_num_threads(1);
#endif
		times[reps + r] = bench_split_pass(&x, false);
		times[2 * reps + r] = bench_split_pass(&x, true);
#ifdef OPENBLAS_VERSION
		openblas_set_num_threads(blas_threads);
#endif
	}
	for (int k = 0; k < 3; k++)
		med[k] = bench_median(times + k * reps, reps);
	printf("split   n %lld d %lld heads %lld threads %d  kernel %.5f s  products %.5f s  "
	       "exps %.5f s  other %.5f s\n", (long long)s->n, (long long)s->d,
	       (long long)(s->batch * s->heads), nt, med[0], med[1], med[2],
	       med[0] - med[1] - med[2]);
	ret = 0;
out:
	if (ret && mk_error()[0])
		fprintf(stderr, "bench_attn: split: %s\n", mk_error());
	for (int k = 0; k < nt && k < 256; k++) {
		free(sc[k]);
		free(o[k]);
	}
	for (int k = 0; k < 4; k++)
		free(t[k]);
	free(x.kp);
	free(x.vp);
	free(x.zero);
	free(x.sink);
	mk_attn_layout_free(l);
	mk_mask_free(m);
	mk_expr_free(e);
	free(times);
	return ret;
}

static int bench_usage(void)
{
	fprintf(stderr, "usage: bench_attn [-s] [-i QKV] [-t fp32|bf16] N D BH TILE REPS NORM EXPR "
			"[KERNEL...]\n"
			"       bench_attn [-i QKV] split N D BH REPS\n"
			"       bench_attn sgemm N REPS\n"
			"       bench_attn bandwidth MIB REPS\n");
	return 2;
}

static int64_t bench_arg(const char *text)
{
	char *end;
	long long v = strtoll(text, &end, 10);

	return *text && !*end ? (int64_t)v : -1;
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
	const char *inputs = NULL;
	bool serve = false;

	if (argc == 4 && !strcmp(argv[1], "sgemm"))
		return bench_sgemm(bench_arg(argv[2]), (int)bench_arg(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "bandwidth"))
		return bench_bandwidth(bench_arg(argv[2]), (int)bench_arg(argv[3]));
	while (argc > 2 && (!strcmp(argv[1], "-i") || !strcmp(argv[1], "-t") ||
			    !strcmp(argv[1], "-s"))) {
		if (!strcmp(argv[1], "-s")) {
			serve = true;
			argv++;
			argc--;
			continue;
		}
		if (!strcmp(argv[1], "-i")) {
			inputs = argv[2];
		} else { /* the compute type: fp32, bf16 */
			mk_compute dt = !strcmp(argv[2], "bf16")   ? MK_COMPUTE_BF16
					: !strcmp(argv[2], "fp32") ? MK_COMPUTE_FP32
								   : MK_COMPUTE_COUNT;
			if (mk_attn_configure(b, 0, dt)) {
				fprintf(stderr, "bench_attn: %s\n", mk_error());
				return 2;
			}
		}
		argv += 2;
		argc -= 2;
	}
	if (argc == 6 && !strcmp(argv[1], "split")) {
		s.n = bench_arg(argv[2]);
		s.d = bench_arg(argv[3]);
		s.heads = bench_arg(argv[4]);
		reps = (int)bench_arg(argv[5]);
		if (s.n < 1 || s.d < 1 || s.heads < 1 || reps < 1)
			return bench_usage();
		return bench_split_run(inputs, &s, reps);
	}
	if (argc < 8)
		return bench_usage();
	s.n = bench_arg(argv[1]);
	s.d = bench_arg(argv[2]);
	s.heads = bench_arg(argv[3]);
	tile = bench_arg(argv[4]);
	reps = (int)bench_arg(argv[5]);
	if (s.n < 1 || s.d < 1 || s.heads < 1 || tile < 1 || reps < 1 ||
	    mk_norm_parse(argv[6], &norm) || bench_layout(argv[7], s.n, tile, &e, &m, &l)) {
		fprintf(stderr, "bench_attn: bad arguments: %s\n", mk_error());
		return 2;
	}
	if (bench_tensors(inputs, &s, t))
		return 1;
	if (serve)
		fail = bench_serve(b, &norm, &s, t, l);
	for (int k = 8; !serve && (k < argc || (argc == 8 && k < 8 + MK_KERNEL_COUNT)); k++) {
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
