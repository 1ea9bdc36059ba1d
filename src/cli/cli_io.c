/*
 * Outputs never over inputs, decided in one place: the option tables mark
 * what a command reads (CLI_INPUT) and writes (CLI_OUTPUT); the parser
 * records their values (cli_args.io) and, before the command runs, refuses
 * any output that is one of its inputs.  An input is a file, a mask
 * expression (every file it reads), FILE.h5:/dataset, or a model: a
 * directory (every file in it, shards whatever their names) or its weights
 * file (every file beside it).  Into an HDF5 file that is also an input a
 * command may write only another dataset (mk_tensor_check_output decides).
 * Only existing regular files can be lost: a new name, a directory, a pipe
 * or /dev/stdout is nobody's input.
 */
#include "config.h"
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cli.h"

#define IO_PATH 4096

typedef struct io_out {
	const char *spec;   /* as given: FILE, or FILE.h5:/dataset */
	const char *dataset; /* the dataset it writes when FILE.h5 names none */
	char file[IO_PATH]; /* spec's file part */
	bool h5;
	struct stat st;
} io_out;

static bool io_same(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* spec's file (FILE.h5:/dataset names FILE.h5) into buf. */
static void io_file_part(const char *spec, char *buf, size_t cap)
{
	size_t len = mk_tensor_format(spec) == MK_FMT_H5 ? mk_tensor_file_len(spec) : strlen(spec);
	snprintf(buf, cap, "%.*s", (int)(len < cap ? len : cap - 1), spec);
}

/* Whether writing o destroys the input spec (a file, or FILE.h5:/dataset). */
static bool io_clash_file(const io_out *o, const char *spec)
{
	char file[IO_PATH];
	const char *one[1] = {spec};
	struct stat st;

	io_file_part(spec, file, sizeof file);
	if (stat(file, &st) != 0 || !io_same(&st, &o->st))
		return false;
	if (o->h5 && mk_tensor_format(spec) == MK_FMT_H5)
		return mk_tensor_check_output(o->spec, o->dataset, one, 1) != MK_OK;
	return true;
}

/* A model's folder: every regular file in it (config, tokenizer, weights
 * and shards, whatever their names), into hit. */
static bool io_clash_dir(const io_out *o, const char *dir, char *hit, size_t cap)
{
	struct dirent *e;
	struct stat st;
	bool found = false;
	DIR *d = opendir(dir);

	while (d && !found && (e = readdir(d))) {
		snprintf(hit, cap, "%s/%s", dir, e->d_name);
		found = stat(hit, &st) == 0 && S_ISREG(st.st_mode) && io_same(&st, &o->st);
	}
	if (d)
		closedir(d);
	return found;
}

/* One path an input names: the file itself, a folder's files, or, for a
 * model's weights file, the files beside it. */
static bool io_clash_path(const io_out *o, const char *spec, char *hit, size_t cap)
{
	char file[IO_PATH];
	const char *slash;
	size_t n;
	struct stat st;

	io_file_part(spec, file, sizeof file);
	if (stat(file, &st) != 0)
		return false;
	if (S_ISDIR(st.st_mode))
		return io_clash_dir(o, file, hit, cap);
	snprintf(hit, cap, "%s", spec);
	if (io_clash_file(o, spec))
		return true;
	n = strlen(file);
	if (n < 12 || strcmp(file + n - 12, ".safetensors"))
		return false;
	slash = strrchr(file, '/');
	if (!slash)
		return io_clash_dir(o, ".", hit, cap);
	file[slash == file ? 1 : slash - file] = '\0';
	return io_clash_dir(o, file, hit, cap);
}

/* A path, or an expression and every file it reads. */
static bool io_clash_one(const io_out *o, const char *input, char *hit, size_t cap)
{
	const char *files[64];
	mk_expr *e = NULL;
	size_t n;
	bool found = false;

	if (io_clash_path(o, input, hit, cap))
		return true;
	if (mk_expr_parse(input, &e) != MK_OK)
		return false;
	n = mk_expr_files(e, files, sizeof files / sizeof *files);
	for (size_t k = 0; k < n && k < sizeof files / sizeof *files && !found; k++)
		found = io_clash_path(o, files[k], hit, cap);
	mk_expr_free(e);
	return found;
}

/* An input as given, or a list of them ("a=causal,m.npy", sweep's
 * --patterns): split at the commas outside parentheses, labels dropped. */
static bool io_clash_input(const io_out *o, const char *input, char *hit, size_t cap)
{
	char piece[IO_PATH];
	const char *p = input;

	if (io_clash_one(o, input, hit, cap))
		return true;
	while (*p) {
		size_t len = 0;
		int depth = 0;
		const char *eq;
		for (; p[len] && (p[len] != ',' || depth > 0); len++)
			depth += (p[len] == '(') - (p[len] == ')');
		snprintf(piece, sizeof piece, "%.*s", (int)(len < sizeof piece ? len : sizeof piece - 1),
			 p);
		eq = strchr(piece, '=');
		if (len < strlen(input) &&
		    io_clash_one(o, eq && eq < piece + strcspn(piece, "(") ? eq + 1 : piece, hit, cap))
			return true;
		p += len + (p[len] == ',');
	}
	return false;
}

static int io_refuse(const char *opt, const io_out *o, const char *hit)
{
	return mk_error_set(MK_EINVAL, "%s '%s' is the input '%s': writing it would destroy the "
			    "input (write another file%s)", opt, o->spec, hit,
			    o->h5 ? " or dataset" : "");
}

int cli_io_check(const cli_args *a)
{
	char hit[2 * IO_PATH], opt[72];

	for (int k = 0; k < a->nio; k++) {
		const struct cli_opt *w = a->io[k].opt;
		io_out o = {.spec = a->io[k].value, .dataset = w->dataset};

		if (!(w->flags & CLI_OUTPUT))
			continue;
		snprintf(opt, sizeof opt, w->key == 'o' ? "-o" : "--%s", w->name);
		/* '-' is standard output only where the option says so; elsewhere it
		 * would be a file named "-", which this check could not compare */
		if (!strcmp(o.spec, "-") && (w->flags & CLI_STDOUT))
			continue;
		if (!strcmp(o.spec, "-"))
			return mk_error_set(MK_EINVAL, "%s '-': this option writes a file, not standard "
					    "output (name a file; /dev/stdout writes into a pipe)", opt);
		io_file_part(o.spec, o.file, sizeof o.file);
		if (stat(o.file, &o.st) != 0 || !S_ISREG(o.st.st_mode))
			continue;
		/* only a writer of datasets may share an HDF5 file with an input */
		o.h5 = w->dataset && mk_tensor_format(o.spec) == MK_FMT_H5;
		for (int i = 0; i < a->argc; i++)
			if (io_clash_input(&o, a->argv[i], hit, sizeof hit))
				return io_refuse(opt, &o, hit);
		for (int i = 0; i < a->nio; i++)
			if ((a->io[i].opt->flags & CLI_INPUT) &&
			    io_clash_input(&o, a->io[i].value, hit, sizeof hit))
				return io_refuse(opt, &o, hit);
	}
	return MK_OK;
}
