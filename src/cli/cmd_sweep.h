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
	/* the options (sweep_table); shape, tile, seed and max_memory in s */
	mk_sweep_opts s;
	const char *out, *csv, *png, *patterns_arg, *kernels_arg, *norms_arg;
	int backend;        /* index of sweep_backends */
	int dtype;          /* --dtype: an mk_compute, copied to s.dtype */
	int64_t device, reps, min_reps, max_reps, warmup; /* copied to s (--reps: min = max) */
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
	double baseline[SWEEP_MAX_LIST]; /* dense's, per norm (mk_sweep_baseline) */
	bool quiet;
	double started; /* of the progress's clock */
	sweep_where *where;  /* per row, when several MPI ranks shared the sweep */
	bool device_given;
} sweep_cli;

/* The outputs (cmd_sweep_plot.c), on rank 0: -o (its format from its name:
 * sweep_output_format gives 0 for .csv or no name, 1 for .json, else an
 * error), --csv FILE, and standard output (--json, --csv -, or the CSV
 * when no output is named). */
int sweep_output_format(const char *path);
int sweep_write(const sweep_cli *c);
/* The --png figure. */
int sweep_plot(const sweep_cli *c);
/* The summary for a person (cmd_sweep_summary.c): a line per point, where
 * each pattern pays off. */
void sweep_summary(const sweep_cli *c, FILE *f);
/* Lines on stderr for points to read with care: a best kernel whose
 * interval is wider than the precision asked, medians that disagreed. */
void sweep_summary_warn(const sweep_cli *c);

/* Collective: every rank's rows (its share of the grid, *rows of *nrows,
 * malloc'd) go to rank 0, which gets them all in the order one process
 * makes them (pattern, target, norm, kernel), with norm and pattern
 * pointing into s, and *where (malloc'd) saying where each was measured;
 * other ranks end with no rows.  `device` describes this rank's device. */
int sweep_gather(const mk_sweep_opts *s, const char *device, mk_sweep_row **rows, size_t *nrows,
		 sweep_where **where);

#endif
