/* The command table's entry type and helpers shared by the subcommands. */
#ifndef MK_CLI_H
#define MK_CLI_H

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
};

extern const struct mk_cmd mk_cmd_gen, mk_cmd_compose, mk_cmd_measure, mk_cmd_patterns,
	mk_cmd_toeplitz, mk_cmd_positional, mk_cmd_attn, mk_cmd_sweep, mk_cmd_prune,
	mk_cmd_attn_stats, mk_cmd_axis, mk_cmd_explain, mk_cmd_report;
extern const struct mk_cmd mk_cmd_tokenize;
extern const struct mk_cmd mk_cmd_attn_derive;
extern const struct mk_cmd mk_cmd_encode;
extern const struct mk_cmd mk_cmd_heads;

enum { MK_EXIT_OK = 0, MK_EXIT_INTERNAL = 1, MK_EXIT_USER = 2 };

/* Prints "maskkit: <mk_error()>" and returns the exit code for status.  A
 * library parameter named in the error (mk_error_param) is shown as the
 * running command's flag for it (cli_opt.param, else the option of that
 * name with '-' for '_'). */
int cli_fail(int status);
/* The command running (main sets it), whose table maps parameters to flags. */
void cli_set_command(const struct mk_cmd *c);
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
/* After a mask with FlexAttention layouts (.npz) among its files has been
 * used: a note on stderr for each, since a layout read as a mask is
 * coarser than the mask it came from. */
void cli_note_layouts(const mk_expr *e);

/* Options common to commands that build masks. */
typedef struct cli_mask_opts {
	mk_bind_opts bind;
	const char *out;   /* -o */
	mk_format format;  /* --format */
	int64_t block;     /* --block for blocks output */
	bool progress;
	bool json;         /* --json: the result's summary as JSON (gen, compose) */
} cli_mask_opts;

/* CLI_OPT_CALL handlers of -n and --format: the options struct must start
 * with its cli_mask_opts. */
int cli_mask_opt_n(void *opts, const char *arg);
int cli_mask_opt_q_len(void *opts, const char *arg);
int cli_mask_opt_kv_len(void *opts, const char *arg);
int cli_mask_opt_format(void *opts, const char *arg);
/* --align's words, in mk_align's order (bottom-right is 0). */
extern const char *const cli_align_words[];
#define CLI_ALIGN_HELP                                                                        \
	"where a rectangular mask's queries sit: bottom-right (the last q_len of the kv_len "  \
	"positions, a KV cache) or top-left (query i at key i); see docs/patterns.md"
/* --align, for an options struct whose mk_bind_opts is at offset off */
#define CLI_OPT_ALIGN(off_)                                                                   \
	{.name = "align", .type = CLI_ENUM, .off = (off_), .meta = "A",                        \
	 .words = cli_align_words, .def = "bottom-right", .help = CLI_ALIGN_HELP}
/* --q-len, --kv-len and --align, for the commands that build masks from
 * expressions (their options struct starts with a cli_mask_opts) */
#define CLI_MASK_RECT_OPTS                                                                    \
	CLI_OPT_CALL("q-len", 0, cli_mask_opt_q_len, "N", NULL,                                 \
		     "queries (rows) of a rectangular mask: --n by another name"),               \
	CLI_OPT_CALL("kv-len", 0, cli_mask_opt_kv_len, "N", NULL,                               \
		     "keys (columns): a q_len x kv_len mask, its queries placed by --align "    \
		     "(default: square)"),                                                       \
	CLI_OPT_ALIGN(offsetof(cli_mask_opts, bind.align))
/* A command's init when its options struct starts with a cli_mask_opts. */
int cli_mask_init(void *opts);
/* Sparsity values, the one parser of every --sparsity (cli_sparsity.c): S,
 * S1,S2,... or A..B[:STEP] (B included, STEP 10%), at most cap of them, as
 * fractions in out.  A number written N% is a percentage; the bare numbers
 * of s are read together: percentages when any of them is above 1 (10..90
 * is 10%..90%), else fractions (0.1..0.9).  A bare number above 1 beside an
 * N% is refused with a hint.  Errors name opt. */
int cli_sparsities(const char *s, const char *opt, double *out, size_t cap, size_t *count);
/* The rule, for the notes of --help. */
#define CLI_SPARSITY_NOTE                                                                        \
	"Sparsities: one value S, a list S1,S2,... or a range A..B[:STEP] (B included;\n"        \
	"STEP 10%).  A number written N% is a percentage.  The bare numbers of one\n"           \
	"--sparsity are read together: if any is above 1 they are all percentages\n"           \
	"(10..90 is 10%..90%, 1..99 is 1%..99%), else all fractions (0.1..0.9, 0.5,1).\n"      \
	"A bare number above 1 beside an N% (10%..90) is refused.\n"

void cli_mask_defaults(cli_mask_opts *o);

/* Usage errors of gen/compose's output options (c names the command). */
int cli_mask_check(const struct mk_cmd *c, const cli_mask_opts *o);
/* Writes a bound expression as gen/compose do: to -o (atomically), to
 * stdout for text formats, or a summary for a large mask without -o; with
 * --json, a JSON object describing the mask (expr, params, n, seed, count,
 * sparsity, output, format) after writing -o.  Returns an MK_* status. */
int cli_emit(const mk_expr *e, const cli_mask_opts *o);
/* The output name for one of several inputs: pattern with each '{}'
 * replaced by the input's file name without its last extension and each
 * '{dir}' by the name of its directory ("runs/v1/tf_model.h5": "tf_model",
 * "v1").  *out is malloc'd. */
int cli_output_name(const char *pattern, const char *input, char **out);
/* MK_EIO unless path's directory exists and is writable: for outputs
 * written only after long work, checked before it starts. */
int cli_check_output_dir(const char *path);
/* MK_EINVAL naming opt when out is an existing file that is also one of the
 * n files given, compared by device and inode, so under any spelling (one
 * output over another; an output over an input: cli_io.c). */
int cli_output_not_input(const char *opt, const char *out, const char *const *inputs, int n);
/* A --mask expression (or file) bound at the tensors' n queries and kv keys
 * (kv = n: square): MK_EINVAL when its files fix another size. */
int cli_bind_mask(const char *spec, const mk_bind_opts *bind, int64_t n, int64_t kv,
		  mk_expr **e);
/* Reads a --heads-file (cli_heads.c): a JSON list of expressions, one per
 * head, or a list of such lists, one per layer, all of one length.  *layers
 * is 0 for a flat list; *exprs holds max(layers, 1) * heads malloc'd strings
 * (layer-major), freed with cli_heads_free.  Errors name the file and the
 * offending entry (MK_EIO, MK_EFORMAT). */
int cli_heads_file(const char *path, char ***exprs, int64_t *layers, int64_t *heads);
void cli_heads_free(char **exprs, size_t count);
/* gen/compose with --heads-file: builds head k's mask from expression k
 * (joined with the nargs masks of args under op, as compose does), bound
 * with seed + k, and writes the stack to -o (HDF5) or prints a summary
 * (--json: as JSON, also after -o).  Returns an MK_* status. */
int cli_heads_emit(const char *path, int op, char **args, int nargs, const cli_mask_opts *o);
/* Progress on stderr, when it is a terminal. */
void cli_progress(int64_t done, int64_t n, void *arg);

#endif
