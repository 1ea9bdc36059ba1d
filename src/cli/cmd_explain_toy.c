/*
 * maskkit explain --toy: the toy models of Ding et al., "Attention that
 * does not Explain Away".  `collapse` runs attention steps on two 2-D
 * clouds (UNAS merges them, DNAS keeps both: the paper's Fig. 6);
 * `distance` draws the closed-form centre distance after one step against
 * the cluster-size ratio (Fig. 7) and checks it against simulated steps.
 * Each prints a table (or JSON) and can write CSV, JSON and a gnuplot PNG.
 * The options are declared in cmd_explain.c's table; the handlers of those
 * that take lists are here.
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "cmd_explain.h"
#include "plot.h"

#define TOY_PNG_STEPS_MAX 10 /* columns of the collapse figure, less one */
#define TOY_LIST_TEXT 32     /* one number of a list, as text */

/* What a toy run gets: the library's options and the outputs. */
typedef struct toy_run {
	mk_toy_collapse_opts c;
	mk_toy_distance_opts d;
	const char *csv, *png, *prefix;
	const char *json_file; /* -o PREFIX only */
	char *owned;           /* -o PREFIX's names */
	bool json, csv_out;    /* csv_out: --csv -, the CSV on stdout */
} toy_run;

/* ---- options ----------------------------------------------------------------- */

static int toy_number(const char *s, const char *opt, double *out)
{
	char *end;
	errno = 0;
	*out = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(*out))
		return mk_error_set(MK_EINVAL, "%s expects a number, got '%s'", opt, s);
	return MK_OK;
}

/* "X1,X2,...": up to MK_TOY_DISTANCE_LIST_MAX finite numbers. */
static int toy_list(const char *s, const char *opt, double *out, int *count)
{
	const char *p = s;
	char *end;
	int n = 0;

	while (n < MK_TOY_DISTANCE_LIST_MAX) {
		errno = 0;
		out[n] = strtod(p, &end);
		if (end == p || errno || !isfinite(out[n]) || (*end && *end != ','))
			return mk_error_set(MK_EINVAL, "%s expects a list of numbers like 1,2,5, "
					    "got '%s'", opt, s);
		n++;
		if (!*end) {
			*count = n;
			return MK_OK;
		}
		p = end + 1;
	}
	return mk_error_set(MK_EINVAL, "%s takes at most %d values, got '%s'", opt,
			    MK_TOY_DISTANCE_LIST_MAX, s);
}

int explain_opt_a(void *opts, const char *s)
{
	ex_toy_opts *t = &((ex_opts *)opts)->toy;
	int ret = toy_list(s, "--a", t->a, &t->na);

	for (int k = 0; ret == MK_OK && k < t->na; k++)
		if (!(t->a[k] > 0))
			ret = mk_error_set(MK_EINVAL, "--a takes positive half distances, got '%s'", s);
	return ret;
}

int explain_opt_sizes(void *opts, const char *s)
{
	ex_toy_opts *t = &((ex_opts *)opts)->toy;
	double v[MK_TOY_DISTANCE_LIST_MAX];
	int ret = toy_list(s, "--sizes", v, &t->nsizes);

	for (int k = 0; ret == MK_OK && k < t->nsizes; k++) {
		if (!(v[k] >= 1 && v[k] <= MK_TOY_DISTANCE_SIZE_MAX) || v[k] != floor(v[k]))
			return mk_error_set(MK_EINVAL, "--sizes takes whole numbers from 1 to %d "
					    "(the check is O(n^2)), got '%s'",
					    MK_TOY_DISTANCE_SIZE_MAX, s);
		t->sizes[k] = (int64_t)v[k];
	}
	return ret;
}

