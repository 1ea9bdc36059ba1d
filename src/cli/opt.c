/*
 * The declarative option parser: getopt_long's tables are built from the
 * command's struct cli_opt table, so an option is written once.  Values
 * are converted and range-checked here; errors name the option as typed.
 */
#include "config.h"
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

#define OPT_VAL_BASE 1000 /* getopt's value for long option k: OPT_VAL_BASE + k */
#define OPT_HELP_COL 24
#define OPT_WIDTH 79

static int opt_count(const struct cli_opt *t)
{
	int n = 0;
	while (t && t[n].name)
		n++;
	return n;
}

static int opt_find(const struct cli_opt *t, const char *name)
{
	for (int k = 0; t && t[k].name; k++)
		if (!strcmp(t[k].name, name) && !(t[k].flags & CLI_DEPRECATED))
			return k;
	return -1;
}

static int opt_double(const struct cli_opt *o, const char *s, const char *as, double *out)
{
	char *end;
	double v;
	bool lo_ok, hi_ok;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end || !isfinite(v))
		return mk_error_set(MK_EINVAL, "%s expects a number, got '%s'", as, s);
	lo_ok = o->flags & CLI_LO_OPEN ? v > o->lo : v >= o->lo;
	hi_ok = o->flags & CLI_HI_OPEN ? v < o->hi : v <= o->hi;
	if (!lo_ok || !hi_ok)
		return mk_error_set(MK_EINVAL, "%s must be in %c%g, %g%c, got '%s'", as,
				    o->flags & CLI_LO_OPEN ? '(' : '[', o->lo, o->hi,
				    o->flags & CLI_HI_OPEN ? ')' : ']', s);
	*out = v;
	return MK_OK;
}

static int opt_enum(const struct cli_opt *o, const char *s, const char *as, int *out)
{
	char words[256] = "";
	size_t used = 0;
	const char *near;

	for (int k = 0; o->words[k]; k++)
		if (!strcmp(o->words[k], s)) {
			*out = o->values ? o->values[k] : k;
			return MK_OK;
		}
	for (int k = 0; o->words[k] && used < sizeof words; k++)
		used += (size_t)snprintf(words + used, sizeof words - used, "%s%s", k ? ", " : "",
					 o->words[k]);
	near = cli_closest(s, o->words);
	if (near)
		return mk_error_set(MK_EINVAL, "%s takes one of %s, not '%s' (did you mean '%s'?)",
				    as, words, s, near);
	return mk_error_set(MK_EINVAL, "%s takes one of %s, not '%s'", as, words, s);
}

static int opt_list_add(cli_list *l, const char *s)
{
	const char **v = realloc(l->v, (size_t)(l->n + 1) * sizeof *v);

	if (!v)
		return mk_error_set(MK_ENOMEM, "out of memory");
	v[l->n++] = s;
	l->v = v;
	return MK_OK;
}

/* Stores the value s of option o (typed as `as`) into opts. */
static int opt_set(const struct cli_opt *o, void *opts, const char *s, const char *as)
{
	char *dst = (char *)opts + o->off;
	int ret;

	switch (o->type) {
	case CLI_FLAG:
		*(bool *)dst = true;
		return MK_OK;
	case CLI_INT:
		return cli_i64(s, as, (int64_t)o->lo, (int64_t)o->hi, (int64_t *)dst);
	case CLI_UINT:
		return cli_u64(s, as, (uint64_t *)dst);
	case CLI_DOUBLE:
		return opt_double(o, s, as, (double *)dst);
	case CLI_SIZE:
		ret = mk_parse_size(s, (uint64_t *)dst);
		if (!ret && *(uint64_t *)dst == 0)
			ret = mk_error_set(MK_EINVAL, "%s must be positive", as);
		return ret;
	case CLI_ENUM:
		return opt_enum(o, s, as, (int *)dst);
	case CLI_STRING:
	case CLI_FILE:
		if (!*s)
			return mk_error_set(MK_EINVAL, "%s needs a value, got ''", as);
		*(const char **)dst = s;
		return MK_OK;
	case CLI_LIST:
		return opt_list_add((cli_list *)dst, s);
	case CLI_CALL:
		return o->call(opts, s);
	}
	return mk_error_set(MK_EINTERNAL, "option %s has no type", as);
}

