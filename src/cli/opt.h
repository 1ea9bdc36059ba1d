/*
 * The declarative option parser (after git's parse-options and tmux's
 * args): a command declares each option once, in a table of struct cli_opt
 * (name, type, range, default, help), and one parser builds getopt's
 * tables, converts and range-checks the values, applies the defaults and
 * prints --help from the same table.
 */
#ifndef MK_CLI_OPT_H
#define MK_CLI_OPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum cli_opt_type {
	CLI_FLAG,   /* bool: set to true */
	CLI_INT,    /* int64_t in [lo, hi] */
	CLI_UINT,   /* uint64_t in [0, 2^62] (seeds) */
	CLI_DOUBLE, /* double in [lo, hi] (finite; CLI_LO_OPEN / CLI_HI_OPEN exclude the bound) */
	CLI_SIZE,   /* uint64_t bytes, > 0: 4096, 512K, 64M, 4G */
	CLI_ENUM,   /* int: words[k] gives values[k] (values NULL: k) */
	CLI_STRING, /* const char *, non-empty */
	CLI_FILE,   /* const char *, a path ("-": standard output where the help says so) */
	CLI_LIST,   /* cli_list of strings, one per occurrence */
	CLI_CALL,   /* call(opts, arg): the command converts (returns a status) */
} cli_opt_type;

enum {
	CLI_LO_OPEN = 1 << 0,
	CLI_HI_OPEN = 1 << 1,
	CLI_HIDDEN = 1 << 2,     /* parsed, not shown in --help */
	CLI_DEPRECATED = 1 << 3, /* an old name of the option `alias`: works, with a note */
	CLI_NOARG = 1 << 4,      /* CLI_CALL without a value (arg is NULL) */
	CLI_STDOUT = 1 << 5,     /* CLI_FILE: "-" is standard output */
	CLI_INPUT = 1 << 6,      /* its value names what the command reads (cli_io.c) */
	CLI_OUTPUT = 1 << 7,     /* its value names a file the command writes */
};

typedef struct cli_list {
	const char **v;
	int n;
} cli_list;

struct cli_opt {
	const char *name; /* long name, without "--"; NULL ends a table */
	char key;         /* short name, or 0 */
	cli_opt_type type;
	size_t off; /* of the value in the command's options struct */
	const char *meta; /* the value's name in --help ("N", "FILE") */
	const char *help; /* one line; longer text goes in the command's notes */
	const char *def;  /* default, converted like a value and shown in --help; NULL: none */
	double lo, hi;
	const char *const *words; /* CLI_ENUM: NULL-terminated */
	const int *values;
	int (*call)(void *opts, const char *arg);
	unsigned flags;
	const char *alias; /* CLI_DEPRECATED: the option's new name */
	const char *dataset; /* CLI_OUTPUT: the dataset written when FILE.h5 names none */
	/* the library parameter this option sets, when its name is not the
	 * option's with '_' for '-' (errors naming it show this flag) */
	const char *param;
};

/* Table entries.  T is the command's options struct, f its field; more
 * fields may follow, e.g. .param = "tf" (see struct cli_opt). */
#define CLI_OPT_FLAG(n, k, T, f, h, ...)                                                           \
	{.name = n, .key = k, .type = CLI_FLAG, .off = offsetof(T, f), .help = h, __VA_ARGS__}
#define CLI_OPT_INT(n, k, T, f, m, l, u, d, h, ...)                                                \
	{.name = n, .key = k, .type = CLI_INT, .off = offsetof(T, f), .meta = m, .lo = l, .hi = u, \
	 .def = d, .help = h, __VA_ARGS__}
#define CLI_OPT_UINT(n, k, T, f, m, d, h, ...)                                                     \
	{.name = n, .key = k, .type = CLI_UINT, .off = offsetof(T, f), .meta = m, .def = d,        \
	 .help = h, __VA_ARGS__}
#define CLI_OPT_DOUBLE(n, k, T, f, m, l, u, fl, d, h, ...)                                         \
	{.name = n, .key = k, .type = CLI_DOUBLE, .off = offsetof(T, f), .meta = m, .lo = l,       \
	 .hi = u, .flags = fl, .def = d, .help = h, __VA_ARGS__}
#define CLI_OPT_SIZE(n, k, T, f, m, d, h, ...)                                                     \
	{.name = n, .key = k, .type = CLI_SIZE, .off = offsetof(T, f), .meta = m, .def = d,        \
	 .help = h, __VA_ARGS__}