/* "MIN..MAX[:POINTS]"; POINTS kept from before (the default's) when absent */
int explain_opt_r(void *opts, const char *s)
{
	ex_toy_opts *t = &((ex_opts *)opts)->toy;
	const char *dots = strstr(s, ".."), *colon;
	char lo[TOY_LIST_TEXT], hi[TOY_LIST_TEXT];
	size_t len;
	int64_t points = t->nr;

	if (!dots || dots == s || (size_t)(dots - s) >= sizeof lo)
		goto bad;
	memcpy(lo, s, (size_t)(dots - s));
	lo[dots - s] = '\0';
	colon = strchr(dots + 2, ':');
	len = colon ? (size_t)(colon - dots - 2) : strlen(dots + 2);
	if (len == 0 || len >= sizeof hi)
		goto bad;
	memcpy(hi, dots + 2, len);
	hi[len] = '\0';
	if (toy_number(lo, "--r", &t->r_min) || toy_number(hi, "--r", &t->r_max) ||
	    (colon && cli_i64(colon + 1, "--r POINTS", 2, MK_TOY_DISTANCE_CURVE_MAX, &points)))
		goto bad;
	t->nr = points;
	if (!(t->r_min > 0 && t->r_min < t->r_max))
		return mk_error_set(MK_EINVAL, "--r needs 0 < MIN < MAX, got '%s'", s);
	return MK_OK;
bad:
	return mk_error_set(MK_EINVAL, "--r expects MIN..MAX[:POINTS] with 2 to %d points, "
			    "like 0.01..100:201, got '%s'", MK_TOY_DISTANCE_CURVE_MAX, s);
}

int explain_opt_sd(void *opts, const char *s)
{
	double *sd = &((ex_opts *)opts)->toy.sd;
	int ret = toy_number(s, "--sd", sd);

	if (ret == MK_OK && !(*sd >= 0 && *sd <= MK_TOY_COLLAPSE_SD_MAX))
		ret = mk_error_set(MK_EINVAL, "--sd must be between 0 and %d, got '%s'",
				   MK_TOY_COLLAPSE_SD_MAX, s);
	return ret;
}

int explain_opt_toy(void *opts, const char *s)
{
	static const char *const toys[] = {"collapse", "distance", NULL};
	ex_toy_opts *t = &((ex_opts *)opts)->toy;
	const char *near = cli_closest(s, toys);

	if (t->name && strcmp(t->name, s))
		return mk_error_set(MK_EINVAL, "--toy given twice ('%s' and '%s')", t->name, s);
	if (near && !strcmp(near, s)) {
		t->name = near;
		return MK_OK;
	}
	if (near)
		return mk_error_set(MK_EINVAL, "unknown toy '%s' (known: collapse, distance; did "
				    "you mean '%s'?)", s, near);
	return mk_error_set(MK_EINVAL, "unknown toy '%s' (known: collapse, distance)", s);
}

/* PREFIX.csv, PREFIX.png and PREFIX.json, in one block that o owns. */
static int toy_prefix(toy_run *o)
{
	size_t len = strlen(o->prefix) + 6;

	if (o->csv || o->png)
		return cli_usage_error(&mk_cmd_explain, "give -o PREFIX or --csv/--png, not both");
	if (!(o->owned = malloc(3 * len)))
		return mk_error_set(MK_ENOMEM, "out of memory");
	snprintf(o->owned, len, "%s.csv", o->prefix);
	snprintf(o->owned + len, len, "%s.png", o->prefix);
	snprintf(o->owned + 2 * len, len, "%s.json", o->prefix);
	o->csv = o->owned;
	o->png = o->owned + len;
	o->json_file = o->owned + 2 * len;
	return MK_OK;
}

/* The library's options from the command line's, and what holds once
 * every option is read (those of the other mode or toy are refused by
 * cmd_explain.c). */
