/*
 * `maskkit attn-stats` as one call: the data set opened on every rank, its
 * statistics (attn_stats.c), and the result as reported -- each layer with
 * its heads and the profile at offsets -k..k only -- described once for the
 * emitter (result.h).  The command parses, calls and prints.
 */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "core.h"
#include "mask.h"
#include "io.h"
#include "tensor.h"
#include "attn_maps.h"
#include "attn.h"
#include "plot.h"
#include "result.h"
#include "par.h"
#include "attn_stats.h"

static int stats_strdup(const char *s, char **out)
{
	if (s && !(*out = strdup(s)))
		return mk_error_set(MK_ENOMEM, "out of memory");
	return MK_OK;
}

void mk_attn_lengths_range(const int64_t *len, int64_t samples, int64_t *min, int64_t *max,
			   double *mean)
{
	double sum = 0.0;

	*min = *max = len[0];
	for (int64_t i = 0; i < samples; i++) {
		*min = len[i] < *min ? len[i] : *min;
		*max = len[i] > *max ? len[i] : *max;
		sum += (double)len[i];
	}
	*mean = sum / (double)samples;
}

/* What the summary becomes in the report: items that point into it. */
static int stats_views(mk_attn_report *s)
{
	const mk_attn_summary *r = &s->sum;
	int64_t at = 0, several = r->heads > 1;

	s->nhead = r->layers * r->heads;
	s->table_rows = s->nhead + (several ? r->layers : 0);
	s->offsets = malloc((size_t)s->width * sizeof *s->offsets);
	s->per_layer = calloc((size_t)r->layers, sizeof *s->per_layer);
	s->by_head = calloc((size_t)s->nhead, sizeof *s->by_head);
	s->table = calloc((size_t)s->table_rows, sizeof *s->table);
	if (!s->offsets || !s->per_layer || !s->by_head || !s->table)
		return mk_error_set(MK_ENOMEM, "out of memory for the attention statistics");
	for (int64_t x = 0; x < s->width; x++)
		s->offsets[x] = x - s->k;
	/* every layer saw every sample: layer 0's counts are all layers' */
	s->count = (const int64_t *)(r->count + r->n - 1 - s->k);
	for (int64_t l = 0; l < r->layers; l++) {
		mk_attn_report_item *li = &s->per_layer[l];
		*li = (mk_attn_report_item){.layer = l, .head = -1, .s = r->layer[l],
					   .profile = r->layer_profile + l * r->width + r->n - 1 - s->k,
					   .width = s->width, .heads = s->by_head + l * r->heads,
					   .nheads = r->heads};
		for (int64_t h = 0; h < r->heads; h++) {
			int64_t lh = l * r->heads + h;
			s->by_head[lh] = (mk_attn_report_item){
				.layer = l, .head = h, .s = r->head[lh], .width = s->width,
				.profile = r->profile + lh * r->width + r->n - 1 - s->k};
			s->table[at++] = s->by_head[lh];
		}
		if (several)
			s->table[at++] = *li;
	}
	return MK_OK;
}

static int stats_fill(const mk_dataset *d, const mk_attn_stats_opts *o, mk_attn_report *s)
{
	const mk_dataset_info *in = mk_dataset_get_info(d);
	int ret;

	s->dtype = mk_dtype_name(in->dtype);
	s->weighting = "cells";
	s->samples = in->samples;
	s->layers = in->layers;
	s->heads = in->heads;
	s->n = in->n;
	s->rows = s->sum.rows[0];
	s->k = o->max_offset < in->n - 1 ? o->max_offset : in->n - 1;
	s->k = s->k > 0 ? s->k : 0;
	s->width = 2 * s->k + 1;
	mk_attn_lengths_range(mk_dataset_lengths(d), in->samples, &s->len_min, &s->len_max,
			      &s->len_mean);
	if ((ret = stats_strdup(in->path, &s->file)) || (ret = stats_strdup(in->name, &s->dataset)) ||
	    (ret = stats_strdup(in->lengths_name, &s->lengths)))
		return ret;
	return stats_views(s);
}

int mk_attn_stats_run(const char *spec, const mk_attn_stats_opts *o, mk_attn_report *out)
{
	mk_dataset_opts d = o->d;
	size_t flen = mk_tensor_file_len(spec);
	char *file = strndup(spec, flen);
	mk_dataset *ds = NULL;
	int ret = file ? MK_OK : mk_error_set(MK_ENOMEM, "out of memory");

	memset(out, 0, sizeof *out);
	if (ret == MK_OK && spec[flen] && d.dataset) {
		mk_error_set(MK_EINVAL, "'%s' names a dataset, and another is given", spec);
		ret = mk_error_param("dataset");
	}
	if (spec[flen])
		d.dataset = spec + flen + 1;
	d.parallel = true;
	if ((ret = mk_par_agree(ret, NULL)) == MK_OK && (ret = mk_dataset_open(file, &d, &ds)) == MK_OK &&
	    (ret = mk_attn_summary_dataset(ds, d.max_memory, o->progress, o->parg, &out->sum)) == MK_OK &&
	    mk_par_rank() == 0)
		ret = stats_fill(ds, o, out);
	if (ret)
		mk_attn_report_release(out);
	mk_dataset_close(ds);
	free(file);
	return ret;
}

