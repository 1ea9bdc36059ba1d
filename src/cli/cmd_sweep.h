/* Private to maskkit sweep (cmd_sweep.c, cmd_sweep_plot.c, cmd_sweep_ranks.c). */
#ifndef MK_CMD_SWEEP_H
#define MK_CMD_SWEEP_H

#include "cli.h"

/* Where a row was measured, recorded when several MPI ranks share a sweep. */
typedef struct sweep_where {
	char host[64];
	char device[128]; /* "cpu (16 threads)" or the GPU with its index */
} sweep_where;

#define SWEEP_MAX_LIST 64
#define SWEEP_MAX_TARGETS 1001

typedef struct sweep_cli {
	cli_mask_opts m;
	mk_sweep_opts s;
	const char *backend, *plot, *patterns_arg, *kernels_arg, *norms_arg, *sparsity_arg;
	char *patterns_buf;
	const char *patterns[SWEEP_MAX_LIST];
	double targets[SWEEP_MAX_TARGETS];
	mk_norm norms[SWEEP_MAX_LIST];
	double dense_s[SWEEP_MAX_LIST]; /* dense median per norm */
	bool tty;
	mk_sweep_row *rows;
	size_t nrows, cap;
	sweep_where *where;  /* per row, when several MPI ranks shared the sweep */
	bool device_given;
} sweep_cli;

/* The --plot figure (cmd_sweep_plot.c). */
int sweep_plot(const sweep_cli *c);

/* Collective: every rank's rows (its share of the grid, *rows of *nrows,
 * malloc'd) go to rank 0, which gets them all in the order one process
 * makes them (pattern, target, norm, kernel), with norm and pattern
 * pointing into s, and *where (malloc'd) saying where each was measured;
 * other ranks end with no rows.  `device` describes this rank's device. */
int sweep_gather(const mk_sweep_opts *s, const char *device, mk_sweep_row **rows, size_t *nrows,
		 sweep_where **where);

#endif
