/*
 * gnuplot figures: a template (templates/NAME.gp, compiled in) is run by the
 * gnuplot program on a data table we write.
 *
 * Everything gnuplot reads lives in a private mkdtemp directory under TMPDIR
 * that is removed afterwards: the data table, the assignments (vars.gp), the
 * template (unless MASKKIT_TEMPLATES names a directory holding it) and the
 * log that takes gnuplot's stdout and stderr.  gnuplot runs as
 * `gnuplot -d vars.gp NAME.gp`: -d skips the user's ~/.gnuplot, which could
 * change any setting, and keeping the template its own file makes gnuplot's
 * error messages name it with the template's own line numbers.  No shell is
 * involved, so nothing in a path or title is interpreted by one.
 *
 * gnuplot writes the PNG to the temporary file that mk_io_atomic makes next
 * to the output; it is renamed over the output only if gnuplot succeeded and
 * the file starts with PNG's signature.
 */
#include "config.h"
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "internal.h"
#include "plot_internal.h"
#include "templates.h"

extern char **environ;

#define MK_GP_NAME_MAX 64
#define MK_GP_LOG_MAX 16384 /* of gnuplot's output, enough for its first error */

struct mk_gp {
	const mk_plot *p;
	const char *program;  /* MASKKIT_GNUPLOT or "gnuplot" */
	bool from_env;
	bool builtin;         /* template copied from mk_templates[] */
	const char *text;     /* a built-in template's text */
	char dir[PATH_MAX];   /* private directory; "" until made */
	char data[PATH_MAX];
	char vars[PATH_MAX];
	char script[PATH_MAX];
	char log[PATH_MAX];
	int tokens[5];        /* the files and the folder, for mk_cleanup_run */
};

/* ---- checks --------------------------------------------------------------- */

static int mk_gp_is_svg(const mk_plot *p)
{
	const char *dot = strrchr(p->output, '.');

	return dot && strcmp(dot, ".svg") == 0;
}

static bool mk_gp_has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

/* Column names travel as one space-separated string (gnuplot's word()). */
static int mk_gp_check_names(const mk_plot *p)
{
	if (!p->col_names)
		return mk_error_set(MK_EINVAL, "no column names given for the plot");
	for (int c = 0; c < p->ncols; c++) {
		const char *s = p->col_names[c];
		if (!s || !*s)
			return mk_error_set(MK_EINVAL, "column %d of the plot has no name", c);
		for (; *s; s++)
			if (isspace((unsigned char)*s) || (unsigned char)*s < 0x20 || *s == 0x7f)
				return mk_error_set(MK_EINVAL, "column name '%s' contains a space or "
						    "control character", p->col_names[c]);
	}
	return MK_OK;
}

static int mk_gp_check(const mk_plot *p)
{
	if (!p || !p->template_name || !p->output)
		return mk_error_set(MK_EINVAL, "a plot needs a template name and an output path");
	if (!*p->output || mk_gp_has_control(p->output))
		return mk_error_set(MK_EINVAL, "bad plot output path '%s'", p->output);
	if (p->rows < 1 || p->ncols < 1 || !p->data)
		return mk_error_set(MK_EINVAL, "no data to plot (%" PRId64 " rows, %d columns)",
				    p->rows, p->ncols);
	if (p->panels < 1 || p->rows % p->panels != 0)
		return mk_error_set(MK_EINVAL, "%" PRId64 " rows do not split into %d panels",
				    p->rows, p->panels);
	return mk_gp_check_names(p);
}

/* ---- finding the template ------------------------------------------------- */

static int mk_gp_unknown(const char *name)
{
	char known[512] = "";
	size_t len = 0;

	for (const struct mk_template *t = mk_templates; t->name && len < sizeof known; t++)
		if (!strchr(t->name, '.')) /* report.md and report.html are not gnuplot's */
			len += (size_t)snprintf(known + len, sizeof known - len, "%s%s",
					len ? ", " : "", t->name);
	return mk_error_set(MK_EINVAL, "unknown template '%s' (known: %s)", name, known);
}

static bool mk_gp_name_ok(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > MK_GP_NAME_MAX)
		return false;
	for (const char *c = name; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '_' && *c != '-')
			return false;
	return true;
}

/* Sets g->script to DIR/NAME.gp under MASKKIT_TEMPLATES, or picks the
 * compiled-in text (copied into the private directory later). */
