/* Private to maskkit sweep (cmd_sweep.c, cmd_sweep_plot.c, cmd_sweep_ranks.c); prune
 * shares sweep_targets. */
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
	/* the options (sweep_table); shape, tile, seed and max_memory in s */
	mk_sweep_opts s;
	const char *out, *csv, *png, *patterns_arg, *kernels_arg, *norms_arg;
	int backend;        /* index of sweep_backends */
	int dtype;          /* --dtype: an mk_compute, copied to s.dtype */
	int64_t device, reps;
	bool json;
	double targets[SWEEP_MAX_TARGETS]; /* --sparsity, s.ntargets of them */
	/* the run */
	char *patterns_buf, *kernels_buf, *norms_buf;
	const char *patterns[SWEEP_MAX_LIST];
	const char *labels[SWEEP_MAX_LIST]; /* LABEL= of each, or NULL */
	mk_norm norms[SWEEP_MAX_LIST];
	bool tty;
	mk_sweep_row *rows;
	size_t nrows, cap;
	sweep_where *where;  /* per row, when several MPI ranks shared the sweep */
	bool device_given;
} sweep_cli;

/* Target sparsities (sweep's --sparsity, prune's levels): S, S1,S2,... or
 * A..B[:STEP] (B included, STEP 0.1), each a fraction in [0, 1] or a
 * percentage ("25%"; cli_sparsity); at most cap of them.  Errors name opt. */
int sweep_targets(const char *s, const char *opt, double *out, size_t cap, size_t *count);

/* The outputs (cmd_sweep_plot.c), on rank 0: -o (its format from its name:
 * sweep_output_format gives 0 for .csv or no name, 1 for .json, else an
 * error), --csv FILE, and standard output (--json, --csv -, or the CSV
 * when no output is named). */
int sweep_output_format(const char *path);
int sweep_write(const sweep_cli *c);
/* The --png figure. */
int sweep_plot(const sweep_cli *c);

/* Collective: every rank's rows (its share of the grid, *rows of *nrows,
 * malloc'd) go to rank 0, which gets them all in the order one process
 * makes them (pattern, target, norm, kernel), with norm and pattern
 * pointing into s, and *where (malloc'd) saying where each was measured;
 * other ranks end with no rows.  `device` describes this rank's device. */
int sweep_gather(const mk_sweep_opts *s, const char *device, mk_sweep_row **rows, size_t *nrows,
		 sweep_where **where);

#endif
