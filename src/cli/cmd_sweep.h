/* Private to maskkit sweep (cmd_sweep.c, cmd_sweep_plot.c). */
#ifndef MK_CMD_SWEEP_H
#define MK_CMD_SWEEP_H

#include "cli.h"

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
	mk_sweep_lists lists; /* s's patterns, labels and norms */
	bool tty;
	mk_sweep_result res; /* on rank 0 */
	bool quiet;
	double started; /* of the progress's clock */
	bool device_given;
} sweep_cli;

/* The --png figure (cmd_sweep_plot.c), drawn as the report draws sweeps. */
int sweep_plot(const sweep_cli *c);

#endif
