/* Private to the sweep (analysis/sweep.c, src/attn/attn_ref.c). */
#ifndef MK_SWEEP_H
#define MK_SWEEP_H

#include <stdint.h>

/* A pattern a sweep can vary: the parameter, its range at size n, and
 * whether |M| grows with it (binary search) or not (a scan). */
typedef struct mk_sweep_spec {
	const char *pattern;
	const char *param;
	const char *extra; /* fixed parameters appended to the expression, or "" */
	int64_t lo;        /* smallest value */
	int hi_kind;       /* largest value: n (0), n - 1 (1) or n / 2 (2) */
	bool monotone;     /* |M| non-decreasing in the value */
} mk_sweep_spec;

/* Values scanned one by one up to this many; beyond, a geometric grid
 * refined around its best point. */
#define MK_SWEEP_SCAN_ALL 1024

#endif