static int opt_defaults(const struct cli_opt *t, void *opts)
{
	char as[64];
	int ret;

	for (int k = 0; t && t[k].name; k++) {
		if (!t[k].def || t[k].flags & CLI_DEPRECATED)
			continue;
		snprintf(as, sizeof as, "--%s", t[k].name);
		if ((ret = opt_set(&t[k], opts, t[k].def, as))) {
			mk_error_prefix("the default of %s: ", as);
			return MK_EINTERNAL;
		}
	}
	return MK_OK;
}

/* The option (long or short) that argv[optind - 1] named, for messages. */
static int opt_unknown(const struct mk_cmd *c, const char *arg, int opt)
{
	const char *names[CLI_MAX_OPTS + 2], *near = NULL;
	char word[64];
	int n = 0;

	if (strncmp(arg, "--", 2) != 0 && optopt && optopt != '?')
		return opt == ':' ? cli_usage_error(c, "option '-%c' needs a value", optopt)
				  : cli_usage_error(c, "unknown option '-%c'", optopt);
	if (opt == ':')
		return cli_usage_error(c, "option '%s' needs a value", arg);
	if (strchr(arg, '=') && optopt >= OPT_VAL_BASE && optopt - OPT_VAL_BASE < opt_count(c->opts))
		return cli_usage_error(c, "option '--%s' takes no value", c->opts[optopt - OPT_VAL_BASE].name);
	for (int k = 0; c->opts && c->opts[k].name && n < CLI_MAX_OPTS; k++)
		if (!(c->opts[k].flags & CLI_HIDDEN))
			names[n++] = c->opts[k].name;
	names[n++] = "help";
	names[n] = NULL;
	snprintf(word, sizeof word, "%s", arg + 2);
	word[strcspn(word, "=")] = '\0';
	near = cli_closest(word, names);
	if (near)
		return cli_usage_error(c, "unknown option '%s' (did you mean '--%s'?)", arg, near);
	return cli_usage_error(c, "unknown option '%s'", arg);
}

static void opt_tables(const struct cli_opt *t, int n, struct option *lo, char *so, size_t cap)
{
	size_t s = 0;

	so[s++] = ':';
	for (int k = 0; k < n; k++) {
		bool arg = t[k].type != CLI_FLAG && !(t[k].flags & CLI_NOARG);
		if (t[k].flags & CLI_DEPRECATED) {
			int to = opt_find(t, t[k].alias);
			arg = to >= 0 && t[to].type != CLI_FLAG && !(t[to].flags & CLI_NOARG);
		}
		lo[k] = (struct option){t[k].name, arg ? required_argument : no_argument, NULL,
					OPT_VAL_BASE + k};
		if (t[k].key && s + 3 < cap) {
			so[s++] = t[k].key;
			if (arg)
				so[s++] = ':';
		}
	}
	lo[n] = (struct option){"help", no_argument, NULL, 'h'};
	lo[n + 1] = (struct option){NULL, 0, NULL, 0};
	so[s++] = 'h';
	so[s] = '\0';
}

/* A value that is an option ("--csv --json", the old switch spelling) would
 * silently become a file named --json: refused, naming both. */
static int opt_value_check(const struct mk_cmd *c, const struct cli_opt *o, const char *as,
			   const char *val)
{
	bool optlike = val && val[0] == '-' && val[1] && (val[1] == '-' || isalpha((unsigned char)val[1]));

	if (!optlike || (o->type != CLI_FILE && o->type != CLI_STRING && o->type != CLI_LIST))
		return MK_OK;
	if (o->type != CLI_FILE)
		return cli_usage_error(c, "%s needs a value, not the option '%s'", as, val);
	return cli_usage_error(c, "%s takes a file name, not '%s' (%s./%s for a file so named)", as,
			       val, o->flags & CLI_STDOUT ? "'-' for standard output; " : "", val);
}

