/*
 * The toy models' results (explain_toy.c, explain_curves.c) as the records
 * the emitter writes: both runs of the mode-collapse toy in one call, the
 * views of the centre-distance result, and their CSV files, streamed through
 * the emitter a chunk of rows at a time.
 */
#include "config.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "explain_toy.h"
#include "internal.h"
#include "explain.h"
#include "result.h"

#define TOY_CHUNK 512 /* CSV rows per call of the emitter */

static const char *const toy_scheme[2] = {"unas", "dnas"};

/* ---- CSV in chunks ---------------------------------------------------------- */

typedef struct toy_csv {
	FILE *f;
	const mk_record *rec;
	char *rows; /* TOY_CHUNK of rec->size bytes */
	size_t n;
	bool started; /* the header is written */
	int ret;
} toy_csv;

static void toy_csv_flush(toy_csv *c)
{
	if (c->ret == MK_OK)
		c->ret = mk_emit(c->f, MK_EMIT_CSV, c->rec, c->rows, c->n,
				 c->started ? MK_EMIT_NO_HEAD : 0);
	c->started = true;
	c->n = 0;
}

/* The next row to fill (zeroed), after writing a full chunk. */
static void *toy_csv_row(toy_csv *c)
{
	void *row;

	if (c->n == TOY_CHUNK)
		toy_csv_flush(c);
	row = c->rows + c->n++ * c->rec->size;
	memset(row, 0, c->rec->size);
	return row;
}

typedef void (*toy_csv_fill)(toy_csv *c, const void *arg);

typedef struct toy_csv_job {
	const mk_record *rec;
	toy_csv_fill fill;
	const void *arg;
} toy_csv_job;

static int toy_csv_write(void *file, void *arg)
{
	const toy_csv_job *j = arg;
	toy_csv c = {.f = file, .rec = j->rec, .rows = malloc(TOY_CHUNK * j->rec->size)};

	if (!c.rows)
		return mk_error_set(MK_ENOMEM, "out of memory for the CSV");
	j->fill(&c, j->arg);
	toy_csv_flush(&c);
	free(c.rows);
	return c.ret;
}

/* path atomically, or "-" standard output. */
static int toy_csv_path(const char *path, const mk_record *rec, toy_csv_fill fill,
			const void *arg)
{
	toy_csv_job j = {rec, fill, arg};
	int ret;

	if (strcmp(path, "-"))
		return mk_write_atomic(path, toy_csv_write, &j);
	if ((ret = toy_csv_write(stdout, &j)) == MK_OK && fflush(stdout))
		ret = mk_error_set(MK_ESYS, "write error: %s", strerror(errno));
	return ret;
}

/* ---- collapse ----------------------------------------------------------------- */

static const double toy_centre_big[2] = {1.8, 0.7}, toy_centre_small[2] = {-1, -1};
static const mk_toy_values toy_centres[2] = {{toy_centre_big, 2}, {toy_centre_small, 2}};

int mk_toy_collapse_run(const mk_toy_collapse_opts *o, mk_toy_collapse_result *r)
{
	size_t steps = (size_t)o->steps + 1;
	int ret = MK_OK;

	*r = (mk_toy_collapse_result){
		.o = *o, .nsteps = (int64_t)steps, .toy = "collapse", .score = mk_toy_score_name(o->score),
		.total = MK_TOY_COLLAPSE_POINTS, .big = MK_TOY_COLLAPSE_BIG,
		.small = MK_TOY_COLLAPSE_SMALL, .tol = MK_TOY_COLLAPSE_TOL, .ncentres = 2,
		.centres = toy_centres};
	if (o->steps < 0 || o->steps > MK_TOY_COLLAPSE_STEPS_MAX)
		return mk_toy_collapse(0, o, NULL, NULL); /* its error */
	for (int d = 0; d < 2 && ret == MK_OK; d++) {
		r->points[d] = malloc(steps * MK_TOY_COLLAPSE_POINTS * 2 * sizeof *r->points[d]);
		r->clusters[d] = malloc(steps * sizeof *r->clusters[d]);
		if (!r->points[d] || !r->clusters[d])
			return mk_error_set(MK_ENOMEM, "out of memory for %d steps", o->steps);
		ret = mk_toy_collapse(d, o, r->points[d], r->clusters[d]);
	}
	if (ret == MK_OK && !(r->table = malloc(steps * sizeof *r->table)))
		ret = mk_error_set(MK_ENOMEM, "out of memory");
	for (size_t t = 0; ret == MK_OK && t < steps; t++)
		r->table[t] = (mk_toy_collapse_step){(int64_t)t, r->clusters[0][t], r->clusters[1][t]};
	return ret;
}

