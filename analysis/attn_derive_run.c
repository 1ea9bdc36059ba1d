/*
 * `maskkit attn-derive` as one call: the data set opened, the mean map (and
 * its heatmaps) and the indicators derived (attn_derive.c) and written, each
 * file whole or not at all, and the result described once for the emitter.
 */
#define _GNU_SOURCE /* asprintf */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core.h"
#include "tensor.h"
#include "attn_maps.h"
#include "attn_stats.h"
#include "plot.h"
#include "result.h"

static int derive_cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

int64_t mk_attn_median_length(const mk_dataset_info *in, const int64_t *len)
{
	int64_t *v = malloc((size_t)in->samples * sizeof *v), m;

	if (!v)
		return in->n;
	memcpy(v, len, (size_t)in->samples * sizeof *v);
	qsort(v, (size_t)in->samples, sizeof *v, derive_cmp_i64);
	m = v[(in->samples - 1) / 2];
	free(v);
	return m;
}

/* Several datasets into one file, all or nothing: t (heads x ... floats) is
 * filled by fill(k) for dataset k and written into a temporary file in the
 * same folder, renamed at the end. */
typedef void (*derive_fill_fn)(mk_tensor *t, int k, const void *arg, char *name, size_t cap);

static int derive_write(const char *out, mk_tensor *t, int count, derive_fill_fn fill,
			const void *arg)
{
	char *tmp = NULL, name[32];
	int ret = MK_OK;

	if (asprintf(&tmp, "%s.tmp.%ld.h5", out, (long)getpid()) < 0)
		return mk_error_set(MK_ENOMEM, "out of memory");
	for (int k = 0; k < count && ret == MK_OK; k++) {
		fill(t, k, arg, name, sizeof name);
		ret = mk_tensor_write(t, tmp, name, MK_DTYPE_F32);
	}
	if (ret == MK_OK && rename(tmp, out) != 0)
		ret = mk_error_errno(errno, "'%s'", out);
	if (ret)
		unlink(tmp);
	free(tmp);
	return ret;
}

static void derive_fill_map(mk_tensor *t, int l, const void *map, char *name, size_t cap)
{
	uint64_t cells = mk_tensor_count(t);
	for (uint64_t c = 0; c < cells; c++)
		t->data[c] = (float)((const double *)map)[(uint64_t)l * cells + c];
	snprintf(name, cap, "layer_%d", l);
}

static int derive_png(const mk_attn_derive_opts *o, const mk_dataset_info *in, int64_t m,
		      const double *map)
{
	const double **mats = calloc((size_t)in->heads, sizeof *mats);
	char (*labels)[32] = calloc((size_t)in->heads, sizeof *labels), title[160];
	const char **names = calloc((size_t)in->heads, sizeof *names);
	/* column 0 ([CLS], the sink) holds many times any other cell's mass: it
	 * would set every head's top colour and leave the rest one colour */
	mk_heatmap_opts ho = {.title = title, .labels = names, .range_skip_cols = m > 1};
	int ret = mats && labels && names ? mk_range_parse("p1", &ho.range)
					  : mk_error_set(MK_ENOMEM, "out of memory");

	for (int64_t h = 0; ret == MK_OK && h < in->heads; h++) {
		mats[h] = map + (o->layer * in->heads + h) * m * m;
		snprintf(labels[h], sizeof labels[h], "head %" PRId64, h);
		names[h] = labels[h];
	}
	snprintf(title, sizeof title, "mean attention, layer %" PRId64 ", first %" PRId64
		 " tokens (query down, key across)", o->layer, m);
	if (ret == MK_OK)
		ret = mk_png_heatmaps(o->png, mats, (int)in->heads, m, m,
				      in->heads > 4 ? 4 : (int)in->heads, &ho);
	free(labels);
	free(names);
	free(mats);
	return ret;
}

static int derive_mean(mk_dataset *d, const mk_attn_derive_opts *o, mk_attn_derive_map *r)
{
	const mk_dataset_info *in = mk_dataset_get_info(d);
	int64_t m = o->size ? o->size : mk_attn_median_length(in, mk_dataset_lengths(d)), used;
	mk_tensor t = {0};
	double *map = NULL;
	int ret;

	if (!(ret = mk_attn_mean_map(d, m, o->d.max_memory, o->progress, o->parg, &map, &used)) &&
	    !(ret = mk_tensor_new(3, (int64_t[]){in->heads, m, m}, MK_DTYPE_F32, o->d.max_memory,
				  "the mean map", &t)) &&
	    !(ret = derive_write(o->mean_map, &t, (int)in->layers, derive_fill_map, map)) &&
	    !(o->png && (ret = derive_png(o, in, m, map))))
		*r = (mk_attn_derive_map){.output = o->mean_map, .size = m, .samples = used,
					  .layers = in->layers};
	free(map);
	mk_tensor_release(&t);
	return ret;
}