static int toy_setup(const ex_opts *x, const cli_args *a, bool seed_given, toy_run *o)
{
	const ex_toy_opts *t = &x->toy;
	bool collapse = !strcmp(t->name, "collapse");
	const char *png = x->png ? x->png : x->m.out;

	mk_toy_collapse_opts_init(&o->c);
	o->c.steps = (int)t->steps;
	o->c.sd = t->sd;
	o->c.score = (mk_toy_score)t->score;
	if (seed_given)
		o->c.seed = x->m.bind.seed;
	o->d = (mk_toy_distance_opts){.a = t->a, .na = t->na, .r_min = t->r_min, .r_max = t->r_max,
				      .nr = t->nr, .sizes = t->sizes, .nsizes = t->nsizes,
				      .score = o->c.score};
	o->csv = x->csv;
	o->csv_out = x->csv && !strcmp(x->csv, "-");
	o->png = x->png;
	o->prefix = x->m.out;
	o->json = x->json;
	if (a->argc > 0)
		return cli_usage_error(&mk_cmd_explain, "--toy takes no INPUT, got '%s'", a->argv[0]);
	if (collapse && png && o->c.steps > TOY_PNG_STEPS_MAX)
		return cli_usage_error(&mk_cmd_explain, "the figure shows at most %d steps, got "
				       "--steps %d", TOY_PNG_STEPS_MAX, o->c.steps);
	if (o->csv && o->png && !strcmp(o->csv, o->png))
		return cli_usage_error(&mk_cmd_explain, "--csv and --png name the same file '%s'",
				       o->csv);
	return o->prefix ? toy_prefix(o) : MK_OK;
}

/* ---- writing --------------------------------------------------------------- */

static const char *const toy_scheme[2] = {"unas", "dnas"};

/* The result on stdout (its text and table, or JSON) and in -o's JSON. */
static int toy_outputs(const toy_run *o, const mk_record *rec, const void *r,
		       const mk_record *table, const void *rows, int64_t count)
{
	int ret = MK_OK;

	if (o->json)
		ret = mk_emit(stdout, MK_EMIT_JSON, rec, r, 1, 0);
	else if (!o->csv_out && (ret = mk_emit(stdout, MK_EMIT_TEXT, rec, r, 1, 0)) == MK_OK) {
		putchar('\n');
		ret = mk_emit(stdout, MK_EMIT_TABLE, table, rows, (size_t)count, 0);
	}
	if (ret == MK_OK && o->json_file)
		ret = mk_emit_path(o->json_file, MK_EMIT_JSON, rec, r, 1, 0);
	return ret;
}

/* ---- collapse -------------------------------------------------------------- */

/* 2 x (steps + 1) panels, UNAS's then DNAS's, of x y mode; the cluster
 * counts go to the template as strings for the panel titles. */
static int toy_collapse_png(const char *path, const mk_toy_collapse_result *r)
{
	static const char *const names[] = {"x", "y", "mode"};
	const int64_t n = MK_TOY_COLLAPSE_POINTS;
	int steps = r->o.steps, panels = 2 * (steps + 1), ret;
	double *data = malloc((size_t)(panels * n) * 3 * sizeof *data);
	char vars[512], title[256];
	size_t used;

	if (!data)
		return mk_error_set(MK_ENOMEM, "out of memory for the figure");
	for (int64_t k = 0; k < panels * n; k++) {
		const double *p = r->points[k / (n * (steps + 1))] + (k % (n * (steps + 1))) * 2;
		data[3 * k] = p[0];
		data[3 * k + 1] = p[1];
		data[3 * k + 2] = (double)(k % n >= MK_TOY_COLLAPSE_BIG);
	}
	used = (size_t)snprintf(vars, sizeof vars, "steps = %d", steps);
	for (int d = 0; d < 2; d++) {
		used += (size_t)snprintf(vars + used, sizeof vars - used, "\n%s_clusters = '",
					 toy_scheme[d]);
		for (int t = 0; t <= steps; t++)
			used += (size_t)snprintf(vars + used, sizeof vars - used, "%s%" PRId64,
						 t ? " " : "", r->clusters[d][t]);
		used += (size_t)snprintf(vars + used, sizeof vars - used, "'");
	}
	snprintf(title, sizeof title, "mode collapse: Q = K = I, scores %s, sd %g, seed %" PRIu64,
		 r->score, r->o.sd, r->o.seed);
	ret = mk_plot_run(&(mk_plot){.template_name = "explain_collapse", .output = path,
				     .title = title, .data = data, .rows = panels * n, .ncols = 3,
				     .col_names = names, .panels = panels, .vars = vars});
	free(data);
	return ret;
}