void mk_attn_report_release(mk_attn_report *s)
{
	if (!s)
		return;
	free(s->file);
	free(s->dataset);
	free(s->lengths);
	free(s->offsets);
	free(s->per_layer);
	free(s->by_head);
	free(s->table);
	mk_attn_summary_release(&s->sum);
	memset(s, 0, sizeof *s);
}

/* ---- the profile as CSV: a record of its columns, made for the data ------- */

#define STATS_COL 64

int mk_attn_report_write_profile(const mk_attn_report *s, const char *path)
{
	const mk_attn_summary *r = &s->sum;
	int64_t cols = 2 + r->layers + r->layers * r->heads;
	mk_field *f = calloc((size_t)cols, sizeof *f);
	char (*names)[STATS_COL] = calloc((size_t)cols, sizeof *names);
	double *rows = malloc((size_t)(s->width * cols) * sizeof *rows);
	mk_record rec = {.name = "attn_profile", .fields = f, .count = (size_t)cols,
			 .size = (size_t)cols * sizeof *rows};
	int ret = MK_OK;

	if (!f || !names || !rows) {
		ret = mk_error_set(MK_ENOMEM, "out of memory for the profile");
		goto out;
	}
	/* columns: offset (int64_t), count (uint64_t), then doubles */
	f[0] = (mk_field){.name = "offset", .type = MK_FT_I64, .offset = 0};
	f[1] = (mk_field){.name = "count", .type = MK_FT_U64, .offset = sizeof(double)};
	for (int64_t c = 2; c < cols; c++) {
		int64_t lh = c - 2 - r->layers;
		if (lh < 0)
			snprintf(names[c], STATS_COL, "layer%" PRId64, c - 2);
		else
			snprintf(names[c], STATS_COL, "layer%" PRId64 "_head%" PRId64, lh / r->heads,
				 lh % r->heads);
		f[c] = (mk_field){.name = names[c], .type = MK_FT_REAL,
				  .offset = (size_t)c * sizeof(double)};
	}
	for (int64_t x = 0; x < s->width; x++) {
		double *row = rows + x * cols;
		int64_t at = r->n - 1 - s->k + x;
		memcpy(&row[0], &s->offsets[x], sizeof(int64_t));
		memcpy(&row[1], &r->count[at], sizeof(uint64_t));
		for (int64_t l = 0; l < r->layers; l++)
			row[2 + l] = r->layer_profile[l * r->width + at];
		for (int64_t lh = 0; lh < r->layers * r->heads; lh++)
			row[2 + r->layers + lh] = r->profile[lh * r->width + at];
	}
	ret = mk_emit_path(path, MK_EMIT_CSV, &rec, rows, (size_t)s->width, 0);
out:
	free(f);
	free(names);
	free(rows);
	return ret;
}

/* ---- the result, described once --------------------------------------------- */

static void stats_show_data(const void *rec, char *buf, size_t cap)
{
	const mk_attn_report *s = rec;
	snprintf(buf, cap, "%s:%s (%s, %" PRId64 " samples x %" PRId64 " layers x %" PRId64
		 " heads x %" PRId64 " x %" PRId64 ")", s->file, s->dataset, s->dtype, s->samples,
		 s->layers, s->heads, s->n, s->n);
}

static void stats_show_lengths(const void *rec, char *buf, size_t cap)
{
	const mk_attn_report *s = rec;
	if (s->lengths)
		snprintf(buf, cap, "%s: min %" PRId64 ", mean %.2f, max %" PRId64, s->lengths,
			 s->len_min, s->len_mean, s->len_max);
	else
		snprintf(buf, cap, "none: every sample is N = %" PRId64 " long", s->n);
}

static void stats_show_head(const void *rec, char *buf, size_t cap)
{
	const mk_attn_report_item *i = rec;
	if (i->head < 0)
		snprintf(buf, cap, "mean");
	else
		snprintf(buf, cap, "%" PRId64, i->head);
}

/* The statistics of an item; mass_max is left out of tables, as before. */
#define STATS_FIELDS                                                                          \
	{MK_FIELD(mk_attn_report_item, s.diag, "diag", MK_FT_REAL), .fmt = "%.6g",             \
	 .help = "mean of P[i][i] over real rows"},                                           \
	{MK_FIELD(mk_attn_report_item, s.off, "off", MK_FT_REAL), .fmt = "%.6g",               \
	 .help = "mean of P[i][j], j != i, over real cells"},                                  \
	{MK_FIELD(mk_attn_report_item, s.first, "first", MK_FT_REAL), .fmt = "%.6g",           \
	 .help = "mean of P[i][0] over real rows"},                                           \
	{MK_FIELD(mk_attn_report_item, s.last, "last", MK_FT_REAL), .fmt = "%.6g",             \
	 .help = "mean of P[i][N_i - 1] over real rows"},                                     \
	{MK_FIELD(mk_attn_report_item, s.entropy, "entropy", MK_FT_REAL), .fmt = "%.4f",       \
	 .unit = "nats", .help = "mean row entropy over real keys"},                          \
	{MK_FIELD(mk_attn_report_item, s.mass_min, "mass_min", MK_FT_REAL), .fmt = "%.6f",     \
	 .help = "the least row sum over real keys"},                                         \
	{MK_FIELD(mk_attn_report_item, s.mass_max, "mass_max", MK_FT_REAL), .flags = MK_FF_NOTEXT, \
	 .help = "the greatest row sum over real keys"}