void mk_toy_collapse_release(mk_toy_collapse_result *r)
{
	if (!r)
		return;
	for (int d = 0; d < 2; d++) {
		free(r->points[d]);
		free(r->clusters[d]);
	}
	free(r->table);
	memset(r, 0, sizeof *r);
}

typedef struct toy_point_row {
	const char *scheme;
	int64_t step, clusters, point;
	int mode;
	double x, y;
} toy_point_row;

static const mk_field toy_point_fields[] = {
	{MK_FIELD(toy_point_row, scheme, "scheme", MK_FT_STR)},
	{MK_FIELD(toy_point_row, step, "step", MK_FT_I64)},
	{MK_FIELD(toy_point_row, clusters, "clusters", MK_FT_I64), .help = "after the step"},
	{MK_FIELD(toy_point_row, point, "point", MK_FT_I64)},
	{MK_FIELD(toy_point_row, mode, "mode", MK_FT_INT), .help = "0: the big cloud, 1: the small"},
	{MK_FIELD(toy_point_row, x, "x", MK_FT_REAL)},
	{MK_FIELD(toy_point_row, y, "y", MK_FT_REAL)},
};
static const mk_record toy_point_record = MK_RECORD("collapse_point", toy_point_row,
						    toy_point_fields);

typedef struct toy_collapse_csv {
	const mk_toy_collapse_opts *o;
	const double *const *points;
	const int64_t *const *clusters;
} toy_collapse_csv;

static void toy_collapse_fill(toy_csv *c, const void *arg)
{
	const toy_collapse_csv *x = arg;
	const int64_t n = MK_TOY_COLLAPSE_POINTS;

	for (int d = 0; d < 2; d++)
		for (int t = 0; t <= x->o->steps; t++)
			for (int64_t i = 0; i < n; i++) {
				const double *p = x->points[d] + ((size_t)t * n + i) * 2;
				*(toy_point_row *)toy_csv_row(c) = (toy_point_row){
					toy_scheme[d], t, x->clusters[d][t], i,
					i >= MK_TOY_COLLAPSE_BIG, p[0], p[1]};
			}
}

int mk_toy_collapse_write_csv(const char *path, const mk_toy_collapse_opts *o,
			      const double *const points[2], const int64_t *const clusters[2])
{
	toy_collapse_csv x = {o, points, clusters};
	return toy_csv_path(path, &toy_point_record, toy_collapse_fill, &x);
}

static const mk_field toy_values_fields[] = {
	{MK_FIELD(mk_toy_values, v, "values", MK_FT_REALS),
	 .count_offset = offsetof(mk_toy_values, n)},
};
static const mk_record toy_values_record = MK_RECORD("values", mk_toy_values,
						     toy_values_fields);

static const mk_field toy_step_fields[] = {
	{MK_FIELD(mk_toy_collapse_step, step, "step", MK_FT_I64)},
	{MK_FIELD(mk_toy_collapse_step, unas, "unas", MK_FT_I64)},
	{MK_FIELD(mk_toy_collapse_step, dnas, "dnas", MK_FT_I64)},
};
const mk_record mk_toy_collapse_step_record = MK_RECORD("collapse_step", mk_toy_collapse_step,
							toy_step_fields);

