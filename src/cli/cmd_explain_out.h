/* `maskkit explain`'s options and results, shared by its parser
 * (cmd_explain.c) and its outputs (cmd_explain_out.c). */
#ifndef MK_CMD_EXPLAIN_OUT_H
#define MK_CMD_EXPLAIN_OUT_H

#include "cli.h"
#include "cmd_explain.h"

#define EXPLAIN_MAX_NORMS 16

typedef struct ex_opts {
	cli_mask_opts m;       /* -o, --seed, --max-memory, --progress */
	const char *input, *random, *qspec, *kspec, *mask, *norm_arg;
	const char *png, *csv, *hist_csv; /* csv "-": standard output */
	int64_t heads, rand_n, rand_d, tile, trace, bins;
	int64_t sample;        /* --sample (when has_sample) */
	bool has_sample;
	const char *text;      /* --text: INPUT is a model run over this text */
	int64_t layer, max_len;
	bool sentences;
	double scale;
	int tf;                /* --linear: 0 torch, 1 tf */
	bool linear, json;
	mk_norm norms[EXPLAIN_MAX_NORMS];
	mk_explain_opts run;   /* eps, bins, trace, nnorms */
	ex_toy_opts toy;       /* --toy and its options */
} ex_opts;

typedef struct ex_job {
	const ex_opts *o;
	mk_qk qk;
	mk_expr *expr;
	mk_mask *mask;
	mk_attn_layout *layout;
	uint64_t entries;      /* of the mask (S^2 without one) */
	mk_explain e;
	double seconds;
} ex_job;

/* The table or JSON on stdout, then the files asked for. */
int explain_outputs(const ex_job *j);

#endif