static int mk_gp_template(struct mk_gp *g)
{
	const char *name = g->p->template_name, *dir = getenv("MASKKIT_TEMPLATES");

	if (!mk_gp_name_ok(name))
		return mk_gp_unknown(name);
	if (dir && *dir) {
		if ((size_t)snprintf(g->script, sizeof g->script, "%s/%s.gp", dir, name) >=
		    sizeof g->script)
			return mk_error_set(MK_EINVAL, "MASKKIT_TEMPLATES '%s' is too long", dir);
		if (mk_gp_has_control(g->script))
			return mk_error_set(MK_EINVAL, "bad template path '%s'", g->script);
		if (access(g->script, R_OK) != 0)
			return mk_error_set(errno == ENOENT ? MK_EINVAL : MK_EIO,
					    "unknown template '%s': '%s' (MASKKIT_TEMPLATES): %s",
					    name, g->script, strerror(errno));
		return MK_OK;
	}
	for (const struct mk_template *t = mk_templates; t->name; t++)
		if (strcmp(t->name, name) == 0) {
			g->builtin = true;
			g->text = t->text;
			return MK_OK;
		}
	return mk_gp_unknown(name);
}

/* ---- the private directory ------------------------------------------------ */

static int mk_gp_path(char *buf, const char *dir, const char *file)
{
	if ((size_t)snprintf(buf, PATH_MAX, "%s/%s", dir, file) >= PATH_MAX)
		return mk_error_set(MK_EIO, "temporary directory '%s' has too long a name", dir);
	return MK_OK;
}

static int mk_gp_mkdir(struct mk_gp *g)
{
	const char *tmp = getenv("TMPDIR");
	char dir[PATH_MAX];
	int ret;

	if (!tmp || !*tmp)
		tmp = "/tmp";
	if ((size_t)snprintf(dir, sizeof dir, "%s/maskkit-plot.XXXXXX", tmp) >= sizeof dir)
		return mk_error_set(MK_EIO, "TMPDIR '%s' is too long", tmp);
	if (mk_gp_has_control(dir))
		return mk_error_set(MK_EIO, "TMPDIR '%s' contains a control character", tmp);
	if (!mkdtemp(dir))
		return mk_error_errno(errno, "cannot create a temporary directory in '%s' (TMPDIR)",
				      tmp);
	memcpy(g->dir, dir, sizeof dir);
	ret = mk_gp_path(g->data, dir, "data.txt");
	if (!ret)
		ret = mk_gp_path(g->vars, dir, "vars.gp");
	if (!ret)
		ret = mk_gp_path(g->log, dir, "gnuplot.log");
	if (!ret && g->builtin) {
		char file[MK_GP_NAME_MAX + 4];
		snprintf(file, sizeof file, "%s.gp", g->p->template_name);
		ret = mk_gp_path(g->script, dir, file);
	}
	/* a signal removes them all; the folder last */
	g->tokens[0] = mk_cleanup_push_dir(dir);
	g->tokens[1] = ret ? -1 : mk_cleanup_push_file(g->data);
	g->tokens[2] = ret ? -1 : mk_cleanup_push_file(g->vars);
	g->tokens[3] = ret ? -1 : mk_cleanup_push_file(g->log);
	g->tokens[4] = ret || !g->builtin ? -1 : mk_cleanup_push_file(g->script);
	return ret;
}

static void mk_gp_rmdir(struct mk_gp *g)
{
	if (!g->dir[0])
		return;
	(void)unlink(g->data);
	(void)unlink(g->vars);
	(void)unlink(g->log);
	if (g->builtin)
		(void)unlink(g->script);
	(void)rmdir(g->dir);
	for (size_t k = 0; k < sizeof g->tokens / sizeof *g->tokens; k++)
		mk_cleanup_pop(g->tokens[k]);
}

/* ---- files for gnuplot ------------------------------------------------------ */

static int mk_gp_close(FILE *f, const char *path)
{
	int ret = MK_OK;

	if (fflush(f) != 0 || ferror(f))
		ret = mk_error_errno(errno, "'%s': write failed", path);
	if (fclose(f) != 0 && ret == MK_OK)
		ret = mk_error_errno(errno, "'%s': write failed", path);
	return ret;
}

static FILE *mk_gp_create(const char *path, int *ret)
{
	FILE *f = fopen(path, "w");

	*ret = f ? MK_OK : mk_error_errno(errno, "'%s'", path);
	return f;
}

/* Whitespace-separated, panels as blocks separated by two blank lines
 * (gnuplot's `index`).  %.10g is finer than any plot resolves; infinities
 * have no place on an axis, so they are missing like NaN. */
