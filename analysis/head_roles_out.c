/*
 * `maskkit heads`' result as data: the rows sorted by a named column, the
 * records the emitter prints (result.h), and the grid figure by role.
 */
#include "config.h"
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core.h"
#include "plot.h"
#include "result.h"
#include "heads.h"

/* ---- the records ----------------------------------------------------------- */

#define HR_MEASURE(m, name_, h)                                                                \
	{MK_FIELD(mk_head_row, m, name_, MK_FT_REAL), .fmt = "%.4f", .help = h}

static const mk_field hr_row_fields[] = {
	{MK_FIELD(mk_head_row, layer, "layer", MK_FT_I64)},
	{MK_FIELD(mk_head_row, head, "head", MK_FT_I64)},
	{MK_FIELD(mk_head_row, role_name, "role", MK_FT_STR),
	 .help = "previous-token, next-token, local-band, cls-sep-sink, broad or mixed"},
	HR_MEASURE(prev, "prev", "mean of P[i][i-1] over real rows i >= 1"),
	HR_MEASURE(next, "next", "mean of P[i][i+1] over real rows i <= len - 2"),
	HR_MEASURE(diag, "diag", "mean of P[i][i] over real rows"),
	HR_MEASURE(band, "band", "mean over real rows of the mass within w of the diagonal"),
	HR_MEASURE(cls, "cls", "mean of P[i][0] over real rows ([CLS])"),
	HR_MEASURE(sep, "sep", "mean of P[i][len - 1] over real rows (the sample's [SEP])"),
	{MK_FIELD(mk_head_row, punct, "punct", MK_FT_REAL), .fmt = "%.4f",
	 .flags = MK_FF_OMIT | MK_FF_KEEP_NULL,
	 .help = "mean over real rows of the mass on punctuation tokens (null: no ids or "
		 "tokenizer)"},
	{MK_FIELD(mk_head_row, entropy, "entropy", MK_FT_REAL), .fmt = "%.4f", .unit = "nats",
	 .help = "mean row entropy over real keys"},
	{MK_FIELD(mk_head_row, entropy_norm, "entropy_norm", MK_FT_REAL), .fmt = "%.4f",
	 .label = "ent_norm", .help = "mean of each row's entropy / ln len (1: uniform)"},
	{MK_FIELD(mk_head_row, sparsity, "sparsity", MK_FT_REAL), .fmt = "%.4f",
	 .help = "top-p sparsity, Eq. 9 (as measure --top-p P --by head)"},
	{MK_FIELD(mk_head_row, toeplitz_r2, "toeplitz_r2", MK_FT_REAL), .fmt = "%.4f",
	 .label = "toep_r2", .help = "R^2 of the Toeplitz fit of the head's mean map"},
};
const mk_record mk_head_row_record = MK_RECORD("head_role", mk_head_row, hr_row_fields);

static const mk_field hr_thr_fields[] = {
	{MK_FIELD(mk_head_thresholds, prev, "prev", MK_FT_REAL), .help = "previous-token: prev >="},
	{MK_FIELD(mk_head_thresholds, next, "next", MK_FT_REAL), .help = "next-token: next >="},
	{MK_FIELD(mk_head_thresholds, band, "band", MK_FT_REAL), .help = "local-band: band >="},
	{MK_FIELD(mk_head_thresholds, sink, "sink", MK_FT_REAL),
	 .help = "cls-sep-sink: cls + sep >="},
	{MK_FIELD(mk_head_thresholds, broad, "broad", MK_FT_REAL),
	 .help = "broad: entropy_norm >="},
};
static const mk_record hr_thr_record = MK_RECORD("head_thresholds", mk_head_thresholds,
						 hr_thr_fields);

static const mk_field hr_count_fields[] = {
	{MK_FIELD(mk_head_role_count, role, "role", MK_FT_STR)},
	{MK_FIELD(mk_head_role_count, count, "count", MK_FT_I64)},
};
static const mk_record hr_count_record =
	MK_RECORD("head_role_count", mk_head_role_count, hr_count_fields);