static const mk_field toy_clusters_fields[] = {
	{MK_FIELD(mk_toy_collapse_result, clusters[0], "unas", MK_FT_I64S),
	 .count_offset = offsetof(mk_toy_collapse_result, nsteps)},
	{MK_FIELD(mk_toy_collapse_result, clusters[1], "dnas", MK_FT_I64S),
	 .count_offset = offsetof(mk_toy_collapse_result, nsteps)},
};
static const mk_record toy_clusters_record = MK_RECORD("collapse_clusters",
						       mk_toy_collapse_result, toy_clusters_fields);

static void toy_show_after(const void *rec, char *buf, size_t cap)
{
	const mk_toy_collapse_result *r = rec;
	int64_t s = r->nsteps - 1, u = r->clusters[0][s], d = r->clusters[1][s];

	snprintf(buf, cap, "%lld step%s: UNAS %lld cluster%s, DNAS %lld cluster%s", (long long)s,
		 s == 1 ? "" : "s", (long long)u, u == 1 ? "" : "s", (long long)d,
		 d == 1 ? "" : "s");
}

static const mk_field toy_collapse_fields[] = {
	{MK_FIELD(mk_toy_collapse_result, toy, "toy", MK_FT_STR)},
	{MK_FIELD(mk_toy_collapse_result, total, "points", MK_FT_I64)},
	{MK_FIELD(mk_toy_collapse_result, big, "big", MK_FT_I64), .help = "around (1.8, 0.7)"},
	{MK_FIELD(mk_toy_collapse_result, small, "small", MK_FT_I64), .help = "around (-1, -1)"},
	{MK_FIELD(mk_toy_collapse_result, centres, "centres", MK_FT_LIST), .flags = MK_FF_BARE,
	 .sub = &toy_values_record, .count_offset = offsetof(mk_toy_collapse_result, ncentres)},
	{MK_FIELD(mk_toy_collapse_result, o.sd, "sd", MK_FT_REAL),
	 .help = "each coordinate's standard deviation"},
	{MK_FIELD(mk_toy_collapse_result, o.seed, "seed", MK_FT_U64)},
	{MK_FIELD(mk_toy_collapse_result, score, "score", MK_FT_STR),
	 .help = "s_ij, with Q = K = I; dot: x_i . x_j, dist: -|x_i - x_j|^2 / 2"},
	{MK_FIELD(mk_toy_collapse_result, o.steps, "steps", MK_FT_INT)},
	{MK_FIELD(mk_toy_collapse_result, tol, "tol", MK_FT_REAL),
	 .help = "points this close share a cluster, by single linkage"},
	{.name = "clusters", .type = MK_FT_OBJ, .offset = 0, .flags = MK_FF_JSON,
	 .sub = &toy_clusters_record, .help = "after each step, from the start"},
	{MK_FIELD(mk_toy_collapse_result, nsteps, "after", MK_FT_I64), .flags = MK_FF_TEXT,
	 .show = toy_show_after},
};
const mk_record mk_toy_collapse_record = MK_RECORD("collapse", mk_toy_collapse_result,
						   toy_collapse_fields);

/* ---- distance ----------------------------------------------------------------- */

static bool toy_is_check(const void *rec)
{
	return !strcmp(((const mk_toy_distance_row *)rec)->kind, "check");
}

#define TOY_PAIR(m, k, name_, fmt_)                                                        \
	{MK_FIELD(mk_toy_distance_row, m[k], name_, MK_FT_REAL), .fmt = fmt_, .flags = MK_FF_OMIT}