static int mk_gp_write_data(const struct mk_gp *g)
{
	const mk_plot *p = g->p;
	int64_t per_panel = p->rows / p->panels;
	int ret;
	FILE *f = mk_gp_create(g->data, &ret);

	if (!f)
		return ret;
	fputc('#', f);
	for (int c = 0; c < p->ncols; c++)
		fprintf(f, " %s", p->col_names[c]);
	fputc('\n', f);
	for (int64_t r = 0; r < p->rows; r++) {
		const double *row = p->data + r * p->ncols;
		if (r > 0 && r % per_panel == 0)
			fputs("\n\n", f);
		for (int c = 0; c < p->ncols; c++) {
			if (c)
				fputc(' ', f);
			if (isfinite(row[c]))
				fprintf(f, "%.10g", row[c]);
			else
				fputs("NaN", f);
		}
		fputc('\n', f);
	}
	return mk_gp_close(f, g->data);
}

static int mk_gp_write_text(const char *path, const char *text)
{
	int ret;
	FILE *f = mk_gp_create(path, &ret);

	if (!f)
		return ret;
	fputs(text, f);
	return mk_gp_close(f, path);
}

/* The body of a gnuplot single-quoted string: a quote is doubled and
 * nothing else is special (no backquote or macro substitution), but a
 * newline would end the command, so control characters become spaces. */
void mk_gp_quote(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', f);
		fputc((unsigned char)*s < 0x20 || *s == 0x7f ? ' ' : *s, f);
	}
}

static void mk_gp_assign(FILE *f, const char *name, const char *value)
{
	fprintf(f, "%s='", name);
	mk_gp_quote(f, value);
	fputs("'\n", f);
}

static int mk_gp_write_vars(const struct mk_gp *g, const char *png)
{
	const mk_plot *p = g->p;
	int ret;
	FILE *f = mk_gp_create(g->vars, &ret);

	if (!f)
		return ret;
	fprintf(f, "# maskkit: the settings of template '%s'\n", p->template_name);
	mk_gp_assign(f, "datafile", g->data);
	mk_gp_assign(f, "output", png);
	mk_gp_assign(f, "title", p->title ? p->title : "");
	/* templates that can draw SVG test svg; the others always write PNG */
	fprintf(f, "svg=%d\npanels=%d\nrows_per_panel=%" PRId64 "\ncolumns='", mk_gp_is_svg(p),
		p->panels, p->rows / p->panels);
	for (int c = 0; c < p->ncols; c++) {
		if (c)
			fputc(' ', f);
		mk_gp_quote(f, p->col_names[c]);
	}
	fputs("'\n", f);
	if (p->vars)
		fprintf(f, "%s\n", p->vars);
	return mk_gp_close(f, g->vars);
}

/* ---- running gnuplot ---------------------------------------------------------- */

static int mk_gp_not_found(const struct mk_gp *g)
{
	if (g->from_env)
		return mk_error_set(MK_EIO, "gnuplot not found: no program '%s' (MASKKIT_GNUPLOT)",
				    g->program);
	return mk_error_set(MK_EIO, "gnuplot not found (install gnuplot-nox, or set MASKKIT_GNUPLOT)");
}

/* Runs gnuplot with stdin from /dev/null (a `pause` in a template returns
 * at once) and stdout and stderr into the log; *status as from waitpid. */