/* Option k of the table, given as `as`, with its value. */
static int opt_one(const struct mk_cmd *c, void *opts, int k, const char *val, cli_args *a)
{
	const struct cli_opt *t = c->opts;
	char as[64];
	int to = k, ret;

	if (t[k].flags & CLI_DEPRECATED) {
		to = opt_find(t, t[k].alias);
		if (to < 0)
			return mk_error_set(MK_EINTERNAL, "--%s is an alias of no option", t[k].name);
		fprintf(stderr, "maskkit: note: %s --%s is now --%s (the old name goes in the next "
			"release)\n", c->name, t[k].name, t[to].name);
	}
	snprintf(as, sizeof as, "--%s", t[to].name);
	a->given[to] = true;
	if ((ret = opt_value_check(c, &t[to], as, val)))
		return ret;
	if ((t[to].flags & (CLI_INPUT | CLI_OUTPUT)) && val) {
		if (a->nio == CLI_MAX_IO)
			return cli_usage_error(c, "more than %d files named", CLI_MAX_IO);
		a->io[a->nio].opt = &t[to];
		a->io[a->nio++].value = val;
	}
	return opt_set(&t[to], opts, val, as);
}

/* getopt_long takes any unambiguous prefix ("--n" for --norm): a later
 * option would change what such a command line means, so only full names
 * count.  tok is what was typed for long option k. */
static int opt_full_name(const struct mk_cmd *c, int k, const char *tok)
{
	const char *name = c->opts[k].name;
	size_t len = strcspn(tok + 2, "=");

	if (len == strlen(name) && !strncmp(tok + 2, name, len))
		return MK_OK;
	return cli_usage_error(c, "unknown option '%.*s' (did you mean '--%s'?)", (int)len + 2, tok,
			       name);
}

int cli_opt_parse(const struct mk_cmd *c, void *opts, int argc, char **argv, cli_args *a)
{
	int n = opt_count(c->opts), opt, ret;
	struct option lo[CLI_MAX_OPTS + 2];
	char so[2 * CLI_MAX_OPTS + 4];

	memset(a, 0, sizeof *a);
	a->opts = c->opts;
	if (n > CLI_MAX_OPTS)
		return mk_error_set(MK_EINTERNAL, "%s declares too many options", c->name);
	if ((ret = opt_defaults(c->opts, opts)))
		return ret;
	if (c->init && (ret = c->init(opts)))
		return ret;
	opt_tables(c->opts, n, lo, so, sizeof so);
	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, so, lo, NULL)) != -1) {
		int k = opt - OPT_VAL_BASE;
		if (opt == 'h') {
			cli_opt_help(c, stdout);
			return 1;
		}
		if (opt == '?' || opt == ':')
			return opt_unknown(c, argv[optind - 1], opt);
		if (k >= 0 && k < n) {
			const char *tok = argv[optind - 1];
			if (optarg && tok == optarg && optind >= 2)
				tok = argv[optind - 2];
			if (!strncmp(tok, "--", 2) && (ret = opt_full_name(c, k, tok)))
				return ret;
		} else { /* a short option: find its entry */
			for (k = 0; k < n && c->opts[k].key != opt; k++)
				;
		}
		if ((ret = opt_one(c, opts, k, optarg, a)))
			return ret;
	}
	a->argc = argc - optind;
	a->argv = argv + optind;
	return cli_io_check(a);
}

bool cli_given(const cli_args *a, const char *name)
{
	int k = opt_find(a->opts, name);
	return k >= 0 && a->given[k];
}

/* Edit distance with transpositions ("gne" is one step from "gen"), for
 * "did you mean": small words only. */
