/* Helpers shared by the subcommands: errors, numbers, operands, output. */
#include "config.h"
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"

#define MK_SMALL_N 64 /* masks up to this size print as text without -o */

static const struct mk_cmd *cli_cmd_now; /* the command running, for its flags' names */

void cli_set_command(const struct mk_cmd *c)
{
	cli_cmd_now = c;
}

/* The flag of a library parameter: the option whose .param is param, else
 * the one whose name is param with '-' for '_' ("max_memory": max-memory). */
static const char *cli_param_flag(const char *param)
{
	char name[64];

	snprintf(name, sizeof name, "%s", param);
	for (char *c = name; *c; c++)
		if (*c == '_')
			*c = '-';
	for (int k = 0; cli_cmd_now && cli_cmd_now->opts && cli_cmd_now->opts[k].name; k++) {
		const struct cli_opt *o = &cli_cmd_now->opts[k];
		if (o->param ? !strcmp(o->param, param) : !strcmp(o->name, name))
			return o->name;
	}
	return NULL;
}

/* The library's message, its " (param)" shown as the flag the user typed. */
static void cli_error_print(FILE *f, int status)
{
	const mk_error_info *e = mk_error_get();
	const char *msg = *e->message ? e->message : mk_status_str(status), *flag, *at = NULL;
	char tail[80];

	if (e->param && (flag = cli_param_flag(e->param))) {
		snprintf(tail, sizeof tail, " (%s)", e->param);
		for (const char *p = strstr(msg, tail); p; p = strstr(p + 1, tail))
			at = p;
	}
	if (at)
		fprintf(f, "maskkit: %.*s (--%s)%s\n", (int)(at - msg), msg, flag, at + strlen(tail));
	else
		fprintf(f, "maskkit: %s\n", msg);
}

int cli_fail(int status)
{
	cli_error_print(stderr, status);
	return mk_status_is_user(status) ? MK_EXIT_USER : MK_EXIT_INTERNAL;
}

