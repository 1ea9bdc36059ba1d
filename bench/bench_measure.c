/*
 * Times mk_measure_expr in-process (no process start-up, no parsing):
 *   bench_measure EXPR N REPS  ->  {"expr": ..., "n": N, "count": C, "median_s": T}
 */
#include "config.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "maskkit.h"

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	mk_expr *e = NULL;
	mk_bind_opts o = {.need_cols = true};
	mk_measure r;
	const int64_t tiles[2] = {64, 128};
	double *t;
	long reps;
	if (argc != 4) {
		fprintf(stderr, "usage: bench_measure EXPR N REPS\n");
		return 2;
	}
	o.n = strtoll(argv[2], NULL, 10);
	reps = strtol(argv[3], NULL, 10);
	if (reps < 1 || !(t = malloc((size_t)reps * sizeof *t)))
		return 2;
	if (mk_expr_parse(argv[1], &e) || mk_expr_bind(e, &o)) {
		fprintf(stderr, "bench_measure: %s\n", mk_error());
		return 2;
	}
	for (long k = 0; k < reps; k++) {
		double t0 = now();
		if (mk_measure_expr(e, tiles, 2, NULL, NULL, &r)) {
			fprintf(stderr, "bench_measure: %s\n", mk_error());
			return 1;
		}
		t[k] = now() - t0;
	}
	qsort(t, (size_t)reps, sizeof *t, cmp_double);
	printf("{\"expr\": \"%s\", \"n\": %" PRId64 ", \"count\": %" PRIu64 ", \"median_s\": %.6f}\n",
	       argv[1], r.n, r.count, t[reps / 2]);
	mk_expr_free(e);
	free(t);
	return 0;
}