static void hr_show_data(const void *rec, char *buf, size_t cap)
{
	const mk_head_roles *r = rec;
	snprintf(buf, cap, "%s:%s (%s, %" PRId64 " samples x %" PRId64 " layers x %" PRId64
		 " heads x %" PRId64 " x %" PRId64 ")", r->file, r->dataset, r->dtype, r->samples,
		 r->layers, r->heads, r->n, r->n);
}

static void hr_show_lengths(const void *rec, char *buf, size_t cap)
{
	const mk_head_roles *r = rec;
	if (r->lengths)
		snprintf(buf, cap, "%s: min %" PRId64 ", mean %.2f, max %" PRId64, r->lengths,
			 r->len_min, r->len_mean, r->len_max);
	else
		snprintf(buf, cap, "none: every sample is N = %" PRId64 " long", r->n);
}

static void hr_show_map(const void *rec, char *buf, size_t cap)
{
	const mk_head_roles *r = rec;
	snprintf(buf, cap, "%" PRId64 " x %" PRId64 ", the mean over %" PRId64 " of %" PRId64
		 " samples (those at least %" PRId64 " long)", r->map_size, r->map_size,
		 r->map_samples, r->samples, r->map_size);
}

static void hr_show_punct(const void *rec, char *buf, size_t cap)
{
	const mk_head_roles *r = rec;
	if (r->punct_from)
		snprintf(buf, cap, "the file's /ids, punctuation by the tokenizer %s", r->punct_from);
	else
		snprintf(buf, cap, "none: %s", r->punct_note ? r->punct_note : "");
}

static void hr_show_thresholds(const void *rec, char *buf, size_t cap)
{
	const mk_head_roles *r = rec;
	snprintf(buf, cap, "previous-token prev >= %g, next-token next >= %g, local-band band "
		 ">= %g, cls-sep-sink cls + sep >= %g, broad entropy_norm >= %g, else mixed; "
		 "first match", r->t.prev, r->t.next, r->t.band, r->t.sink, r->t.broad);
}

static void hr_show_roles(const void *rec, char *buf, size_t cap)
{
	const mk_head_roles *r = rec;
	size_t at = 0;
	for (int k = 0; k < MK_ROLE_COUNT && at < cap; k++)
		at += (size_t)snprintf(buf + at, cap - at, "%s%s %" PRId64, k ? ", " : "",
				       r->counts[k].role, r->counts[k].count);
}