static size_t opt_distance(const char *x, const char *y)
{
	size_t nx = strlen(x), ny = strlen(y), d[33][33];

	if (nx > 32 || ny > 32)
		return 99;
	for (size_t i = 0; i <= nx; i++)
		for (size_t j = 0; j <= ny; j++) {
			size_t best;
			if (!i || !j) {
				d[i][j] = i + j;
				continue;
			}
			best = d[i - 1][j - 1] + (x[i - 1] != y[j - 1]);
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && x[i - 1] == y[j - 2] && x[i - 2] == y[j - 1] &&
			    d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[nx][ny];
}

const char *cli_closest(const char *s, const char *const *words)
{
	const char *best = NULL;
	size_t bd = 99, len = strlen(s);

	for (int k = 0; words[k]; k++) {
		size_t dist = opt_distance(s, words[k]);
		/* a prefix ("--thres") counts as close */
		if (len >= 3 && !strncmp(words[k], s, len))
			dist = 1;
		if (dist < bd) {
			bd = dist;
			best = words[k];
		}
	}
	/* one letter is too little to guess from */
	if (len < 2)
		return NULL;
	return bd <= (len > 3 ? 2u : 1u) ? best : NULL;
}

/* Prints text wrapped at OPT_WIDTH, continuation lines indented by col. */
static void opt_wrap(FILE *f, const char *text, int at, int col)
{
	const char *p = text;

	while (*p) {
		const char *end = p, *brk = NULL;
		while (*end && *end != '\n' && (brk == NULL || at + (end - p) < OPT_WIDTH)) {
			if (*end == ' ' && at + (end - p) <= OPT_WIDTH)
				brk = end;
			end++;
		}
		if (!*end || *end == '\n' || !brk)
			brk = end;
		fprintf(f, "%.*s\n", (int)(brk - p), p);
		p = *brk ? brk + 1 : brk;
		if (*p)
			fprintf(f, "%*s", col, "");
		at = col;
	}
}

/* The help with its default: "(K >= 2)" then "(default 128)" reads badly,
 * so a help ending in a parenthesis takes the default inside it. */
static void opt_help_text(const struct cli_opt *o, char *buf, size_t cap)
{
	const char *h = o->help ? o->help : "";
	size_t hl = strlen(h);

	if (!o->def || o->type == CLI_FLAG)
		snprintf(buf, cap, "%s", h);
	else if (hl && h[hl - 1] == ')')
		snprintf(buf, cap, "%.*s; default %s)", (int)hl - 1, h, o->def);
	else
		snprintf(buf, cap, "%s (default %s)", h, o->def);
}

static void opt_help_line(FILE *f, const struct cli_opt *o)
{
	char head[64], help[512];
	int len;

	if (o->key)
		len = snprintf(head, sizeof head, "  -%c, --%s", o->key, o->name);
	else
		len = snprintf(head, sizeof head, "      --%s", o->name);
	if (o->meta && len < (int)sizeof head)
		len += snprintf(head + len, sizeof head - (size_t)len, " %s", o->meta);
	opt_help_text(o, help, sizeof help);
	if (len + 2 > OPT_HELP_COL) {
		fprintf(f, "%s\n%*s", head, OPT_HELP_COL, "");
	} else {
		fprintf(f, "%-*s", OPT_HELP_COL, head);
	}
	opt_wrap(f, help, OPT_HELP_COL, OPT_HELP_COL);
}

void cli_opt_help(const struct mk_cmd *c, FILE *f)
{
	const char *s = c->synopsis ? c->synopsis : "";
	bool first = true;

	/* one usage line per synopsis line */
	/* a line starting with a space continues the form above it */
	while (first || *s) {
		size_t len = strcspn(s, "\n");
		if (*s == ' ')
			fprintf(f, "%*s%.*s\n", (int)strlen(c->name) + 16, "", (int)len - 1, s + 1);
		else
			fprintf(f, "%s maskkit %s %.*s\n", first ? "usage:" : "      ", c->name,
				(int)len, s);
		s += len + (s[len] == '\n');
		first = false;
	}
	if (c->description)
		fprintf(f, "\n%s", c->description);
	fprintf(f, "\noptions:\n");
	for (int k = 0; c->opts && c->opts[k].name; k++)
		if (!(c->opts[k].flags & CLI_HIDDEN))
			opt_help_line(f, &c->opts[k]);
	opt_help_line(f, &(struct cli_opt){.name = "help", .key = 'h', .help = "this help"});
	if (c->notes)
		fprintf(f, "\n%s", c->notes);
	if (c->examples)
		fprintf(f, "\nexamples:\n%s", c->examples);
	fprintf(f, "\nexit status: 0 success, 2 bad input, 1 internal or system error.\n");
}
