/* maskkit report: running the subcommands, and the Markdown helpers the
 * sections share. */
#include "config.h"
#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "maskkit.h"
#include "plot.h"
#include "report.h"

#define RP_OUTPUT_MAX (64u << 20) /* of a child's stdout: JSON tables are far smaller */

bool rp_buf_open(rp_buf *b)
{
	b->f = open_memstream(&b->text, &b->len);
	return b->f != NULL;
}

void rp_buf_write(report *r, rp_buf *b, rp_item *it)
{
	bool ok = b->f && fclose(b->f) == 0;

	b->f = NULL;
	if (!ok)
		rp_fail(r, it, "out of memory");
	else if (it->ok && rp_write_file(r, it->file, b->text, b->len))
		rp_fail(r, it, mk_error());
	free(b->text);
	b->text = NULL;
}

void rp_buf_discard(rp_buf *b)
{
	if (b->f)
		fclose(b->f);
	free(b->text);
	*b = (rp_buf){0};
}

void rp_md(report *r, const char *fmt, ...)
{
	va_list ap;

	if (!r->cur || !r->cur->f)
		return;
	va_start(ap, fmt);
	vfprintf(r->cur->f, fmt, ap);
	va_end(ap);
}

void rp_md_text(report *r, const char *s)
{
	if (!r->cur || !r->cur->f || !s)
		return;
	for (const char *p = s; *p; p++) {
		bool edge = p == s || !isalnum((unsigned char)p[-1]) || !isalnum((unsigned char)p[1]);
		if (*p == '\n' || *p == '\r')
			fputc(' ', r->cur->f);
		else if (strchr("\\`*[]<>|&!#", *p) || (*p == '_' && edge))
			fprintf(r->cur->f, "\\%c", *p);
		else
			fputc(*p, r->cur->f);
	}
}

void rp_md_code(report *r, const char *s)
{
	size_t run = 0, longest = 0, len = strlen(s);
	bool pad;

	if (!r->cur || !r->cur->f)
		return;
	for (const char *p = s; *p; p++) {
		run = *p == '`' ? run + 1 : 0;
		longest = run > longest ? run : longest;
	}
	pad = len && (s[0] == '`' || s[len - 1] == '`');
	for (size_t k = 0; k <= longest; k++)
		fputc('`', r->cur->f);
	fprintf(r->cur->f, "%s", pad ? " " : "");
	for (const char *p = s; *p; p++)
		fputc(*p == '\n' || *p == '\r' ? ' ' : *p, r->cur->f);
	fprintf(r->cur->f, "%s", pad ? " " : "");
	for (size_t k = 0; k <= longest; k++)
		fputc('`', r->cur->f);
}

void rp_gp_string(FILE *f, const char *s)
{
	fputc('\'', f);
	mk_gp_quote(f, s);
	fputc('\'', f);
}

void rp_csv_field(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
	}
	fputc('"', f);
}

/* `maskkit report --out . --only SECTION` with the inputs it needs. */
static char *rp_only_command(const report *r)
{
	const char *argv[4 * 64 + 16];
	int n = 0;
	bool tisa = !strcmp(r->cur->slot, "tisa"), sweep = !strcmp(r->cur->slot, "sweep");

	argv[n++] = "report";
	argv[n++] = "--out";
	argv[n++] = ".";
	argv[n++] = "--only";
	argv[n++] = r->cur->slot;
	if (r->quick)
		argv[n++] = "--quick";
	if (!sweep && r->model_opt) {
		argv[n++] = "--model";
		argv[n++] = r->model_opt;
	}
	if (!sweep && r->text) {
		argv[n++] = "--text";
		argv[n++] = r->text;
	}
	if (!sweep && r->samples) {
		argv[n++] = "--samples";
		argv[n++] = r->samples_text;
	}
	for (int k = 0; tisa && k < r->nweights && k < 64; k++) {
		argv[n++] = "--weights";
		argv[n++] = r->weights[k];
	}
	for (int k = 0; sweep && k < r->nsweeps && k < 64; k++) {
		argv[n++] = "--sweep";
		argv[n++] = r->sweeps[k];
	}
	argv[n] = NULL;
	return rp_command(argv, true);
}

void rp_md_commands(report *r, const char *const *lines, int n)
{
	char *only = r->cur ? rp_only_command(r) : NULL;

	rp_md(r, "\n```sh\n# run in this directory: the commands that made this section\n");
	for (int k = 0; k < n; k++)
		if (lines[k])
			rp_md(r, "%s\n", lines[k]);
	if (only)
		rp_md(r, "# and its figures and tables, all remade from them:\n%s\n", only);
	rp_md(r, "```\n\n");
	free(only);
}

static bool rp_plain(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%",
			    *s))
			return false;
	return true;
}