static const mk_field toy_row_fields[] = {
	{MK_FIELD(mk_toy_distance_row, kind, "kind", MK_FT_STR), .flags = MK_FF_NOTEXT,
	 .help = "curve, check or max"},
	{MK_FIELD(mk_toy_distance_row, a, "a", MK_FT_REAL), .fmt = "%.4g"},
	{MK_FIELD(mk_toy_distance_row, r, "r", MK_FT_REAL), .fmt = "%.4g", .help = "N0 / N1"},
	{MK_FIELD(mk_toy_distance_row, n0, "n0", MK_FT_I64), .flags = MK_FF_OMIT,
	 .present = toy_is_check},
	{MK_FIELD(mk_toy_distance_row, n1, "n1", MK_FT_I64), .flags = MK_FF_OMIT,
	 .present = toy_is_check},
	{MK_FIELD(mk_toy_distance_row, closed[0], "unas", MK_FT_REAL), .fmt = "%.6f",
	 .help = "c0 - c1 after the step, closed form"},
	{MK_FIELD(mk_toy_distance_row, closed[1], "dnas", MK_FT_REAL), .fmt = "%.6f"},
	TOY_PAIR(simulated, 0, "unas_simulated", "%.6f"),
	TOY_PAIR(simulated, 1, "dnas_simulated", "%.6f"),
	TOY_PAIR(error, 0, "unas_error", "%.3g"),
	TOY_PAIR(error, 1, "dnas_error", "%.3g"),
};
const mk_record mk_toy_distance_row_record = MK_RECORD("distance_row", mk_toy_distance_row,
						       toy_row_fields);

typedef struct toy_distance_csv {
	const mk_toy_distance_opts *o;
	const mk_toy_distance_result *r;
} toy_distance_csv;

static void toy_distance_fill(toy_csv *c, const void *arg)
{
	const mk_toy_distance_opts *o = ((const toy_distance_csv *)arg)->o;
	const mk_toy_distance_result *r = ((const toy_distance_csv *)arg)->r;

	for (int i = 0; i < o->na; i++)
		for (int64_t k = 0; k < r->nr; k++)
			*(mk_toy_distance_row *)toy_csv_row(c) = (mk_toy_distance_row){
				"curve", o->a[i], r->r[k], 0, 0,
				{r->curve[0][i * r->nr + k], r->curve[1][i * r->nr + k]},
				{NAN, NAN}, {NAN, NAN}};
	for (int64_t k = 0; k < r->ncheck; k++) {
		const mk_toy_check *x = &r->check[k];
		*(mk_toy_distance_row *)toy_csv_row(c) = (mk_toy_distance_row){
			"check", x->a, x->r, x->n0, x->n1, {x->closed[0], x->closed[1]},
			{x->simulated[0], x->simulated[1]},
			{fabs(x->closed[0] - x->simulated[0]), fabs(x->closed[1] - x->simulated[1])}};
	}
	*(mk_toy_distance_row *)toy_csv_row(c) = (mk_toy_distance_row){
		"max", NAN, NAN, 0, 0, {NAN, NAN}, {NAN, NAN}, {r->max_error[0], r->max_error[1]}};
}

int mk_toy_distance_write_csv(const char *path, const mk_toy_distance_opts *o,
			      const mk_toy_distance_result *r)
{
	toy_distance_csv x = {o, r};
	return toy_csv_path(path, &mk_toy_distance_row_record, toy_distance_fill, &x);
}

/* The closed forms at five ratios spread over each curve (its ends and, by
 * default, each decade between). */
int mk_toy_distance_views(const mk_toy_distance_opts *o, mk_toy_distance_result *r)
{
	int64_t shown = r->nr < 5 ? r->nr : 5;

	r->toy = "distance";
	r->score = mk_toy_score_name(o->score);
	r->a = o->a;
	r->na = o->na;
	r->sizes = o->sizes;
	r->nsizes = o->nsizes;
	r->curves[0] = malloc((size_t)o->na * sizeof *r->curves[0]);
	r->curves[1] = malloc((size_t)o->na * sizeof *r->curves[1]);
	r->shown = malloc((size_t)(o->na * shown) * sizeof *r->shown);
	if (!r->curves[0] || !r->curves[1] || !r->shown)
		return mk_error_set(MK_ENOMEM, "out of memory");
	for (int i = 0; i < o->na; i++) {
		for (int d = 0; d < 2; d++)
			r->curves[d][i] = (mk_toy_values){r->curve[d] + i * r->nr, r->nr};
		for (int64_t k = 0; k < shown; k++) {
			int64_t at = shown < 5 ? k : k * (r->nr - 1) / 4;
			r->shown[i * shown + k] = (mk_toy_distance_row){
				"curve", o->a[i], r->r[at], 0, 0,
				{r->curve[0][i * r->nr + at], r->curve[1][i * r->nr + at]},
				{NAN, NAN}, {NAN, NAN}};
		}
	}
	r->nshown = o->na * shown;
	return MK_OK;
}

