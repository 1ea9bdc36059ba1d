/*
 * A model's Toeplitz analysis in one call (what `maskkit toeplitz` does per
 * file): find and read E_P, form P = E_P E_P^T, fit all of P and its leading
 * block.  The command only names outputs, draws and prints.
 */
#include "config.h"
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core.h"
#include "tensor.h"
#include "weights.h"
#include "result.h"

/* A file whose one 2-D dataset is not named like position embeddings (an
 * .h5 holding just /pe): that dataset is E_P; asking for --dataset would
 * name the only candidate.  MK_EFORMAT (the caller keeps its own message)
 * unless there is exactly one. */
static int toep_lone(mk_weights *w, char **dataset)
{
	char **all = NULL;
	size_t count = 0;
	int ret = mk_weights_list(w, 2, NULL, &all, &count);

	if (ret == MK_OK && count == 1) {
		*dataset = all[0];
		all[0] = NULL;
	} else if (ret == MK_OK) {
		ret = MK_EFORMAT;
	}
	mk_weights_list_free(all);
	return ret;
}

/* The dataset: FILE.h5:/PATH's path, else o->dataset, else the one named
 * like position embeddings, else the file's only 2-D dataset. */
static int toep_find(mk_weights *w, const char *path, mk_toeplitz_model *r)
{
	int ret;

	if (path) {
		/* shown as a search would show it: from the root */
		size_t len = strlen(path) + 2;
		if (!(r->dataset = malloc(len)))
			return mk_error_set(MK_ENOMEM, "out of memory");
		snprintf(r->dataset, len, "%s%s", path[0] == '/' ? "" : "/", path);
		return MK_OK;
	}
	ret = mk_weights_find(w, "position_embeddings", "the position embeddings", &r->dataset);
	if (ret == MK_EFORMAT && toep_lone(w, &r->dataset) == MK_OK)
		return MK_OK;
	if (ret == MK_EFORMAT)
		ret = mk_error_param("dataset");
	return ret;
}

/* P = E E^T and its fits into r (n, d, all, first; with o->keep, p and the
 * profile, which are freed on failure or without keep).  e has >= 2 rows. */
static int toep_fit(const mk_matrix *e, const mk_toeplitz_model_opts *o, mk_toeplitz_model *r)
{
	int ret;

	r->n = e->rows;
	r->d = e->cols;
	if (o->keep && !(r->profile = malloc((size_t)(2 * e->rows - 1) * sizeof *r->profile))) {
		ret = mk_error_set(MK_ENOMEM, "out of memory for the profile");
		goto out;
	}
	if ((ret = mk_matrix_gram(e, o->max_memory, &r->p)) ||
	    (ret = mk_toeplitz_fit(r->p.data, r->p.rows, r->p.rows, true, r->profile, &r->all)))
		goto out;
	if (o->first > 1 && o->first < r->n)
		ret = mk_toeplitz_fit(r->p.data, r->p.rows, o->first, true, NULL, &r->first);
out:
	if (ret || !o->keep) {
		mk_matrix_release(&r->p);
		free(r->profile);
		r->profile = NULL;
	}
	return ret;
}

int mk_toeplitz_model_run(const char *file, const mk_toeplitz_model_opts *o,
			  mk_toeplitz_model *r)
{
	mk_weights *w = NULL;
	mk_matrix e = {0};
	size_t flen = mk_tensor_file_len(file);
	const char *path = file[flen] == ':' ? file + flen + 1 : o->dataset;
	char *name = strndup(file, flen);
	int ret;

	memset(r, 0, sizeof *r);
	r->file = file;
	if (!name) {
		ret = mk_error_set(MK_ENOMEM, "out of memory");
		goto out;
	}
	if (file[flen] == ':' && o->dataset) {
		ret = mk_error_set(MK_EINVAL, "'%s' names its dataset, and another is given",
				   file);
		ret = mk_error_param("dataset");
		goto out;
	}
	if ((ret = mk_weights_open(name, &w)) || (ret = toep_find(w, path, r)) ||
	    (ret = mk_weights_read(w, r->dataset, 2, o->max_memory, &e)))
		goto out;
	if (e.rows < 2) {
		ret = mk_error_set(MK_EFORMAT, "'%s': dataset '%s' has n = %" PRId64 " position; "
				   "the Toeplitz fit needs at least 2", file, r->dataset, e.rows);
		goto out;
	}
	/* the numerical steps do not know the file: it is named in their errors */
	if ((ret = toep_fit(&e, o, r)))
		ret = mk_error_prefix("'%s': ", file);
out:
	free(name);
	mk_matrix_release(&e);
	mk_weights_close(w);
	return ret;
}

