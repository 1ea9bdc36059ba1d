/* The command table's entry type and helpers shared by the subcommands. */
#ifndef MK_CLI_H
#define MK_CLI_H

#include <getopt.h>
#include <stdio.h>
#include "maskkit.h"
#include "opt.h"

/* A command: its help, its option table (src/cli/opt.h) and what it runs.
 * The parser fills an options struct of opts_size bytes (zeroed, then the
 * table's defaults, then init) and exec gets it with the operands; exec
 * returns an MK_* status and main turns that into the exit code. */
struct mk_cmd {
	const char *name;
	const char *summary;
	const char *synopsis;    /* operand forms after "maskkit NAME", one per line */
	const char *description; /* what it does (--help), ends with a newline */
	const char *notes;       /* after the options, ends with a newline */
	const char *examples;    /* "  maskkit NAME ...\n" lines */
	const struct cli_opt *opts;
	size_t opts_size;
	int (*init)(void *opts); /* defaults a table cannot state, or NULL */
	int (*exec)(void *opts, const cli_args *a);
	/* runs on every MPI rank (else on rank 0 only) */
	bool parallel;
	/* a command not yet on the table: its --help text and run (exit code) */
	const char *usage;
	int (*run)(int argc, char **argv);
};

extern const struct mk_cmd mk_cmd_gen, mk_cmd_compose, mk_cmd_measure, mk_cmd_patterns,
	mk_cmd_toeplitz, mk_cmd_positional, mk_cmd_attn, mk_cmd_sweep, mk_cmd_prune,
	mk_cmd_attn_stats, mk_cmd_axis, mk_cmd_explain, mk_cmd_report;

enum { MK_EXIT_OK = 0, MK_EXIT_INTERNAL = 1, MK_EXIT_USER = 2 };

