/*
 * `maskkit heads` as one call: the data set opened, the token ids and a
 * tokenizer found for the punctuation column when there are any, one pass
 * over the blocks (head_roles.c), the roles, and the rows sorted.
 */
#include "config.h"
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "core.h"
#include "data.h"
#include "model.h"
#include "tensor.h"
#include "heads.h"
#include "head_roles.h"
#include "dataset_ids.h"

#define HR_NOTE 512

void mk_head_roles_opts_init(mk_head_roles_opts *o)
{
	*o = (mk_head_roles_opts){
		.window = MK_HEAD_WINDOW, .top_p = MK_HEAD_TOP_P,
		.t = {.prev = MK_HEAD_PREV, .next = MK_HEAD_NEXT, .band = MK_HEAD_BAND,
		      .sink = MK_HEAD_SINK, .broad = MK_HEAD_BROAD}};
}

static int hr_strdup(const char *s, char **out)
{
	if (s && !(*out = strdup(s)))
		return mk_error_set(MK_ENOMEM, "out of memory");
	return MK_OK;
}

static bool hr_is_dir(const char *path)
{
	struct stat st;
	return path && *path && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The punctuation table of the tokenizer at path (*punct[id] = 1 for a
 * punctuation token), which must cover every real token id of the file. */
static int hr_punct_of(const char *file, const char *path, const int32_t *ids, int64_t cols,
		       const int64_t *len, int64_t samples, uint8_t **punct)
{
	mk_tokenizer *tk = NULL;
	int64_t vocab;
	int ret;

	if ((ret = mk_tokenizer_open(path, &tk))) {
		mk_error_prefix("tokenizer: ");
		return mk_error_param("tokenizer");
	}
	vocab = mk_tokenizer_vocab_size(tk);
	for (int64_t s = 0; s < samples && ret == MK_OK; s++)
		for (int64_t j = 0; j < len[s] && ret == MK_OK; j++) {
			int32_t id = ids[s * cols + j];
			if (id < 0 || id >= vocab) {
				mk_error_set(MK_EINVAL, "'%s': token id %" PRId32 " of sample %" PRId64
					     " is not in the tokenizer '%s' (%" PRId64 " ids)", file,
					     id, s, path, vocab);
				ret = mk_error_param("tokenizer");
			}
		}
	if (ret == MK_OK && !(*punct = malloc((size_t)vocab)))
		ret = mk_error_set(MK_ENOMEM, "out of memory");
	for (int64_t id = 0; ret == MK_OK && id < vocab; id++)
		(*punct)[id] = mk_tokenizer_is_punct(tk, id);
	mk_tokenizer_free(tk);
	return ret;
}

/* What tells punctuation apart: the file's ids and a tokenizer, the one
 * named or else the directory the file's `model` attribute names.  *punct
 * (vocabulary-sized), or NULL with r->punct_note saying why. */
static int hr_punct_table(const char *file, const mk_head_roles_opts *o, const int64_t *len,
			  int64_t samples, mk_head_roles *r, int32_t **ids, int64_t *cols,
			  uint8_t **punct)
{
	char why[HR_NOTE] = "", *model = NULL;
	const char *tk_path = o->tokenizer;
	int ret;

	*ids = NULL;
	*punct = NULL;
	if (o->no_punct)
		return hr_strdup("not asked for", &r->punct_note);
	if ((ret = mk_dataset_ids_read(file, samples, r->len_max, o->d.max_memory, ids, cols, why,
				       sizeof why)) || !*ids)
		goto out;
	if (!tk_path && (ret = mk_h5_root_text(file, "model", &model)) == MK_OK) {
		if (hr_is_dir(model))
			tk_path = model;
		else if (model)
			snprintf(why, sizeof why, "no tokenizer: the file's model attribute '%s' "
				 "is no directory here", model);
		else
			snprintf(why, sizeof why, "no tokenizer: the file names no model");
	}
	if (ret == MK_OK && tk_path &&
	    (ret = hr_punct_of(file, tk_path, *ids, *cols, len, samples, punct)) == MK_OK)
		ret = hr_strdup(tk_path, &r->punct_from);
out:
	if (ret == MK_OK && !*punct)
		ret = hr_strdup(why, &r->punct_note);
	free(model);
	return ret;
}

static void hr_lengths(const int64_t *len, int64_t samples, mk_head_roles *r)
{
	mk_attn_lengths_range(len, samples, &r->len_min, &r->len_max, &r->len_mean);
	for (int64_t s = 0; s < samples; s++)
		r->rows += (uint64_t)len[s];
}

static int hr_check(const mk_dataset_info *in, const mk_head_roles_opts *o, mk_head_roles *r)
{
	mk_head_roles none = {0};
	int ret;

	/* the cheap mistakes before the pass over the data */
	if ((ret = mk_head_roles_sort(&none, o->sort ? o->sort : "layer")))
		return ret;
	if (!in->is_float)
		return mk_error_set(MK_EINVAL, "'%s': dataset '%s' holds %s masks; heads needs "
				    "attention probabilities (float data)", in->path, in->name,
				    mk_dtype_name(in->dtype));
	if (o->window < 0) {
		mk_error_set(MK_EINVAL, "the band's width must be >= 0, got %" PRId64, o->window);
		return mk_error_param("window");
	}
	if (!(o->top_p > 0 && o->top_p <= 1)) {
		mk_error_set(MK_EINVAL, "the top-p mass must be in (0, 1], got %g", o->top_p);
		return mk_error_param("top_p");
	}
	if (r->map_size < 1 || r->map_size > r->len_max) {
		mk_error_set(MK_EINVAL, "the mean map's size %" PRId64 " is outside 1..%" PRId64
			     " (the longest sample)", r->map_size, r->len_max);
		return mk_error_param("map_size");
	}
	return MK_OK;
}

/* Every block once, in sample order; the sample's punctuation keys first. */
static int hr_pass(mk_dataset *d, mk_head_acc *a, const int32_t *ids, int64_t cols,
		   const uint8_t *punct, const mk_head_roles_opts *o, mk_head_roles *r)
{
	const int64_t *len = mk_dataset_lengths(d);
	int ret = MK_OK;

	for (int64_t s = 0; s < r->samples && ret == MK_OK; s++) {
		for (int64_t j = 0; punct && j < len[s]; j++)
			a->key_punct[j] = punct[ids[s * cols + j]];
		for (int64_t l = 0; l < r->layers && ret == MK_OK; l++) {
			mk_dataset_block b;
			if ((ret = mk_dataset_read(d, s, l, &b)) == MK_OK &&
			    (ret = mk_head_acc_add(a, &b, punct ? a->key_punct : NULL)))
				mk_error_prefix("'%s': ", r->file);
		}
		r->map_samples += len[s] >= r->map_size;
		if (o->progress)
			o->progress(s + 1, r->samples, o->parg);
	}
	return ret;
}

static int hr_rows(mk_head_roles *r)
{
	r->count = r->layers * r->heads;
	r->by_head = calloc((size_t)r->count, sizeof *r->by_head);
	r->sorted = calloc((size_t)r->count, sizeof *r->sorted);
	if (!r->by_head || !r->sorted)
		return mk_error_set(MK_ENOMEM, "out of memory");
	return MK_OK;
}

static void hr_roles(mk_head_roles *r)
{
	r->strongest_prev = -1;
	r->nroles = MK_ROLE_COUNT;
	r->roles = r->counts;
	for (int k = 0; k < MK_ROLE_COUNT; k++)
		r->counts[k] = (mk_head_role_count){.role = mk_head_role_name((mk_head_role)k)};
	for (int64_t k = 0; k < r->count; k++) {
		mk_head_row *h = &r->by_head[k];
		h->role = mk_head_classify(h, &r->t);
		h->role_name = mk_head_role_name(h->role);
		r->counts[h->role].count++;
		if (h->prev >= 0 && (r->strongest_prev < 0 ||
				     h->prev > r->by_head[r->strongest_prev].prev))
			r->strongest_prev = k;
	}
}

static int hr_open(const char *spec, const mk_head_roles_opts *o, char **file, mk_dataset **ds)
{
	mk_dataset_opts d = o->d;
	size_t flen = mk_tensor_file_len(spec);
	int ret = MK_OK;

	if (!(*file = strndup(spec, flen)))
		return mk_error_set(MK_ENOMEM, "out of memory");
	if (spec[flen] && d.dataset) {
		mk_error_set(MK_EINVAL, "'%s' names a dataset, and another is given", spec);
		return mk_error_param("dataset");
	}
	if (spec[flen])
		d.dataset = spec + flen + 1;
	d.parallel = d.collective = false;
	ret = mk_dataset_open(*file, &d, ds);
	return ret;
}

int mk_head_roles_run(const char *spec, const mk_head_roles_opts *o, mk_head_roles *out)
{
	mk_dataset *ds = NULL;
	const mk_dataset_info *in;
	mk_head_acc *a = NULL;
	int32_t *ids = NULL;
	uint8_t *punct = NULL;
	int64_t cols = 0;
	int ret;

	memset(out, 0, sizeof *out);
	if ((ret = hr_open(spec, o, &out->file, &ds)))
		goto out;
	in = mk_dataset_get_info(ds);
	*out = (mk_head_roles){.file = out->file, .dtype = mk_dtype_name(in->dtype),
			       .samples = in->samples, .layers = in->layers, .heads = in->heads,
			       .n = in->n, .window = o->window, .top_p = o->top_p, .t = o->t,
			       .sort = "layer"};
	hr_lengths(mk_dataset_lengths(ds), in->samples, out);
	out->map_size = o->map_size ? o->map_size
				    : mk_attn_median_length(in, mk_dataset_lengths(ds));
	if ((ret = hr_check(in, o, out)) || (ret = hr_strdup(in->name, &out->dataset)) ||
	    (ret = hr_strdup(in->lengths_name, &out->lengths)) ||
	    (ret = hr_punct_table(out->file, o, mk_dataset_lengths(ds), in->samples, out, &ids, &cols, &punct)) ||
	    (ret = mk_head_acc_new(in->layers, in->heads, in->n, out->map_size, o->top_p,
				   o->d.max_memory, &a)) ||
	    (ret = hr_pass(ds, a, ids, cols, punct, o, out)) || (ret = hr_rows(out)) ||
	    (ret = mk_head_acc_finish(a, out->samples, out->map_samples, o->window, punct != NULL,
				      out->by_head)))
		goto out;
	hr_roles(out);
	ret = mk_head_roles_sort(out, o->sort ? o->sort : "layer");
out:
	if (ret)
		mk_head_roles_release(out);
	mk_head_acc_free(a);
	mk_dataset_close(ds);
	free(ids);
	free(punct);
	return ret;
}

void mk_head_roles_release(mk_head_roles *r)
{
	if (!r)
		return;
	free(r->file);
	free(r->dataset);
	free(r->lengths);
	free(r->punct_from);
	free(r->punct_note);
	free(r->by_head);
	free(r->sorted);
	memset(r, 0, sizeof *r);
}