static int toy_collapse_run(const toy_run *o)
{
	mk_toy_collapse_result r;
	int ret = mk_toy_collapse_run(&o->c, &r);

	if (ret == MK_OK)
		ret = toy_outputs(o, &mk_toy_collapse_record, &r, &mk_toy_collapse_step_record,
				  r.table, r.nsteps);
	if (ret == MK_OK && o->csv)
		ret = mk_toy_collapse_write_csv(o->csv, &o->c, (const double *const *)r.points,
						(const int64_t *const *)r.clusters);
	if (ret == MK_OK && o->png)
		ret = toy_collapse_png(o->png, &r);
	mk_toy_collapse_release(&r);
	return ret;
}

/* ---- distance -------------------------------------------------------------- */

/* One panel per a, of r unas dnas; the a values go to the template as a
 * string for the key. */
static int toy_distance_png(const char *path, const mk_toy_distance_opts *o,
			    const mk_toy_distance_result *r)
{
	static const char *const names[] = {"r", "unas", "dnas"};
	int64_t rows = o->na * r->nr;
	double *data = malloc((size_t)rows * 3 * sizeof *data);
	char vars[MK_TOY_DISTANCE_LIST_MAX * 28 + 16];
	size_t used = (size_t)snprintf(vars, sizeof vars, "a_values = '");
	int ret;

	if (!data)
		return mk_error_set(MK_ENOMEM, "out of memory for the figure");
	for (int64_t k = 0; k < rows; k++) {
		data[3 * k] = r->r[k % r->nr];
		data[3 * k + 1] = r->curve[0][k];
		data[3 * k + 2] = r->curve[1][k];
	}
	for (int i = 0; i < o->na; i++)
		used += (size_t)snprintf(vars + used, sizeof vars - used, "%s%.6g", i ? " " : "",
					 o->a[i]);
	snprintf(vars + used, sizeof vars - used, "'");
	ret = mk_plot_run(&(mk_plot){.template_name = "explain_distance", .output = path,
				     .title = "centre distance after one step: UNAS (solid) vs "
					      "DNAS (dashed)", .data = data, .rows = rows,
				     .ncols = 3, .col_names = names, .panels = o->na,
				     .vars = vars});
	free(data);
	return ret;
}

static int toy_distance_run(const toy_run *o)
{
	mk_toy_distance_result r;
	int ret = mk_toy_distance(&o->d, &r);

	if (ret == MK_OK)
		ret = toy_outputs(o, &mk_toy_distance_record, &r, &mk_toy_distance_row_record,
				  r.shown, r.nshown);
	if (ret == MK_OK && o->csv)
		ret = mk_toy_distance_write_csv(o->csv, &o->d, &r);
	if (ret == MK_OK && o->png)
		ret = toy_distance_png(o->png, &o->d, &r);
	mk_toy_distance_release(&r);
	return ret;
}

/* ---- the command ----------------------------------------------------------- */

int explain_toy_exec(const ex_opts *x, const cli_args *a, bool seed_given)
{
	toy_run o = {0};
	int ret = toy_setup(x, a, seed_given, &o);

	for (int k = 0; k < 3 && ret == MK_OK; k++) {
		const char *out = k == 0 ? (o.csv_out ? NULL : o.csv) : k == 1 ? o.png : o.json_file;
		ret = out ? cli_check_output_dir(out) : MK_OK;
	}
	if (ret == MK_OK)
		ret = !strcmp(x->toy.name, "collapse") ? toy_collapse_run(&o) : toy_distance_run(&o);
	free(o.owned);
	return ret;
}