int mk_toeplitz_model_fit(const mk_matrix *e, const mk_toeplitz_model_opts *o,
			  mk_toeplitz_model *r)
{
	memset(r, 0, sizeof *r);
	if (!e || !e->data || e->rows < 2 || e->cols < 1)
		return mk_error_set(MK_EINVAL, "E_P must be an n x d matrix with n >= 2 and d >= 1, "
				    "got %" PRId64 " x %" PRId64, e ? e->rows : 0, e ? e->cols : 0);
	/* what the file readers refuse (mk_weights_read) is refused here too */
	for (int64_t i = 0; i < e->rows; i++)
		for (int64_t j = 0; j < e->cols; j++)
			if (!isfinite(e->data[i * e->cols + j]))
				return mk_error_set(MK_EINVAL, "E_P has a non-finite value (%g) at "
						    "[%" PRId64 ", %" PRId64 "]",
						    e->data[i * e->cols + j], i, j);
	return toep_fit(e, o, r);
}

void mk_toeplitz_model_release(mk_toeplitz_model *m)
{
	if (!m)
		return;
	free(m->dataset);
	free(m->profile);
	mk_matrix_release(&m->p);
	memset(m, 0, sizeof *m);
}

/* ---- the result, described once ------------------------------------------- */

static void toep_show_shape(const void *rec, char *buf, size_t cap)
{
	const mk_toeplitz_model *m = rec;
	snprintf(buf, cap, "%" PRId64 " x %" PRId64, m->n, m->d);
}

static bool toep_has_first(const void *rec)
{
	return ((const mk_toeplitz_model *)rec)->first.k > 0;
}

static const mk_field toep_fit_fields[] = {
	{MK_FIELD(mk_toeplitz, k, "k", MK_FT_I64), .label = "K", .help = "the leading K x K block"},
	{MK_FIELD(mk_toeplitz, r2, "r2", MK_FT_REAL), .label = "R^2", .fmt = "%.9f"},
	{MK_FIELD(mk_toeplitz, rss, "rss", MK_FT_REAL), .flags = MK_FF_NOTEXT},
	{MK_FIELD(mk_toeplitz, tss, "tss", MK_FT_REAL), .flags = MK_FF_NOTEXT},
	{MK_FIELD(mk_toeplitz, mean, "mean", MK_FT_REAL), .flags = MK_FF_NOTEXT},
};
static const mk_record toep_fit_record = MK_RECORD("toeplitz_fit", mk_toeplitz, toep_fit_fields);

static const mk_field toep_fields[] = {
	{MK_FIELD(mk_toeplitz_model, file, "file", MK_FT_STR), .help = NULL},
	{MK_FIELD(mk_toeplitz_model, dataset, "dataset", MK_FT_STR)},
	{MK_FIELD(mk_toeplitz_model, n, "shape", MK_FT_I64), .label = "n x d",
	 .flags = MK_FF_TEXT, .show = toep_show_shape},
	{MK_FIELD(mk_toeplitz_model, n, "n", MK_FT_I64), .flags = MK_FF_NOTEXT,
	 .help = "positions (rows of E_P)"},
	{MK_FIELD(mk_toeplitz_model, d, "d", MK_FT_I64), .flags = MK_FF_NOTEXT,
	 .help = "embedding width (columns of E_P)"},
	{MK_FIELD(mk_toeplitz_model, all.r2, "r2", MK_FT_REAL), .label = "R^2", .fmt = "%.9f",
	 .help = "Toeplitz fit of P = E_P E_P^T"},
	{MK_FIELD(mk_toeplitz_model, all.rss, "rss", MK_FT_REAL), .label = "RSS", .fmt = "%.6e",
	 .help = NULL},
	{MK_FIELD(mk_toeplitz_model, all.tss, "tss", MK_FT_REAL), .label = "TSS", .fmt = "%.6e"},
	{MK_FIELD(mk_toeplitz_model, all.mean, "mean", MK_FT_REAL), .flags = MK_FF_NOTEXT,
	 .help = "mean of P"},
	{MK_FIELD(mk_toeplitz_model, first, "first", MK_FT_OBJ), .sub = &toep_fit_record,
	 .present = toep_has_first, .help = "the fit of the leading block, or null"},
};

const mk_record mk_toeplitz_model_record =
	MK_RECORD("toeplitz", mk_toeplitz_model, toep_fields);