#define CLI_OPT_ENUM(n, k, T, f, m, w, v, d, h, ...)                                               \
	{.name = n, .key = k, .type = CLI_ENUM, .off = offsetof(T, f), .meta = m, .words = w,      \
	 .values = v, .def = d, .help = h, __VA_ARGS__}
#define CLI_OPT_STRING(n, k, T, f, m, h, ...)                                                      \
	{.name = n, .key = k, .type = CLI_STRING, .off = offsetof(T, f), .meta = m, .help = h,     \
	 __VA_ARGS__}
#define CLI_OPT_FILE(n, k, T, f, m, h, ...)                                                        \
	{.name = n, .key = k, .type = CLI_FILE, .off = offsetof(T, f), .meta = m, .help = h,       \
	 __VA_ARGS__}
/* a file where "-" means standard output */
#define CLI_OPT_OUT(n, k, T, f, m, h, ...)                                                         \
	{.name = n, .key = k, .type = CLI_FILE, .off = offsetof(T, f), .meta = m, .help = h,       \
	 .flags = CLI_STDOUT | CLI_OUTPUT, __VA_ARGS__}
/* a file the command writes; _H5: into FILE.h5's dataset ds unless it names one */
#define CLI_OPT_WRITE(n, k, T, f, m, h, ...)                                                       \
	{.name = n, .key = k, .type = CLI_FILE, .off = offsetof(T, f), .meta = m, .help = h,       \
	 .flags = CLI_OUTPUT, __VA_ARGS__}
#define CLI_OPT_WRITE_H5(n, k, T, f, m, ds, h, ...)                                                \
	{.name = n, .key = k, .type = CLI_FILE, .off = offsetof(T, f), .meta = m, .help = h,       \
	 .flags = CLI_OUTPUT, .dataset = ds, __VA_ARGS__}
/* what the command reads: a file, or an expression or path of type ty */
#define CLI_OPT_READ(n, k, T, f, m, h, ...)                                                        \
	{.name = n, .key = k, .type = CLI_FILE, .off = offsetof(T, f), .meta = m, .help = h,       \
	 .flags = CLI_INPUT, __VA_ARGS__}
#define CLI_OPT_READ_AS(n, k, ty, T, f, m, h, ...)                                                 \
	{.name = n, .key = k, .type = ty, .off = offsetof(T, f), .meta = m, .help = h,             \
	 .flags = CLI_INPUT, __VA_ARGS__}
#define CLI_OPT_LIST(n, k, T, f, m, h, ...)                                                        \
	{.name = n, .key = k, .type = CLI_LIST, .off = offsetof(T, f), .meta = m, .help = h,       \
	 __VA_ARGS__}
#define CLI_OPT_CALL(n, k, fn, m, d, h, ...)                                                       \
	{.name = n, .key = k, .type = CLI_CALL, .call = fn, .meta = m, .def = d, .help = h,        \
	 __VA_ARGS__}
/* an old spelling: parsed as `to` (declared in the same table), with a note */
#define CLI_OPT_OLD(n, to) {.name = n, .flags = CLI_DEPRECATED | CLI_HIDDEN, .alias = to}
#define CLI_OPT_END {.name = NULL}

#define CLI_MAX_OPTS 64

#define CLI_MAX_IO 64

/* What the parser found: the operands, which options were given, and the
 * values of those that name inputs or outputs, in order. */
typedef struct cli_args {
	int argc;
	char **argv;
	const struct cli_opt *opts;
	bool given[CLI_MAX_OPTS];
	struct {
		const struct cli_opt *opt;
		const char *value;
	} io[CLI_MAX_IO];
	int nio;
} cli_args;

struct mk_cmd;
/* Applies the defaults, then parses argv[1..] (argv[0] the command's name)
 * into opts.  Returns MK_OK, 1 when --help was printed, or a negative status
 * with the message "CMD: what (see 'maskkit CMD --help')". */
int cli_opt_parse(const struct mk_cmd *c, void *opts, int argc, char **argv, cli_args *a);
/* cli_io.c: MK_EINVAL when an output option's file is one of the
 * command's inputs (its operands and CLI_INPUT options); run by
 * cli_opt_parse once the command line is read. */
int cli_io_check(const cli_args *a);
/* True when the option named `name` was on the command line. */
bool cli_given(const cli_args *a, const char *name);
/* Prints c's --help from its table to f. */
void cli_opt_help(const struct mk_cmd *c, FILE *f);
/* The closest of words (NULL-terminated) to s, or NULL when none is close. */
const char *cli_closest(const char *s, const char *const *words);

#endif