static const mk_field hr_fields[] = {
	{MK_FIELD(mk_head_roles, file, "data", MK_FT_STR), .flags = MK_FF_TEXT,
	 .show = hr_show_data},
	{MK_FIELD(mk_head_roles, n, "lengths", MK_FT_I64), .flags = MK_FF_TEXT,
	 .show = hr_show_lengths},
	{MK_FIELD(mk_head_roles, file, "file", MK_FT_STR), .flags = MK_FF_NOTEXT},
	{MK_FIELD(mk_head_roles, dataset, "dataset", MK_FT_STR), .flags = MK_FF_NOTEXT},
	{MK_FIELD(mk_head_roles, dtype, "dtype", MK_FT_STR), .flags = MK_FF_NOTEXT},
	{MK_FIELD(mk_head_roles, lengths, "lengths", MK_FT_STR), .flags = MK_FF_NOTEXT,
	 .help = "the lengths' dataset, or null: every sample is N long"},
	{MK_FIELD(mk_head_roles, samples, "samples", MK_FT_I64), .flags = MK_FF_NOTEXT},
	{MK_FIELD(mk_head_roles, layers, "layers", MK_FT_I64), .flags = MK_FF_NOTEXT},
	{MK_FIELD(mk_head_roles, heads, "heads", MK_FT_I64), .flags = MK_FF_NOTEXT},
	{MK_FIELD(mk_head_roles, n, "n", MK_FT_I64), .flags = MK_FF_NOTEXT},
	{MK_FIELD(mk_head_roles, rows, "rows", MK_FT_U64), .unit = "real rows per head",
	 .help = "means pool all samples' real rows"},
	{MK_FIELD(mk_head_roles, window, "window", MK_FT_I64),
	 .help = "band: keys with |j - i| <= window"},
	{MK_FIELD(mk_head_roles, top_p, "top_p", MK_FT_REAL),
	 .help = "sparsity: per row the fewest keys holding this share of its mass"},
	{MK_FIELD(mk_head_roles, map_size, "map", MK_FT_I64), .flags = MK_FF_TEXT,
	 .show = hr_show_map, .help = "the mean map the Toeplitz R^2 is of"},
	{MK_FIELD(mk_head_roles, map_size, "map_size", MK_FT_I64), .flags = MK_FF_NOTEXT},
	{MK_FIELD(mk_head_roles, map_samples, "map_samples", MK_FT_I64), .flags = MK_FF_NOTEXT},
	{MK_FIELD(mk_head_roles, file, "punct", MK_FT_STR), .flags = MK_FF_TEXT,
	 .show = hr_show_punct},
	{MK_FIELD(mk_head_roles, punct_from, "punct_from", MK_FT_STR), .flags = MK_FF_NOTEXT,
	 .help = "the tokenizer that told punctuation, or null"},
	{MK_FIELD(mk_head_roles, punct_note, "punct_note", MK_FT_STR), .flags = MK_FF_NOTEXT,
	 .help = "why there is no punct column, or null"},
	{MK_FIELD(mk_head_roles, t, "thresholds", MK_FT_OBJ), .flags = MK_FF_NOTEXT,
	 .sub = &hr_thr_record},
	{MK_FIELD(mk_head_roles, window, "rules", MK_FT_I64), .flags = MK_FF_TEXT,
	 .show = hr_show_thresholds},
	{MK_FIELD(mk_head_roles, nroles, "roles", MK_FT_I64), .flags = MK_FF_TEXT,
	 .show = hr_show_roles, .help = "heads of each role"},
	{MK_FIELD(mk_head_roles, roles, "roles", MK_FT_LIST), .flags = MK_FF_JSON | MK_FF_KEYED,
	 .sub = &hr_count_record, .count_offset = offsetof(mk_head_roles, nroles),
	 .help = "heads of each role"},
	{MK_FIELD(mk_head_roles, sort, "sort", MK_FT_STR), .flags = MK_FF_NOTEXT},
	{MK_FIELD(mk_head_roles, sorted, "by_head", MK_FT_LIST), .flags = MK_FF_NOTEXT,
	 .sub = &mk_head_row_record, .count_offset = offsetof(mk_head_roles, count)},
};
const mk_record mk_head_roles_record = MK_RECORD("heads", mk_head_roles, hr_fields);

/* ---- sorting ----------------------------------------------------------------- */

typedef struct hr_key {
	double key;  /* ascending */
	bool nan;    /* last */
	int64_t at;  /* ties: layer-major order */
} hr_key;