static int mk_gp_spawn(const struct mk_gp *g, int *status)
{
	char opt_d[] = "-d";
	char *argv[] = {(char *)g->program, opt_d, (char *)g->vars, (char *)g->script, NULL};
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int err, token;

	if (posix_spawn_file_actions_init(&fa) != 0)
		return mk_error_set(MK_ENOMEM, "out of memory");
	err = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (!err)
		err = posix_spawn_file_actions_addopen(&fa, 1, g->log, O_WRONLY | O_CREAT | O_TRUNC,
						       0600);
	if (!err)
		err = posix_spawn_file_actions_adddup2(&fa, 1, 2);
	if (!err)
		err = posix_spawnp(&pid, g->program, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (err == ENOENT)
		return mk_gp_not_found(g);
	if (err)
		return mk_error_errno(err, "cannot run gnuplot '%s'", g->program);
	token = mk_cleanup_push_child(pid);
	if (mk_cleanup_wait_child(token, pid, status) != 0)
		return mk_error_errno(errno, "waiting for gnuplot");
	return MK_OK;
}

/* gnuplot names the script by the path it was given; say which one that
 * is instead of showing our temporary directory. */
static void mk_gp_where(const struct mk_gp *g, const char *file, size_t len, char *buf,
			size_t size)
{
	if (g->builtin && len == strlen(g->script) && memcmp(file, g->script, len) == 0)
		snprintf(buf, size, "template '%s'", g->p->template_name);
	else if (len == strlen(g->vars) && memcmp(file, g->vars, len) == 0)
		snprintf(buf, size, "the settings before template '%s'", g->p->template_name);
	else
		snprintf(buf, size, "'%.*s'", (int)len, file);
}

static bool mk_gp_meaningful(const char *line)
{
	while (isspace((unsigned char)*line))
		line++;
	if (strncmp(line, "gnuplot>", 8) == 0)
		return false; /* gnuplot's echo of the failing command */
	for (; *line; line++)
		if (isalnum((unsigned char)*line))
			return true;
	return false; /* blank, or the caret under the echo */
}

/* `"FILE" line N: message` with FILE named for the user; at is the quote
 * that ends FILE. */
static void mk_gp_located(const struct mk_gp *g, const char *line, const char *at, char *buf,
			  size_t size)
{
	char where[PATH_MAX + 64];

	mk_gp_where(g, line + 1, (size_t)(at - line - 1), where, sizeof where);
	/* cut short, it still names the line; the message is capped anyway */
	if (snprintf(buf, size, "%s%s", where, at + 1) < 0)
		buf[0] = '\0';
}

static bool mk_gp_is_warning(const char *msg)
{
	while (isspace((unsigned char)*msg))
		msg++;
	return strncasecmp(msg, "warning", 7) == 0;
}

/* What went wrong, from gnuplot's output (modified): its first
 * `"FILE" line N: message` that is not a warning, else the first other
 * meaningful line that is not a warning, else the first warning. */
static bool mk_gp_first_error(const struct mk_gp *g, char *log, char *buf, size_t size)
{
	const char *other = NULL, *warning = NULL, *wline = NULL, *wat = NULL;

	for (char *line = log, *next; line; line = next) {
		char *at = line[0] == '"' ? strstr(line + 1, "\" line ") : NULL;
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (at && isdigit((unsigned char)at[7])) {
			const char *colon = strchr(at + 7, ':');
			if (!colon || !mk_gp_is_warning(colon + 1)) {
				mk_gp_located(g, line, at, buf, size);
				return true;
			}
			wline = wline ? wline : line;
			wat = wat ? wat : at;
		} else if (mk_gp_meaningful(line)) {
			while (isspace((unsigned char)*line))
				line++;
			if (mk_gp_is_warning(line))
				warning = warning ? warning : line;
			else
				other = other ? other : line;
		}
	}
	if (other || (!wline && warning))
		return snprintf(buf, size, "%s", other ? other : warning) >= 0;
	if (wline)
		mk_gp_located(g, wline, wat, buf, size);
	return wline != NULL;
}

static int mk_gp_failed(const struct mk_gp *g, int status)
{
	char log[MK_GP_LOG_MAX], line[400];
	FILE *f = fopen(g->log, "r");
	size_t n = f ? fread(log, 1, sizeof log - 1, f) : 0;

	if (f)
		fclose(f);
	log[n] = '\0';
	if (mk_gp_first_error(g, log, line, sizeof line))
		return mk_error_set(MK_EIO, "gnuplot failed: %s", line);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && n == 0)
		return mk_gp_not_found(g); /* a spawn that reports exec failures late */
	if (WIFSIGNALED(status))
		return mk_error_set(MK_ESYS, "gnuplot failed: killed by signal %d (%s)", WTERMSIG(status),
				    strsignal(WTERMSIG(status)));
	return mk_error_set(MK_EIO, "gnuplot failed: exit status %d", WEXITSTATUS(status));
}

/* The writer for mk_io_atomic: gnuplot draws into png. */
static int mk_gp_render(const char *png, void *arg)
{
	struct mk_gp *g = arg;
	int ret, status;

	if (mk_gp_has_control(png))
		return mk_error_set(MK_EINVAL, "bad plot output path '%s'", png);
	ret = mk_gp_write_vars(g, png);
	if (ret)
		return ret;
	ret = mk_gp_spawn(g, &status);
	if (ret)
		return ret;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return mk_gp_write_failed(png) ? mk_gp_cut_short(png) : mk_gp_failed(g, status);
	return mk_gp_check_picture(png, mk_gp_is_svg(g->p), g->p->template_name);
}

int mk_plot_run(const mk_plot *p)
{
	struct mk_gp g = {.p = p, .program = getenv("MASKKIT_GNUPLOT"), .tokens = {-1, -1, -1, -1, -1}};
	int ret;

	ret = mk_gp_check(p);
	if (ret)
		return ret;
	g.from_env = g.program && *g.program;
	if (!g.from_env)
		g.program = "gnuplot";
	ret = mk_gp_template(&g);
	if (ret)
		return ret;
	ret = mk_gp_mkdir(&g);
	if (ret)
		goto out;
	ret = mk_gp_write_data(&g);
	if (!ret && g.builtin)
		ret = mk_gp_write_text(g.script, g.text);
	if (!ret)
		ret = mk_io_atomic(p->output, mk_gp_render, &g);
out:
	mk_gp_rmdir(&g);
	return ret;
}