static double derive_share(const uint8_t *x, const mk_dataset_info *in, const int64_t *len)
{
	uint64_t on = 0, real = 0;

	for (int64_t s = 0; s < in->samples; s++)
		for (int64_t c = 0; c < in->layers * in->heads; c++) {
			const uint8_t *row = x + (s * in->layers * in->heads + c) * in->n;
			for (int64_t t = 0; t < len[s]; t++)
				on += row[t];
			real += (uint64_t)len[s];
		}
	return real ? (double)on / (double)real : 0;
}

static void derive_fill_ind(mk_tensor *t, int k, const void *ind, char *name, size_t cap)
{
	const uint8_t *x = ((const uint8_t *const *)ind)[k];
	for (uint64_t c = 0; c < mk_tensor_count(t); c++)
		t->data[c] = x[c];
	snprintf(name, cap, "%s", k ? "cols" : "rows");
}

static int derive_indicators(mk_dataset *d, const mk_attn_derive_opts *o,
			     mk_attn_derive_ind *r)
{
	const mk_dataset_info *in = mk_dataset_get_info(d);
	const int64_t *len = mk_dataset_lengths(d);
	uint8_t *ind[2] = {NULL, NULL};
	mk_tensor t = {0};
	int ret;

	if (!(ret = mk_attn_indicators(d, o->col_factor, o->row_entropy, o->d.max_memory,
				       o->progress, o->parg, &ind[0], &ind[1])) &&
	    !(ret = mk_tensor_new(4, (int64_t[]){in->samples, in->layers, in->heads, in->n},
				  MK_DTYPE_F32, o->d.max_memory, "the indicators", &t)) &&
	    !(ret = derive_write(o->indicators, &t, 2, derive_fill_ind, ind)))
		*r = (mk_attn_derive_ind){.output = o->indicators,
					  .row_share = derive_share(ind[0], in, len),
					  .col_share = derive_share(ind[1], in, len)};
	free(ind[0]);
	free(ind[1]);
	mk_tensor_release(&t);
	return ret;
}

int mk_attn_derive_run(const char *path, const mk_attn_derive_opts *o, mk_attn_derive *out)
{
	mk_dataset *d = NULL;
	int64_t layers;
	int ret;

	memset(out, 0, sizeof *out);
	if ((ret = mk_dataset_open(path, &o->d, &d)))
		return ret;
	layers = mk_dataset_get_info(d)->layers;
	if (o->mean_map && o->png && (o->layer < 0 || o->layer >= layers)) {
		mk_error_set(MK_EINVAL, "layer %" PRId64 ": the data has %" PRId64 " layers (0..%"
			     PRId64 ")", o->layer, layers, layers - 1);
		ret = mk_error_param("layer");
	}
	if (!ret && o->mean_map)
		ret = derive_mean(d, o, &out->mean_map);
	if (!ret && o->indicators)
		ret = derive_indicators(d, o, &out->indicators);
	mk_dataset_close(d);
	return ret;
}

/* ---- the result, described once --------------------------------------------- */

static bool derive_has_map(const void *rec)
{
	return ((const mk_attn_derive *)rec)->mean_map.output != NULL;
}

static bool derive_has_ind(const void *rec)
{
	return ((const mk_attn_derive *)rec)->indicators.output != NULL;
}

static const mk_field derive_map_fields[] = {
	{MK_FIELD(mk_attn_derive_map, output, "output", MK_FT_STR)},
	{MK_FIELD(mk_attn_derive_map, size, "size", MK_FT_I64), .help = "M: the map is M x M"},
	{MK_FIELD(mk_attn_derive_map, samples, "samples", MK_FT_I64),
	 .help = "the samples at least M long, averaged"},
	{MK_FIELD(mk_attn_derive_map, layers, "layers", MK_FT_I64)},
};
static const mk_record derive_map_record =
	MK_RECORD("mean_map", mk_attn_derive_map, derive_map_fields);

static const mk_field derive_ind_fields[] = {
	{MK_FIELD(mk_attn_derive_ind, output, "output", MK_FT_STR)},
	{MK_FIELD(mk_attn_derive_ind, row_share, "row_share", MK_FT_REAL),
	 .help = "of the real tokens, row-wise important"},
	{MK_FIELD(mk_attn_derive_ind, col_share, "col_share", MK_FT_REAL),
	 .help = "of the real tokens, column-wise important"},
};
static const mk_record derive_ind_record =
	MK_RECORD("indicators", mk_attn_derive_ind, derive_ind_fields);

static const mk_field derive_fields[] = {
	{MK_FIELD(mk_attn_derive, mean_map, "mean_map", MK_FT_OBJ), .sub = &derive_map_record,
	 .flags = MK_FF_OMIT, .present = derive_has_map},
	{MK_FIELD(mk_attn_derive, indicators, "indicators", MK_FT_OBJ), .sub = &derive_ind_record,
	 .flags = MK_FF_OMIT, .present = derive_has_ind},
};
const mk_record mk_attn_derive_record = MK_RECORD("attn_derive", mk_attn_derive, derive_fields);
