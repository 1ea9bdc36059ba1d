/* `maskkit explain`: its options, and the toy models' half
 * (cmd_explain_toy.c), run by cmd_explain.c's exec when --toy is given; the
 * options of both halves are declared in cmd_explain.c's table. */
#ifndef MK_CMD_EXPLAIN_H
#define MK_CMD_EXPLAIN_H

#include "cli.h"

/* --toy and the options only the toys take. */
typedef struct ex_toy_opts {
	const char *name;    /* --toy: "collapse" or "distance"; NULL: no toy */
	int64_t steps;       /* collapse */
	double sd;
	int score;           /* an mk_toy_score (both toys) */
	double a[MK_TOY_DISTANCE_LIST_MAX]; /* distance */
	int na;
	int64_t sizes[MK_TOY_DISTANCE_LIST_MAX];
	int nsizes;
	double r_min, r_max;
	int64_t nr;
} ex_toy_opts;

#define EXPLAIN_MAX_NORMS 16

typedef struct ex_opts {
	cli_mask_opts m;       /* -o, --seed, --max-memory, --progress */
	mk_explain_source src; /* INPUT, --q, --k, --heads, --sample, --text... */
	const char *random, *mask, *norm_arg;
	const char *png, *csv, *hist_csv; /* csv "-": standard output */
	int64_t tile, trace, bins;
	bool json;
	mk_norm norms[EXPLAIN_MAX_NORMS];
	mk_explain_opts run;   /* eps, bins, trace, nnorms */
	ex_toy_opts toy;       /* --toy and its options */
} ex_opts;

/* CLI_OPT_CALL handlers of --toy, --a, --r, --sizes and --sd (opts: an ex_opts). */
int explain_opt_toy(void *opts, const char *arg);
int explain_opt_a(void *opts, const char *arg);
int explain_opt_r(void *opts, const char *arg);
int explain_opt_sizes(void *opts, const char *arg);
int explain_opt_sd(void *opts, const char *arg);

/* MK_EINVAL for a --csv value that looks like an option ("--json": an old
 * `--csv` switch followed by one), and for --csv - (standard output) with
 * --json. */
int explain_check_csv(const char *csv, bool json);

/* Runs the toy o->toy.name, its options already checked against the
 * other mode's; seed_given: --seed was on the command line. */
int explain_toy_exec(const ex_opts *o, const cli_args *a, bool seed_given);

#endif
