/* Private to the sweep (analysis/sweep.c) and its tests: the solver of a
 * pattern's size parameter. */
#ifndef MK_SWEEP_INTERNAL_H
#define MK_SWEEP_INTERNAL_H

#include "maskkit.h"

/* Values scanned one by one up to this many; beyond, a geometric grid
 * refined around its best point. */
#define MK_SWEEP_SCAN_ALL 1024

/* Solves one pattern's parameter at size n; values already measured are
 * remembered, so solving many targets costs little more than one. */
typedef struct mk_sweep_solver mk_sweep_solver;
int mk_sweep_solver_new(const char *pattern, int64_t n, uint64_t seed, uint64_t max_memory,
			mk_sweep_solver **out);
void mk_sweep_solver_free(mk_sweep_solver *s); /* NULL-safe */
/* The value whose sparsity is nearest target (in [0, 1]); ties go to the
 * smaller value. */
int mk_sweep_solve(mk_sweep_solver *s, double target, mk_sweep_point *out);

#endif