static const mk_field toy_check_fields[] = {
	{MK_FIELD(mk_toy_check, a, "a", MK_FT_REAL)},
	{MK_FIELD(mk_toy_check, n0, "n0", MK_FT_I64)},
	{MK_FIELD(mk_toy_check, n1, "n1", MK_FT_I64)},
	{MK_FIELD(mk_toy_check, r, "r", MK_FT_REAL)},
	{MK_FIELD(mk_toy_check, closed[0], "unas", MK_FT_REAL)},
	{MK_FIELD(mk_toy_check, simulated[0], "unas_simulated", MK_FT_REAL)},
	{MK_FIELD(mk_toy_check, closed[1], "dnas", MK_FT_REAL)},
	{MK_FIELD(mk_toy_check, simulated[1], "dnas_simulated", MK_FT_REAL)},
};
static const mk_record toy_check_record = MK_RECORD("distance_check", mk_toy_check,
						    toy_check_fields);

static const mk_field toy_max_fields[] = {
	{MK_FIELD(mk_toy_distance_result, max_error[0], "unas", MK_FT_REAL), .fmt = "%.3g"},
	{MK_FIELD(mk_toy_distance_result, max_error[1], "dnas", MK_FT_REAL), .fmt = "%.3g"},
};
static const mk_record toy_max_record = MK_RECORD("distance_max_error", mk_toy_distance_result,
						  toy_max_fields);

static const mk_field toy_checks_fields[] = {
	{MK_FIELD(mk_toy_distance_result, sizes, "sizes", MK_FT_I64S),
	 .count_offset = offsetof(mk_toy_distance_result, nsizes),
	 .help = "simulated: every a, n0 and n1 of these"},
	{MK_FIELD(mk_toy_distance_result, ncheck, "steps", MK_FT_I64), .flags = MK_FF_TEXT,
	 .help = "simulated"},
	{.name = "max_error", .type = MK_FT_OBJ, .offset = 0, .sub = &toy_max_record,
	 .help = "the largest |closed - simulated|"},
	{MK_FIELD(mk_toy_distance_result, check, "points", MK_FT_LIST), .flags = MK_FF_JSON,
	 .sub = &toy_check_record, .count_offset = offsetof(mk_toy_distance_result, ncheck)},
};
static const mk_record toy_checks_record = MK_RECORD("distance_check", mk_toy_distance_result,
						     toy_checks_fields);

#define TOY_CURVES(d, name_)                                                              \
	{MK_FIELD(mk_toy_distance_result, curves[d], name_, MK_FT_LIST), .flags = MK_FF_BARE, \
	 .sub = &toy_values_record, .count_offset = offsetof(mk_toy_distance_result, na)}

static const mk_field toy_distance_fields[] = {
	{MK_FIELD(mk_toy_distance_result, toy, "toy", MK_FT_STR)},
	{MK_FIELD(mk_toy_distance_result, score, "score", MK_FT_STR)},
	{MK_FIELD(mk_toy_distance_result, a, "a", MK_FT_REALS),
	 .count_offset = offsetof(mk_toy_distance_result, na), .help = "half distances"},
	{MK_FIELD(mk_toy_distance_result, r, "r", MK_FT_REALS), .flags = MK_FF_JSON,
	 .count_offset = offsetof(mk_toy_distance_result, nr)},
	TOY_CURVES(0, "unas"),
	TOY_CURVES(1, "dnas"),
	{.name = "check", .type = MK_FT_OBJ, .offset = 0, .sub = &toy_checks_record},
};
const mk_record mk_toy_distance_record = MK_RECORD("distance", mk_toy_distance_result,
						   toy_distance_fields);