static int hr_key_cmp(const void *pa, const void *pb)
{
	const hr_key *a = pa, *b = pb;
	if (a->nan != b->nan)
		return a->nan ? 1 : -1;
	if (!a->nan && a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return (a->at > b->at) - (a->at < b->at);
}

static int hr_sort_error(const char *column)
{
	char names[512];
	size_t at = 0;

	for (size_t k = 0; k < mk_head_row_record.count && at < sizeof names; k++)
		at += (size_t)snprintf(names + at, sizeof names - at, "%s%s", k ? ", " : "",
				       mk_head_row_record.fields[k].name);
	mk_error_set(MK_EINVAL, "no column '%s' to sort by (one of %s)", column, names);
	return mk_error_param("sort");
}

int mk_head_roles_sort(mk_head_roles *r, const char *column)
{
	const mk_field *f = NULL;
	hr_key *keys;

	for (size_t k = 0; k < mk_head_row_record.count && !f; k++)
		if (!strcmp(mk_head_row_record.fields[k].name, column))
			f = &mk_head_row_record.fields[k];
	if (!f)
		return hr_sort_error(column);
	if (r->count < 1)
		return MK_OK;
	if (!(keys = malloc((size_t)r->count * sizeof *keys)))
		return mk_error_set(MK_ENOMEM, "out of memory");
	for (int64_t k = 0; k < r->count; k++) {
		const mk_head_row *h = &r->by_head[k];
		double v;
		if (f->type == MK_FT_REAL)
			memcpy(&v, (const char *)h + f->offset, sizeof v);
		else if (!strcmp(f->name, "role"))
			v = (double)h->role;
		else if (!strcmp(f->name, "head"))
			v = (double)h->head;
		else
			v = (double)h->layer;
		/* measures largest first; layer, head and role in their order */
		keys[k] = (hr_key){.key = f->type == MK_FT_REAL ? -v : v, .nan = isnan(v), .at = k};
	}
	qsort(keys, (size_t)r->count, sizeof *keys, hr_key_cmp);
	for (int64_t k = 0; k < r->count; k++)
		r->sorted[k] = r->by_head[keys[k].at];
	r->sort = f->name;
	free(keys);
	return MK_OK;
}

/* ---- the figure ----------------------------------------------------------------- */

/* The number that gave a head its role (mixed: none, drawn as its name
 * alone; 0 here, as gnuplot skips a point with a missing value). */
static double hr_score(const mk_head_row *h)
{
	switch (h->role) {
	case MK_ROLE_PREV: return h->prev;
	case MK_ROLE_NEXT: return h->next;
	case MK_ROLE_LOCAL: return h->band;
	case MK_ROLE_SINK: return h->cls + h->sep;
	case MK_ROLE_BROAD: return h->entropy_norm;
	default: return 0.0;
	}
}

#define HR_PNG_MAX 4096 /* cells a side */

int mk_head_roles_png(const mk_head_roles *r, const char *path)
{
	static const char *const cols[] = {"layer", "head", "role", "score"};
	int64_t rows = r->count + MK_ROLE_COUNT, cell;
	double *data;
	char vars[1024], title[512], names[256] = "", shorts[128] = "";
	size_t at_n = 0, at_s = 0; /* the names are short: both fit */
	int ret;

	if (r->layers > HR_PNG_MAX || r->heads > HR_PNG_MAX)
		return mk_error_set(MK_ERANGE, "the grid draws at most %d layers and heads, got %"
				    PRId64 " x %" PRId64, HR_PNG_MAX, r->layers, r->heads);
	if (!(data = malloc((size_t)rows * 4 * sizeof *data)))
		return mk_error_set(MK_ENOMEM, "out of memory for the figure");
	for (int64_t k = 0; k < r->count; k++) {
		const mk_head_row *h = &r->by_head[k];
		double *d = data + 4 * k;
		d[0] = (double)h->layer;
		d[1] = (double)h->head;
		d[2] = (double)h->role;
		d[3] = hr_score(h);
	}
	/* one row of each role outside the grid: every role in the legend */
	for (int k = 0; k < MK_ROLE_COUNT; k++) {
		double *d = data + 4 * (r->count + k);
		d[0] = -10.0;
		d[1] = 0.0;
		d[2] = (double)k;
		d[3] = 0.0;
		at_n += (size_t)snprintf(names + at_n, sizeof names - at_n, "%s%s", k ? " " : "",
					 mk_head_role_name((mk_head_role)k));
		at_s += (size_t)snprintf(shorts + at_s, sizeof shorts - at_s, "%s%s", k ? " " : "",
					 mk_head_role_short((mk_head_role)k));
	}
	/* cells of 64 to 96 pixels, the legend's column beside them */
	cell = r->heads > 16 ? 64 : 84;
	snprintf(vars, sizeof vars, "layers = %" PRId64 "; heads = %" PRId64 "; width = %" PRId64
		 "; height = %" PRId64 "; role_names = '%s'; role_short = '%s'; font_size = %d",
		 r->layers, r->heads, cell * r->heads + 330, cell * r->layers + 150, names, shorts,
		 r->heads > 16 ? 9 : 11);
	snprintf(title, sizeof title, "what each head does (%s, %" PRId64 " samples)", r->file,
		 r->samples);
	ret = mk_plot_run(&(mk_plot){.template_name = "head_roles", .output = path, .title = title,
				     .data = data, .rows = rows, .ncols = 4, .col_names = cols,
				     .panels = 1, .vars = vars});
	free(data);
	return ret;
}