char *rp_command(const char *const *argv, bool maskkit)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	if (maskkit)
		fputs("maskkit", f);
	for (int k = 0; argv[k]; k++) {
		const char *a = argv[k];
		if (k || maskkit)
			fputc(' ', f);
		if (rp_plain(a)) {
			fputs(a, f);
			continue;
		}
		fputc('\'', f);
		for (; *a; a++)
			if (*a == '\'')
				fputs("'\\''", f);
			else
				fputc(*a, f);
		fputc('\'', f);
	}
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* The whole of a file opened by fd, from its start, NUL-terminated. */
static char *rp_slurp_fd(int fd, size_t max)
{
	struct stat st;
	char *buf;
	size_t n = 0;

	if (fstat(fd, &st) != 0 || lseek(fd, 0, SEEK_SET) != 0)
		return NULL;
	if ((uint64_t)st.st_size > max)
		st.st_size = (off_t)max;
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return NULL;
	while (n < (size_t)st.st_size) {
		ssize_t got = read(fd, buf + n, (size_t)st.st_size - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		n += (size_t)got;
	}
	buf[n] = '\0';
	return buf;
}

/* The child's message: its last "maskkit: " line, else its last line. */
static void rp_reason_from(const char *err, char *reason, size_t size)
{
	const char *best = NULL, *last = NULL;
	size_t best_len = 0, last_len = 0;

	for (const char *line = err; line && *line;) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
			len--;
		if (len) {
			last = line;
			last_len = len;
			if (strncmp(line, "maskkit", 7) == 0 || strstr(line, "rror")) {
				best = line;
				best_len = len;
			}
		}
		line = end ? end + 1 : NULL;
	}
	if (!best) {
		best = last;
		best_len = last_len;
	}
	if (best)
		snprintf(reason, size, "%.*s", (int)best_len, best);
}

static int rp_tmpfd(void)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	int fd;

	snprintf(path, sizeof path, "%s/maskkit-report-XXXXXX", dir && *dir ? dir : "/tmp");
	fd = mkstemp(path);
	if (fd >= 0) {
		unlink(path);
		/* not inherited by the children (which get it as 1 or 2 by dup2) */
		fcntl(fd, F_SETFD, FD_CLOEXEC);
	}
	return fd;
}

/* fork, chdir to the output directory, exec; waits. */
static int rp_spawn(report *r, const char *prog, char *const *argv, bool search, int out_fd,
		    int err_fd, int *status)
{
	pid_t pid;
	int token;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return mk_error_set(MK_ESYS, "cannot start '%s': %s", prog, strerror(errno));
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDONLY);
		if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(out_fd, 1) < 0 ||
		    dup2(err_fd, 2) < 0 || chdir(r->out) != 0)
			_exit(126);
		if (search)
			execvp(prog, argv);
		else
			execv(prog, argv);
		dprintf(2, "%s: %s\n", prog, errno == ENOENT ? "not found (not installed?)" :
			strerror(errno));
		_exit(127);
	}
	/* a signal that stops the report stops the command too, which then
	 * removes its own temporary files */
	token = mk_cleanup_push_child(pid);
	if (mk_cleanup_wait_child(token, pid, status) != 0)
		return mk_error_set(MK_ESYS, "waiting for '%s': %s", prog, strerror(errno));
	return MK_OK;
}

static int rp_exec(report *r, const char *prog, const char *const *argv, bool maskkit,
		   char **out, char **cmd, char *reason, size_t size)
{
	int out_fd = rp_tmpfd(), err_fd = rp_tmpfd(), status = 0, ret;
	char *err = NULL;

	reason[0] = '\0';
	if (out)
		*out = NULL;
	*cmd = rp_command(maskkit ? argv + 1 : argv, maskkit);
	if (!*cmd || out_fd < 0 || err_fd < 0) {
		ret = mk_error_set(MK_ESYS, "cannot make temporary files: %s", strerror(errno));
		goto cleanup;
	}
	if (r->verbose)
		fprintf(stderr, "maskkit report:   %s\n", *cmd);
	ret = rp_spawn(r, prog, (char *const *)argv, !maskkit, out_fd, err_fd, &status);
	if (ret)
		goto cleanup;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		if (out && !(*out = rp_slurp_fd(out_fd, RP_OUTPUT_MAX)))
			ret = mk_error_set(MK_ENOMEM, "cannot read the output of '%s'", *cmd);
		goto cleanup;
	}
	err = rp_slurp_fd(err_fd, 1u << 20);
	if (err)
		rp_reason_from(err, reason, size);
	if (!reason[0] && WIFSIGNALED(status))
		snprintf(reason, size, "%s was killed by signal %d", prog, WTERMSIG(status));
	else if (!reason[0])
		snprintf(reason, size, "'%s' failed with exit status %d", *cmd, WEXITSTATUS(status));
	ret = mk_error_set(MK_EIO, "%s", reason);
cleanup:
	if (ret && !reason[0])
		snprintf(reason, size, "%s", mk_error());
	free(err);
	if (out_fd >= 0)
		close(out_fd);
	if (err_fd >= 0)
		close(err_fd);
	return ret;
}