#define STATS_PROFILE                                                                         \
	{MK_FIELD(mk_attn_report_item, profile, "profile", MK_FT_REALS),                       \
	 .count_offset = offsetof(mk_attn_report_item, width),                                 \
	 .help = "mean of P[i][i+d] at offsets d = -k..k (null: no cells)"}

static const mk_field stats_head_fields[] = {
	{MK_FIELD(mk_attn_report_item, head, "head", MK_FT_I64)},
	STATS_FIELDS,
	STATS_PROFILE,
};
static const mk_record stats_head_record =
	MK_RECORD("attn_stats_head", mk_attn_report_item, stats_head_fields);

static const mk_field stats_layer_fields[] = {
	{MK_FIELD(mk_attn_report_item, layer, "layer", MK_FT_I64)},
	STATS_FIELDS,
	STATS_PROFILE,
	{MK_FIELD(mk_attn_report_item, heads, "heads", MK_FT_LIST), .sub = &stats_head_record,
	 .count_offset = offsetof(mk_attn_report_item, nheads)},
};
static const mk_record stats_layer_record =
	MK_RECORD("attn_stats_layer", mk_attn_report_item, stats_layer_fields);

static const mk_field stats_row_fields[] = {
	{MK_FIELD(mk_attn_report_item, layer, "layer", MK_FT_I64)},
	{MK_FIELD(mk_attn_report_item, head, "head", MK_FT_I64), .show = stats_show_head,
	 .help = "the head (tables: mean, the layer's mean over heads)"},
	STATS_FIELDS,
};
const mk_record mk_attn_report_row_record =
	MK_RECORD("attn_stats_row", mk_attn_report_item, stats_row_fields);

static const mk_field stats_fields[] = {
	{MK_FIELD(mk_attn_report, file, "data", MK_FT_STR), .flags = MK_FF_TEXT,
	 .show = stats_show_data},
	{MK_FIELD(mk_attn_report, n, "lengths", MK_FT_I64), .flags = MK_FF_TEXT,
	 .show = stats_show_lengths},
	{MK_FIELD(mk_attn_report, file, "file", MK_FT_STR), .flags = MK_FF_NOTEXT},
	{MK_FIELD(mk_attn_report, dataset, "dataset", MK_FT_STR), .flags = MK_FF_NOTEXT},
	{MK_FIELD(mk_attn_report, dtype, "dtype", MK_FT_STR), .flags = MK_FF_NOTEXT},
	{MK_FIELD(mk_attn_report, lengths, "lengths", MK_FT_STR), .flags = MK_FF_NOTEXT,
	 .help = "the lengths' dataset, or null: every sample is N long"},
	{MK_FIELD(mk_attn_report, samples, "samples", MK_FT_I64), .flags = MK_FF_NOTEXT},
	{MK_FIELD(mk_attn_report, layers, "layers", MK_FT_I64), .flags = MK_FF_NOTEXT},
	{MK_FIELD(mk_attn_report, heads, "heads", MK_FT_I64), .flags = MK_FF_NOTEXT},
	{MK_FIELD(mk_attn_report, n, "n", MK_FT_I64), .flags = MK_FF_NOTEXT},
	{MK_FIELD(mk_attn_report, rows, "rows", MK_FT_U64), .unit = "real rows per head",
	 .help = "means pool all samples' real cells"},
	{MK_FIELD(mk_attn_report, weighting, "weighting", MK_FT_STR), .flags = MK_FF_NOTEXT},
	{MK_FIELD(mk_attn_report, k, "max_offset", MK_FT_I64), .flags = MK_FF_NOTEXT},
	{MK_FIELD(mk_attn_report, offsets, "offsets", MK_FT_I64S), .flags = MK_FF_NOTEXT,
	 .count_offset = offsetof(mk_attn_report, width)},
	{MK_FIELD(mk_attn_report, count, "count", MK_FT_I64S), .flags = MK_FF_NOTEXT,
	 .count_offset = offsetof(mk_attn_report, width), .help = "real cells per head at each offset"},
	{MK_FIELD(mk_attn_report, per_layer, "per_layer", MK_FT_LIST), .flags = MK_FF_NOTEXT,
	 .sub = &stats_layer_record, .count_offset = offsetof(mk_attn_report, layers)},
};

const mk_record mk_attn_report_record = MK_RECORD("attn_stats", mk_attn_report, stats_fields);