int cli_usage_error(const struct mk_cmd *c, const char *fmt, ...)
{
	char what[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return mk_error_set(MK_EINVAL, "%s: %s (see 'maskkit %s --help')", c->name, what, c->name);
}

int cli_exit_code(int status)
{
	if (status == MK_OK)
		return MK_EXIT_OK;
	return mk_status_is_user(status) ? MK_EXIT_USER : MK_EXIT_INTERNAL;
}

int cli_par_parsed(int code)
{
	int st = code < 0 ? 0 : code == 0 ? CLI_PAR_DONE : code, first;

	if (mk_par_size() == 1)
		return code;
	st = mk_par_agree(st, &first);
	/* rank 0 printed its own failure; another rank's is told here */
	if (st && st != CLI_PAR_DONE && first > 0)
		cli_error_print(stderr, st);
	return st == 0 ? -1 : st == CLI_PAR_DONE ? MK_EXIT_OK : st;
}

int cli_mpi_io(const char *arg, bool *collective)
{
	if (strcmp(arg, "independent") && strcmp(arg, "collective"))
		return mk_error_set(MK_EINVAL, "--mpi-io takes independent or collective, not '%s'",
				    arg);
	*collective = arg[0] == 'c';
	return MK_OK;
}

int cli_root_check_output_dir(const char *path)
{
	int ret = path && mk_par_rank() == 0 ? cli_check_output_dir(path) : MK_OK;
	return mk_par_agree(ret, NULL);
}

int cli_finish(int code)
{
	if ((fflush(stdout) != 0 || ferror(stdout)) && code == MK_EXIT_OK) {
		fprintf(stderr, "maskkit: error writing to standard output: %s\n", strerror(errno));
		return MK_EXIT_INTERNAL;
	}
	return code;
}

int cli_i64(const char *s, const char *opt, int64_t lo, int64_t hi, int64_t *out)
{
	char *end;
	long long v;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (end == s || *end || errno == EINVAL)
		return mk_error_set(MK_EINVAL, "%s expects an integer, got '%s'", opt, s);
	if (errno == ERANGE || v < lo || v > hi)
		return mk_error_set(v < lo && errno != ERANGE && v <= 0 && lo > 0 ? MK_EINVAL : MK_ERANGE,
				    "%s must be between %" PRId64 " and %" PRId64 ", got '%s'",
				    opt, lo, hi, s);
	*out = v;
	return MK_OK;
}

int cli_u64(const char *s, const char *opt, uint64_t *out)
{
	char *end;
	unsigned long long v;
	errno = 0;
	if (*s == '-' || *s == '+' || *s == ' ')
		return mk_error_set(MK_EINVAL, "%s expects a non-negative integer, got '%s'", opt, s);
	v = strtoull(s, &end, 10);
	if (end == s || *end || errno || v > ((uint64_t)1 << 62))
		return mk_error_set(MK_EINVAL, "%s expects an integer from 0 to 2^62, got '%s'",
				    opt, s);
	*out = v;
	return MK_OK;
}

int cli_operand(const char *arg, mk_expr **out)
{
	return mk_expr_operand(arg, out);
}

void cli_note_layouts(const mk_expr *e)
{
	const char *paths[16];
	size_t cap = sizeof paths / sizeof *paths, count = mk_expr_files(e, paths, cap);

	for (size_t k = 0; k < count && k < cap; k++)
		if (mk_format_from_path(paths[k]) == MK_FMT_FLEX)
			fprintf(stderr, "maskkit: note: '%s' is a block layout: its partial blocks "
				"count as whole blocks (a layout holds no cell mask)\n", paths[k]);
}

void cli_progress(int64_t done, int64_t n, void *arg)
{
	(void)arg;
	if (n < 65536) /* quick: a progress line would only flicker */
		return;
	fprintf(stderr, "\rmaskkit: %" PRId64 "/%" PRId64 " rows (%.0f%%)%s", done, n,
		100.0 * (double)done / (double)n, done >= n ? "\n" : "");
}

static int cli_summary(const mk_expr *e, const cli_mask_opts *o)
{
	mk_measure m;
	int ret = mk_measure_expr(e, NULL, 0, o->progress ? cli_progress : NULL, NULL, &m);
	if (ret)
		return ret;
	if (m.kv_len != m.n)
		printf("%s: %" PRId64 " x %" PRId64 " (q_len x kv_len, %s), |M| = %" PRIu64
		       ", sparsity = %.6f\n", mk_expr_params(e), m.n, m.kv_len,
		       mk_align_name(m.align), m.count, m.sparsity);
	else
		printf("%s: n = %" PRId64 ", |M| = %" PRIu64 ", sparsity = %.6f\n",
		       mk_expr_params(e), m.n, m.count, m.sparsity);
	printf("(n > %d: not printed; write it with -o FILE, or --format txt|json|blocks)\n",
	       MK_SMALL_N);
	return MK_OK;
}

/* --json: what the mask is, and where it went (format f, or none). */
static int cli_mask_json(const mk_expr *e, const cli_mask_opts *o, mk_format f)
{
	mk_mask_summary s;
	int ret = mk_mask_summarize(e, o->bind.seed, o->progress ? cli_progress : NULL, NULL, &s);

	if (ret)
		return ret;
	if (o->out) {
		s.output = o->out;
		s.format = mk_format_name(f);
	}
	return mk_emit(stdout, MK_EMIT_JSON, &mk_mask_summary_record, &s, 1, 0);
}

int cli_mask_check(const struct mk_cmd *c, const cli_mask_opts *o)
{
	if (o->json && !o->out && o->format != MK_FMT_NONE)
		return cli_usage_error(c, "--json prints a summary, not the mask: give -o FILE to "
				       "write it as %s", mk_format_name(o->format));
	return MK_OK;
}

int cli_emit(const mk_expr *e, const cli_mask_opts *o)
{
	mk_write_opts w = {.format = o->format, .block = o->block, .seed = o->bind.seed,
			   .max_memory = o->bind.max_memory};
	int ret;
	if (o->out) {
		if (w.format == MK_FMT_NONE)
			w.format = mk_format_from_path(o->out);
		if (w.format == MK_FMT_NONE)
			return mk_error_set(MK_EINVAL, "cannot tell the format of '%s' from its name: "
					    "give --format txt|json|png|h5|npy|blocks|flex|flex-py", o->out);
		ret = mk_write_expr(e, o->out, &w);
		return ret || !o->json ? ret : cli_mask_json(e, o, w.format);
	}
	if (o->json)
		return cli_mask_json(e, o, MK_FMT_NONE);
	if (w.format == MK_FMT_NONE && (mk_expr_n(e) > MK_SMALL_N || mk_expr_kv_len(e) > MK_SMALL_N))
		return cli_summary(e, o);
	if (w.format == MK_FMT_NONE)
		w.format = MK_FMT_TXT;
	if (w.format != MK_FMT_TXT && w.format != MK_FMT_JSON && w.format != MK_FMT_BLOCKS &&
	    w.format != MK_FMT_FLEX_PY)
		return mk_error_set(MK_EINVAL, "%s output is binary: give -o FILE",
				    mk_format_name(w.format));
	return mk_write_expr_stream(e, stdout, &w);
}

void cli_mask_defaults(cli_mask_opts *o)
{
	memset(o, 0, sizeof *o);
	o->bind.max_memory = MK_DEFAULT_MAX_MEMORY;
	o->progress = isatty(STDERR_FILENO);
}

int cli_mask_init(void *opts)
{
	cli_mask_opts *o = opts;
	uint64_t mem = o->bind.max_memory; /* the table's default, set before */

	cli_mask_defaults(o);
	if (mem)
		o->bind.max_memory = mem;
	return MK_OK;
}

/* CLI_ENUM stores an int: mk_align must be one */
_Static_assert(sizeof(mk_align) == sizeof(int), "mk_align is not an int");
const char *const cli_align_words[] = {"bottom-right", "top-left", NULL};

int cli_mask_opt_n(void *opts, const char *arg)
{
	cli_mask_opts *o = opts;
	return cli_i64(arg, "--n", 1, MK_N_MAX, &o->bind.n);
}

int cli_mask_opt_q_len(void *opts, const char *arg)
{
	cli_mask_opts *o = opts;
	return cli_i64(arg, "--q-len", 1, MK_N_MAX, &o->bind.n);
}

int cli_mask_opt_kv_len(void *opts, const char *arg)
{
	cli_mask_opts *o = opts;
	return cli_i64(arg, "--kv-len", 1, MK_N_MAX, &o->bind.kv_len);
}

int cli_mask_opt_format(void *opts, const char *arg)
{
	cli_mask_opts *o = opts;

	o->format = mk_format_from_name(arg);
	if (o->format == MK_FMT_NONE)
		return mk_error_set(MK_EINVAL, "unknown format '%s' (use txt, json, png, h5, npy, "
				    "blocks, flex or flex-py)", arg);
	return MK_OK;
}

/* Appends the first len bytes of s to buf (cap bytes, NUL-terminated); false
 * when it does not fit. */
static bool cli_append(char *buf, size_t cap, size_t *used, const char *s, size_t len)
{
	if (*used + len >= cap)
		return false;
	memcpy(buf + *used, s, len);
	*used += len;
	buf[*used] = '\0';
	return true;
}

int cli_output_name(const char *pattern, const char *input, char **out)
{
	const char *base = strrchr(input, '/'), *dot, *dir = ".", *p;
	size_t stem, dirlen = 1, used = 0, cap = strlen(pattern) * (strlen(input) + 2) + 2;
	char *buf;

	base = base ? base + 1 : input;
	dot = strrchr(base, '.');
	stem = dot && dot != base ? (size_t)(dot - base) : strlen(base);
	if (base != input) {
		/* the directory's own name: "runs/v1/tf_model.h5" -> "v1" */
		const char *end = base - 1, *start = end;
		while (start > input && start[-1] != '/')
			start--;
		if (end > start) {
			dir = start;
			dirlen = (size_t)(end - start);
		}
	}
	if (!(*out = buf = malloc(cap)))
		return mk_error_set(MK_ENOMEM, "out of memory");
	buf[0] = '\0';
	for (p = pattern; *p;) {
		bool ok;
		if (!strncmp(p, "{}", 2)) {
			ok = cli_append(buf, cap, &used, base, stem);
			p += 2;
		} else if (!strncmp(p, "{dir}", 5)) {
			ok = cli_append(buf, cap, &used, dir, dirlen);
			p += 5;
		} else {
			ok = cli_append(buf, cap, &used, p, 1);
			p++;
		}
		if (!ok) {
			free(buf);
			*out = NULL;
			return mk_error_set(MK_EINTERNAL, "output name too long");
		}
	}
	return MK_OK;
}

int cli_check_output_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[4096];

	if (!slash)
		snprintf(dir, sizeof dir, ".");
	else if (slash == path)
		snprintf(dir, sizeof dir, "/");
	else
		snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
	if (access(dir, W_OK | X_OK) != 0)
		return mk_error_set(MK_EIO, "'%s': cannot write in directory '%s': %s", path, dir,
				    strerror(errno));
	return MK_OK;
}

static bool cli_same_file(const struct stat *a, const char *path)
{
	struct stat b;
	return path && stat(path, &b) == 0 && a->st_dev == b.st_dev && a->st_ino == b.st_ino;
}

int cli_output_not_input(const char *opt, const char *out, const char *const *inputs, int n)
{
	struct stat so;
	const char *hit = NULL;

	if (!out || stat(out, &so) != 0)
		return MK_OK; /* a new file is nobody's input */
	for (int k = 0; k < n && !hit; k++)
		if (cli_same_file(&so, inputs[k]))
			hit = inputs[k];
	if (hit)
		return mk_error_set(MK_EINVAL, "%s '%s' is the input '%s': writing it would destroy "
				    "the input", opt, out, hit);
	return MK_OK;
}

/* Sizes from the mask's files are compared with the tensors' n first, so
 * that a mismatch names the tensors, not --n. */
int cli_bind_mask(const char *spec, const mk_bind_opts *bind, int64_t n, int64_t kv,
		  mk_expr **e)
{
	return mk_expr_operand_bound(spec, bind, n, kv, e);
}