int rp_run(report *r, const char *const *argv, char **out, char **cmd, char *reason,
	   size_t size)
{
	const char *full[64];
	int n = 0;

	full[n++] = "maskkit";
	for (; argv[n - 1]; n++) {
		if (n == 63) {
			snprintf(reason, size, "internal: a command of more than 62 arguments");
			*cmd = NULL;
			return mk_error_set(MK_EINTERNAL, "%s", reason);
		}
		full[n] = argv[n - 1];
	}
	full[n] = NULL;
	return rp_exec(r, r->self, full, true, out, cmd, reason, size);
}

int rp_run_json(report *r, const char *const *argv, cJSON **json, char **cmd, char *reason,
		size_t size)
{
	char *out = NULL;
	int ret = rp_run(r, argv, &out, cmd, reason, size);

	*json = NULL;
	if (ret)
		return ret;
	*json = cJSON_Parse(out);
	free(out);
	if (!*json) {
		snprintf(reason, size, "'%s' did not print JSON", *cmd ? *cmd : "maskkit");
		return mk_error_set(MK_EFORMAT, "%s", reason);
	}
	return MK_OK;
}

int rp_run_program(report *r, const char *const *argv, char **out, char **cmd, char *reason,
		   size_t size)
{
	return rp_exec(r, argv[0], argv, false, out, cmd, reason, size);
}

double rp_json_num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

rp_item *rp_promise(report *r, const char *file)
{
	rp_item *it;

	if (r->nitems == r->capitems) {
		int cap = r->capitems ? 2 * r->capitems : 32;
		rp_item **grown = realloc(r->items, (size_t)cap * sizeof *grown);
		if (!grown)
			return NULL;
		r->items = grown;
		r->capitems = cap;
	}
	if (!(it = calloc(1, sizeof *it)))
		return NULL;
	*it = (rp_item){.file = strdup(file), .section = strdup(r->cur ? r->cur->slot : ""),
			.ok = true};
	if (!it->file || !it->section) {
		free(it->file);
		free(it->section);
		free(it);
		return NULL;
	}
	r->items[r->nitems++] = it;
	return it;
}

void rp_fail(report *r, rp_item *it, const char *reason)
{
	if (!it)
		return;
	if (it->ok)
		fprintf(stderr, "maskkit report: %s could not be made: %s\n", it->file, reason);
	it->ok = false;
	snprintf(it->reason, sizeof it->reason, "%s", reason);
	(void)r;
}

/* file with its extension replaced by .svg */
static bool rp_svg_name(const char *file, char *buf, size_t size)
{
	const char *dot = strrchr(file, '.');

	return dot && (size_t)snprintf(buf, size, "%.*s.svg", (int)(dot - file), file) < size;
}

void rp_plot(report *r, rp_item *png, mk_plot *p)
{
	char path[8192], svg[512];
	rp_item *is;

	if (!png)
		return;
	p->output = path;
	if (rp_path(r, png->file, path, sizeof path) || mk_plot_run(p))
		rp_fail(r, png, mk_error());
	if (!rp_svg_name(png->file, svg, sizeof svg) || !(is = rp_promise(r, svg)))
		return;
	if (rp_path(r, is->file, path, sizeof path) || mk_plot_run(p))
		rp_fail(r, is, mk_error());
}

void rp_md_figure(report *r, rp_item *it, const char *alt)
{
	char svg[512];

	if (!it)
		return;
	if (it->ok) {
		rp_md(r, "![%s](%s)\n\n", alt, it->file);
		for (int k = 0; rp_svg_name(it->file, svg, sizeof svg) && k < r->nitems; k++)
			if (r->items[k]->ok && !strcmp(r->items[k]->file, svg))
				rp_md(r, "SVG: [%s](%s)\n\n", svg, svg);
		return;
	}
	rp_md(r, "> **Figure not made:** `%s` could not be made: ", it->file);
	rp_md_text(r, it->reason);
	rp_md(r, "\n\n");
}

int rp_path(const report *r, const char *file, char *buf, size_t size)
{
	if ((size_t)snprintf(buf, size, "%s/%s", r->out, file) >= size)
		return mk_error_set(MK_EINVAL, "output path too long: %s/%s", r->out, file);
	return MK_OK;
}

struct rp_text {
	const char *text;
	size_t len;
};

static int rp_write_text(void *file, void *arg)
{
	const struct rp_text *t = arg;

	if (t->len && fwrite(t->text, 1, t->len, file) != t->len)
		return mk_error_set(MK_ESYS, "write failed: %s", strerror(errno));
	return MK_OK;
}

int rp_write_file(report *r, const char *file, const char *text, size_t len)
{
	char path[8192];
	int ret = rp_path(r, file, path, sizeof path);

	if (ret)
		return ret;
	return mk_write_atomic(path, rp_write_text, &(struct rp_text){text, len});
}
