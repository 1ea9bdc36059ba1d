/*
 * The data-set measure in one call (what `maskkit measure` does with a data
 * set): open the file and measure every block, or measure patterns at each
 * sample's length; name what was measured and lay the breakdowns out as
 * rows.  The command only parses, draws and prints.
 */
#include "config.h"
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "core.h"
#include "data.h"
#include "par.h"
#include "tensor.h"
#include "result.h"

/* *out = the formatted text, malloc'd. */
static int rep_printf(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int rep_printf(char **out, const char *fmt, ...)
{
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	free(*out);
	if (len < 0 || !(*out = malloc((size_t)len + 1)))
		return mk_error_set(MK_ENOMEM, "out of memory");
	va_start(ap, fmt);
	vsnprintf(*out, (size_t)len + 1, fmt, ap);
	va_end(ap);
	return MK_OK;
}

static const char *rep_toeplitz(uint8_t level)
{
	return level == MK_TOEPLITZ_YES ? "yes" : level == MK_TOEPLITZ_INTERIOR ? "interior" : "no";
}

/* The breakdowns as rows, and the lengths' range. */
static int rep_rows(mk_ds_report *r, bool toeplitz)
{
	const mk_ds_measure *m = &r->m;
	double sum = 0;

	r->nheads = m->layers * m->heads;
	r->by_layer = calloc((size_t)m->layers, sizeof *r->by_layer);
	r->by_head = calloc((size_t)r->nheads, sizeof *r->by_head);
	r->by_sample = calloc((size_t)m->samples, sizeof *r->by_sample);
	if (!r->by_layer || !r->by_head || !r->by_sample)
		return mk_error_set(MK_ENOMEM, "out of memory for the report");
	for (int64_t l = 0; l < m->layers; l++)
		r->by_layer[l] = (mk_ds_layer_row){l, m->by_layer[l]};
	for (int64_t a = 0; a < r->nheads; a++)
		r->by_head[a] = (mk_ds_head_row){a / m->heads, a % m->heads, m->by_head[a],
						 toeplitz ? rep_toeplitz(m->toeplitz[a]) : NULL};
	r->len_min = r->len_max = m->lengths[0];
	for (int64_t i = 0; i < m->samples; i++) {
		r->by_sample[i] = (mk_ds_sample_row){i, m->lengths[i], m->by_sample[i]};
		r->len_min = m->lengths[i] < r->len_min ? m->lengths[i] : r->len_min;
		r->len_max = m->lengths[i] > r->len_max ? m->lengths[i] : r->len_max;
		sum += (double)m->lengths[i];
	}
	r->len_mean = sum / (double)m->samples;
	return MK_OK;
}

static int rep_cells(const mk_keep *k, char **out)
{
	if (k->rule == MK_KEEP_THRESHOLD)
		return rep_printf(out, "p >= %g", k->value);
	if (k->rule == MK_KEEP_TOP_P)
		return rep_printf(out, "top-p %g per row", k->value);
	return rep_printf(out, "nonzero");
}

bool mk_ds_is_data_set(const char *spec)
{
	size_t flen = mk_tensor_file_len(spec);
	mk_dataset *d = NULL;
	struct stat st;
	char *file;
	bool deep;

	if (mk_tensor_format(spec) != MK_FMT_H5 || strpbrk(spec, " \t|&+()~!"))
		return false; /* not HDF5, or an expression */
	if (!(file = strndup(spec, flen)))
		return true; /* out of memory: the data set's error says so */
	if (stat(file, &st) != 0 || !S_ISREG(st.st_mode)) {
		deep = spec[flen] != '\0'; /* FILE.h5:/PATH must exist; else an expression */
	} else if (mk_dataset_open(file, &(mk_dataset_opts){.max_memory = UINT64_MAX,
			.shape_only = true, .dataset = spec[flen] ? spec + flen + 1 : NULL}, &d)) {
		deep = true;
	} else {
		/* a look at the shape only: no lengths are read, nothing is allocated */
		deep = mk_dataset_get_info(d)->rank > 2 || mk_dataset_get_info(d)->lengths_name;
		mk_dataset_close(d);
	}
	free(file);
	return deep;
}

int mk_ds_report_dataset(mk_dataset *d, const mk_ds_report_opts *o, mk_ds_report *r)
{
	const mk_dataset_info *in = mk_dataset_get_info(d);
	int ret = MK_OK;

	memset(r, 0, sizeof *r);
	r->file = true;
	if (o->n && o->n != in->n) {
		mk_error_set(MK_EINVAL, "n = %" PRId64 " does not match the data's N = %" PRId64,
			     o->n, in->n);
		ret = mk_error_param("n");
	}
	if (ret == MK_OK)
		ret = rep_printf(&r->data, "%s:%s (%s, %" PRId64 " samples x %" PRId64 " layers x %"
				 PRId64 " heads x %" PRId64 " x %" PRId64 ")", in->path, in->name,
				 mk_dtype_name(in->dtype), in->samples, in->layers, in->heads,
				 in->n, in->n);
	if (ret == MK_OK && in->lengths_name)
		ret = rep_printf(&r->lengths_from, "%s", in->lengths_name);
	if (ret == MK_OK)
		ret = rep_cells(&o->keep, &r->cells);
	if ((ret = mk_par_agree(ret, NULL)) == MK_OK)
		ret = mk_dataset_measure(d, &o->keep, o->progress, o->parg, &r->m);
	/* the other ranks' counts are incomplete: only rank 0 reports */
	if (ret == MK_OK && mk_par_rank() == 0)
		ret = rep_rows(r, o->keep.rule != MK_KEEP_TOP_P);
	if (ret)
		mk_ds_report_release(r);
	return ret;
}

int mk_ds_report_file(const char *spec, const mk_ds_report_opts *o, mk_ds_report *r)
{
	mk_dataset_opts dopts = {.dataset = o->dataset, .lengths = o->lengths, .axes = o->axes,
				 .max_memory = o->max_memory, .parallel = true,
				 .collective = o->collective};
	mk_dataset *d = NULL;
	size_t flen = mk_tensor_file_len(spec);
	char *file = strndup(spec, flen);
	int ret = file ? MK_OK : mk_error_set(MK_ENOMEM, "out of memory");

	memset(r, 0, sizeof *r);
	if (ret == MK_OK && spec[flen] && o->dataset) {
		mk_error_set(MK_EINVAL, "'%s' names its dataset, and another is given", spec);
		ret = mk_error_param("dataset");
	}
	if (spec[flen])
		dopts.dataset = spec + flen + 1;
	/* every rank opens the file together, or none does */
	if ((ret = mk_par_agree(ret, NULL)) == MK_OK)
		ret = mk_dataset_open(file, &dopts, &d);
	free(file);
	if (ret)
		return ret;
	ret = mk_ds_report_dataset(d, o, r);
	mk_dataset_close(d);
	return ret;
}

int mk_ds_report_patterns(const char *const *exprs, int64_t layers, int64_t heads,
			  const char *name, const mk_ds_report_opts *o, mk_ds_report *r)
{
	int64_t *len = NULL, count = 0;
	int ret = MK_OK;

	memset(r, 0, sizeof *r);
	layers = layers ? layers : 1;
	if (o->lengths) {
		ret = mk_lengths_read(o->lengths, o->n, &len, &count);
	} else if (!o->n) {
		mk_error_set(MK_EINVAL, "no lengths: give the samples' lengths, or n for one");
		ret = mk_error_param("lengths");
	} else if (!(len = malloc(sizeof *len))) {
		ret = mk_error_set(MK_ENOMEM, "out of memory");
	} else {
		len[count++] = o->n;
	}
	if (ret == MK_OK)
		ret = mk_lengths_measure(exprs, layers, heads, len, count, o->n, o->seed,
					 o->max_memory, &r->m);
	free(len);
	if (ret == MK_OK)
		ret = rep_printf(&r->data, "%s", name);
	if (ret == MK_OK && o->lengths)
		ret = rep_printf(&r->lengths_from, "%s", o->lengths);
	if (ret == MK_OK)
		ret = rep_printf(&r->cells, "the pattern at each sample's length");
	if (ret == MK_OK)
		ret = rep_rows(r, true);
	if (ret)
		mk_ds_report_release(r);
	return ret;
}

void mk_ds_report_release(mk_ds_report *r)
{
	if (!r)
		return;
	free(r->data);
	free(r->lengths_from);
	free(r->cells);
	free(r->by_layer);
	free(r->by_head);
	free(r->by_sample);
	mk_ds_measure_release(&r->m);
	memset(r, 0, sizeof *r);
}

/* ---- the results, described once ------------------------------------------- */

static const mk_field rep_layer_fields[] = {
	{MK_FIELD(mk_ds_layer_row, layer, "layer", MK_FT_I64)},
	{MK_FIELD(mk_ds_layer_row, sparsity, "sparsity", MK_FT_REAL), .fmt = "%.6f",
	 .csv_fmt = "%.9g", .help = "mean over samples and heads"},
};
const mk_record mk_ds_layer_record = MK_RECORD("by_layer", mk_ds_layer_row, rep_layer_fields);

static const mk_field rep_head_fields[] = {
	{MK_FIELD(mk_ds_head_row, layer, "layer", MK_FT_I64)},
	{MK_FIELD(mk_ds_head_row, head, "head", MK_FT_I64)},
	{MK_FIELD(mk_ds_head_row, sparsity, "sparsity", MK_FT_REAL), .fmt = "%.6f",
	 .csv_fmt = "%.9g", .help = "mean over samples"},
	{MK_FIELD(mk_ds_head_row, toeplitz, "toeplitz", MK_FT_STR),
	 .help = "every sample's block Toeplitz: yes, interior (away from the first and last "
		 "rows and columns), no; absent under top-p"},
};
const mk_record mk_ds_head_record = MK_RECORD("by_head", mk_ds_head_row, rep_head_fields);

static const mk_field rep_sample_fields[] = {
	{MK_FIELD(mk_ds_sample_row, sample, "sample", MK_FT_I64)},
	{MK_FIELD(mk_ds_sample_row, length, "length", MK_FT_I64), .help = "the sample's N_i"},
	{MK_FIELD(mk_ds_sample_row, sparsity, "sparsity", MK_FT_REAL), .fmt = "%.6f",
	 .csv_fmt = "%.9g", .help = "mean over layers and heads"},
};
const mk_record mk_ds_sample_record = MK_RECORD("by_sample", mk_ds_sample_row, rep_sample_fields);

const mk_record *mk_ds_report_rows(const mk_ds_report *r, mk_ds_by by, const void **rows,
				   size_t *count)
{
	if (by == MK_DS_BY_HEAD) {
		*rows = r->by_head;
		*count = (size_t)r->nheads;
		return &mk_ds_head_record;
	}
	if (by == MK_DS_BY_SAMPLE) {
		*rows = r->by_sample;
		*count = (size_t)r->m.samples;
		return &mk_ds_sample_record;
	}
	*rows = r->by_layer;
	*count = (size_t)r->m.layers;
	return &mk_ds_layer_record;
}

static void rep_show_lengths(const void *rec, char *buf, size_t cap)
{
	const mk_ds_report *r = rec;

	if (r->lengths_from)
		snprintf(buf, cap, "%s: min %" PRId64 ", mean %.2f, max %" PRId64, r->lengths_from,
			 r->len_min, r->len_mean, r->len_max);
	else
		snprintf(buf, cap, "none: every sample is N = %" PRId64 " long", r->m.n);
}

static bool rep_is_file(const void *rec)
{
	return ((const mk_ds_report *)rec)->file;
}

static const mk_field rep_fields[] = {
	{MK_FIELD(mk_ds_report, data, "data", MK_FT_STR)},
	{MK_FIELD(mk_ds_report, lengths_from, "lengths_from", MK_FT_STR), .flags = MK_FF_NOTEXT,
	 .help = "where the lengths came from; null: every sample is N long"},
	{MK_FIELD(mk_ds_report, m.n, "lengths", MK_FT_I64), .flags = MK_FF_TEXT,
	 .show = rep_show_lengths},
	{MK_FIELD(mk_ds_report, cells, "cells", MK_FT_STR)},
	{MK_FIELD(mk_ds_report, m.samples, "samples", MK_FT_I64), .flags = MK_FF_NOTEXT},
	{MK_FIELD(mk_ds_report, m.layers, "layers", MK_FT_I64), .flags = MK_FF_NOTEXT},
	{MK_FIELD(mk_ds_report, m.heads, "heads", MK_FT_I64), .flags = MK_FF_NOTEXT},
	{MK_FIELD(mk_ds_report, m.n, "n", MK_FT_I64), .flags = MK_FF_NOTEXT,
	 .help = "the stored N (patterns: the longest sample or n)"},
	{MK_FIELD(mk_ds_report, m.rho, "sparsity", MK_FT_REAL), .fmt = "%.6f",
	 .help = "Eq. 9: mean over samples x layers x heads of 1 - |B|/N_i^2"},
	{MK_FIELD(mk_ds_report, m.rho_classic, "sparsity_classic", MK_FT_REAL), .label = "classic",
	 .fmt = "%.6f", .help = "every sample counted at N"},
	{MK_FIELD(mk_ds_report, m.empty_rows, "empty_rows", MK_FT_U64), .label = "empty rows",
	 .flags = MK_FF_OMIT, .present = rep_is_file, .help = "real rows with no key kept"},
	{MK_FIELD(mk_ds_report, m.by_layer, "by_layer", MK_FT_REALS), .flags = MK_FF_NOTEXT,
	 .count_offset = offsetof(mk_ds_report, m.layers), .help = "mean per layer"},
	{MK_FIELD(mk_ds_report, by_head, "by_head", MK_FT_LIST), .flags = MK_FF_NOTEXT,
	 .sub = &mk_ds_head_record, .count_offset = offsetof(mk_ds_report, nheads),
	 .help = "per layer and head"},
	{MK_FIELD(mk_ds_report, m.by_sample, "by_sample", MK_FT_REALS), .flags = MK_FF_NOTEXT,
	 .count_offset = offsetof(mk_ds_report, m.samples), .help = "mean per sample"},
	{MK_FIELD(mk_ds_report, m.lengths, "lengths", MK_FT_I64S), .flags = MK_FF_NOTEXT,
	 .count_offset = offsetof(mk_ds_report, m.samples), .help = "each sample's N_i"},
};
const mk_record mk_ds_report_record = MK_RECORD("dataset_measure", mk_ds_report, rep_fields);