/* Prints "maskkit: <mk_error()>" and returns the exit code for status. */
int cli_fail(int status);
/* Prints "maskkit: <cmd>: <message> (see 'maskkit <cmd> --help')"; returns 2. */
int cli_usage(const struct mk_cmd *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Sets "<cmd>: <message> (see 'maskkit <cmd> --help')" as the error and
 * returns MK_EINVAL (printed by main, as every error). */
int cli_usage_error(const struct mk_cmd *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* exec's status when it printed its errors itself (each of several inputs
 * reported as it failed): exit 2 or 1, nothing more printed. */
#define CLI_DONE_USER (-1000)
#define CLI_DONE_SYS (-1001)
/* The exit code for a status: 0, 2 (bad input) or 1. */
int cli_exit_code(int status);
/* Reports getopt's '?' or ':' for argv[optind - 1]; returns 2. */
int cli_bad_option(const struct mk_cmd *c, char **argv, int opt);
void cli_help(const struct mk_cmd *c);
/* Flushes stdout and turns a write error into exit code 1 (reported only if
 * the command had not already failed, so there is one line on stderr). */
int cli_finish(int code);

/* Under MPI, after parsing: code is what the parser returned (-1: go on,
 * else the exit code); the ranks agree on it and rank 0 tells a failure
 * that was another rank's.  Returns the agreed code (-1: go on). */
#define CLI_PAR_DONE 1000
int cli_par_parsed(int code);
/* --mpi-io independent|collective. */
int cli_mpi_io(const char *arg, bool *collective);
/* cli_check_output_dir on rank 0 (where outputs are written), agreed by
 * every rank; MK_OK for path NULL. */
int cli_root_check_output_dir(const char *path);

/* Integer option values, range-checked, with the option named in errors. */
int cli_i64(const char *s, const char *opt, int64_t lo, int64_t hi, int64_t *out);
int cli_u64(const char *s, const char *opt, uint64_t *out);

/* Parses an operand: an existing file (any name) or an expression. */
int cli_operand(const char *arg, mk_expr **out);

/* Options common to commands that build masks. */
typedef struct cli_mask_opts {
	mk_bind_opts bind;
	const char *out;   /* -o */
	mk_format format;  /* --format */
	int64_t block;     /* --block for blocks output */
	bool progress;
} cli_mask_opts;

/* Table entries of the mask options, for an options struct T holding a
 * cli_mask_opts named m (set up by cli_mask_init, as the command's init). */
#define CLI_MASK_N(T) CLI_OPT_CALL("n", 'n', cli_mask_opt_n, "N", NULL, "sequence length (default: the masks' own, else 1024)")
#define CLI_MASK_SEED(T) CLI_OPT_UINT("seed", 0, T, m.bind.seed, "S", NULL, "seed of the random patterns (default 0)")
#define CLI_MASK_OUTPUT(T) CLI_OPT_FILE("output", 'o', T, m.out, "FILE", "write the mask to FILE (format from its extension)")
#define CLI_MASK_FORMAT(T) CLI_OPT_CALL("format", 0, cli_mask_opt_format, "F", NULL, "txt, json, png, h5, npy or blocks (default: from -o's extension)")
#define CLI_MASK_BLOCK(T) CLI_OPT_INT("block", 0, T, m.block, "B", 1, MK_N_MAX, NULL, "block size of the blocks format (default 128)")
#define CLI_MASK_MAXMEM(T) CLI_OPT_SIZE("max-memory", 0, T, m.bind.max_memory, "S", "4G", "refuse work needing more memory than S (e.g. 512M)")
#define CLI_MASK_PROGRESS(T) CLI_OPT_FLAG("progress", 0, T, m.progress, "progress on stderr (default: when stderr is a terminal)")
/* CLI_OPT_CALL handlers of the entries above: opts must start with its
 * cli_mask_opts (declare it first in the struct). */
int cli_mask_opt_n(void *opts, const char *arg);
int cli_mask_opt_format(void *opts, const char *arg);
/* A command's init when its options struct starts with a cli_mask_opts. */
int cli_mask_init(void *opts);
/* A sparsity value: a fraction in [0, 1], or a percentage written with '%'
 * ("25%"); 10 without '%' is refused with a hint (did you mean 0.1 or 10%?). */
int cli_sparsity(const char *s, const char *opt, double *out);

/* Long-option codes shared by the commands. */
enum {
	CLI_OPT_SEED = 256, CLI_OPT_FORMAT, CLI_OPT_BLOCK, CLI_OPT_MAXMEM, CLI_OPT_PROGRESS,
	CLI_OPT_JSON, CLI_OPT_TILE, CLI_OPT_OP, CLI_OPT_NODIAG
};
#define CLI_MASK_LONGOPTS                                              \
	{"n", required_argument, NULL, 'n'},                           \
	{"seed", required_argument, NULL, CLI_OPT_SEED},               \
	{"output", required_argument, NULL, 'o'},                      \
	{"format", required_argument, NULL, CLI_OPT_FORMAT},           \
	{"block", required_argument, NULL, CLI_OPT_BLOCK},             \
	{"max-memory", required_argument, NULL, CLI_OPT_MAXMEM},       \
	{"progress", no_argument, NULL, CLI_OPT_PROGRESS},             \
	{"help", no_argument, NULL, 'h'}
/* Runs getopt_long over argv: -h prints c's help, options of
 * CLI_MASK_LONGOPTS go to o, and any other option to extra (which returns 0
 * or a negative status, message set).  Returns -1 to go on with the operands
 * at argv[optind], or the exit code to return now. */
int cli_parse(const struct mk_cmd *c, int argc, char **argv, const struct option *longopts,
	      cli_mask_opts *o, int (*extra)(int opt, const char *arg, void *ctx), void *ctx);
/* Handles one of CLI_MASK_LONGOPTS: 1 if handled, 0 if not, or a negative
 * status (message set). */
int cli_mask_option(int opt, const char *arg, cli_mask_opts *o);
void cli_mask_defaults(cli_mask_opts *o);

/* Writes a bound expression as gen/compose do: to -o (atomically), to
 * stdout for text formats, or a summary for a large mask without -o. */
int cli_emit(const mk_expr *e, const cli_mask_opts *o);
/* The output name for one of several inputs: pattern with each '{}'
 * replaced by the input's file name without its last extension and each
 * '{dir}' by the name of its directory ("runs/v1/tf_model.h5": "tf_model",
 * "v1").  *out is malloc'd. */
int cli_output_name(const char *pattern, const char *input, char **out);
/* MK_EIO unless path's directory exists and is writable: for outputs
 * written only after long work, checked before it starts. */
int cli_check_output_dir(const char *path);
/* A --mask expression (or file) bound at the tensors' n: MK_EINVAL when
 * its files fix another n. */
int cli_bind_mask(const char *spec, const mk_bind_opts *bind, int64_t n, mk_expr **e);
/* Reads a --heads-file (cli_heads.c): a JSON list of expressions, one per
 * head, or a list of such lists, one per layer, all of one length.  *layers
 * is 0 for a flat list; *exprs holds max(layers, 1) * heads malloc'd strings
 * (layer-major), freed with cli_heads_free.  Errors name the file and the
 * offending entry (MK_EIO, MK_EFORMAT). */
int cli_heads_file(const char *path, char ***exprs, int64_t *layers, int64_t *heads);
void cli_heads_free(char **exprs, size_t count);
/* gen/compose with --heads-file: builds head k's mask from expression k
 * (joined with the nargs masks of args under op, as compose does), bound
 * with seed + k, and writes the stack to -o (HDF5) or prints a summary. */
int cli_heads_emit(const char *path, int op, char **args, int nargs, const cli_mask_opts *o);
/* Progress on stderr, when it is a terminal. */
void cli_progress(int64_t done, int64_t n, void *arg);
/* Prints x (NULL: out of memory) as indented JSON on stdout and deletes it;
 * MK_OK or MK_ENOMEM. */
struct cJSON;
int cli_json_out(struct cJSON *x);

/* The data-set mode of `maskkit measure` (cmd_measure_data.c). */
enum {
	CLI_OPT_DATASET = 320, CLI_OPT_LENGTHS, CLI_OPT_AXES, CLI_OPT_THRESHOLD, CLI_OPT_TOPP,
	CLI_OPT_BY, CLI_OPT_CSV, CLI_OPT_PNG, CLI_OPT_HEADS, CLI_OPT_MPIIO
};
#define CLI_DATA_LONGOPTS                                              \
	{"dataset", required_argument, NULL, CLI_OPT_DATASET},         \
	{"lengths", required_argument, NULL, CLI_OPT_LENGTHS},         \
	{"axes", required_argument, NULL, CLI_OPT_AXES},               \
	{"threshold", required_argument, NULL, CLI_OPT_THRESHOLD},     \
	{"top-p", required_argument, NULL, CLI_OPT_TOPP},              \
	{"by", required_argument, NULL, CLI_OPT_BY},                   \
	{"csv", no_argument, NULL, CLI_OPT_CSV},                       \
	{"png", required_argument, NULL, CLI_OPT_PNG},                 \
	{"heads-file", required_argument, NULL, CLI_OPT_HEADS},        \
	{"mpi-io", required_argument, NULL, CLI_OPT_MPIIO}
typedef struct cli_data_opts {
	const char *dataset, *lengths, *axes, *png, *heads_file;
	char by;      /* 'l', 'h', 's' or 0 */
	mk_keep keep;
	bool any;     /* a data-set option was given */
	bool csv;
	bool collective; /* --mpi-io collective */
	bool mpi_io_given;
} cli_data_opts;
/* 1 when opt is one of CLI_DATA_LONGOPTS (handled), 0 when not, or a
 * negative status. */
int cli_data_option(int opt, const char *arg, cli_data_opts *o);
/* True when `arg` with these options is measured as a data set. */
bool cli_data_mode(const char *arg, const cli_data_opts *o);
/* cli_data_mode, agreed by the MPI ranks (an HDF5 operand missing on one
 * rank's node fails on every rank). */
int cli_data_choose(const char *arg, const cli_data_opts *o, bool *data);
/* Measures operands (0 or 1) as a data set; returns the exit code. */
int cli_data_measure(const cli_data_opts *d, const cli_mask_opts *m, bool json, int argc,
		     char **argv);

#endif
