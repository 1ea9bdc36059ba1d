/*
 * maskkit encode in one call: the encoder loaded from a model, the samples
 * made from a text (tokenised by the model's own tokenizer) or from token
 * ids, the attention maps written (encode.c, encode_h5.c) and what was
 * written summed up.
 */
#include "config.h"
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "weights.h"
#include "result.h"

#define ENC_TEXT_MAX ((uint64_t)1 << 30)

/* The directory model names, or the one its file is in. */
static int enc_model_dir(const char *model, char *buf, size_t cap)
{
	struct stat st;
	const char *slash;

	if (stat(model, &st) == 0 && S_ISDIR(st.st_mode))
		slash = model + strlen(model);
	else if (!(slash = strrchr(model, '/')))
		return snprintf(buf, cap, "."), MK_OK;
	if ((size_t)(slash - model) >= cap)
		return mk_error_set(MK_EINVAL, "'%s': path too long", model);
	snprintf(buf, cap, "%.*s", (int)(slash - model), model);
	if (!buf[0])
		snprintf(buf, cap, "/");
	return MK_OK;
}

/* The encoder: weights from model, config.json from o->config or beside them. */
static int enc_load(const mk_encode_run_opts *o, const char *model, mk_encoder **e)
{
	mk_weights *w = NULL;
	mk_model_config cfg;
	const mk_model_config *c;
	int ret;

	if ((ret = mk_weights_open(model, &w)))
		return ret;
	if (o->config) {
		if ((ret = mk_model_config_read(o->config, &cfg)))
			goto cleanup;
		c = &cfg;
	} else if (!(c = mk_weights_config(w))) {
		mk_error_set(MK_EINVAL, "'%s': no config.json beside the weights", model);
		ret = mk_error_param("config");
		goto cleanup;
	}
	ret = mk_encoder_load(w, c, o->max_memory, e);
cleanup:
	mk_weights_close(w);
	return ret;
}

/* The samples: the text tokenised (the file o->text, or given: texts in
 * memory), or the ids file. */
static int enc_samples(const mk_encode_run_opts *o, const char *model, const mk_encoder *e,
		       int64_t max_len, const mk_text_lines *given, mk_encode_ids *x)
{
	mk_tokenizer *t = NULL;
	mk_text_lines lines = {0};
	char dir[4096];
	int64_t vocab = mk_encoder_config(e)->vocab;
	int ret;

	if (o->ids && !given)
		return mk_encode_ids_read(o->ids, vocab, max_len, o->limit, o->max_memory, x);
	if ((ret = enc_model_dir(model, dir, sizeof dir)) ||
	    (ret = mk_tokenizer_open(o->tokenizer ? o->tokenizer : dir, &t)))
		goto cleanup;
	if (mk_tokenizer_vocab_size(t) > vocab) {
		ret = mk_error_set(MK_EINVAL, "the tokenizer has %" PRId64 " tokens but the model's "
				   "vocabulary %" PRId64, mk_tokenizer_vocab_size(t), vocab);
		goto cleanup;
	}
	if (!given && (ret = mk_text_lines_read(o->text, ENC_TEXT_MAX, o->sentences, &lines)))
		goto cleanup;
	ret = mk_encode_tokenize(t, given ? given : &lines, max_len, o->limit, o->max_memory, x);
	if (ret && !given)
		ret = mk_error_prefix("'%s': ", o->text);
cleanup:
	mk_text_lines_release(&lines);
	mk_tokenizer_free(t);
	return ret;
}

/* The encoder with its mask, and *max_len clamped to its positions. */
static int enc_prepare(const char *model, const mk_encode_run_opts *o, mk_encoder **e,
		       int64_t *max_len)
{
	int ret;

	if ((ret = enc_load(o, model, e)))
		return ret;
	if ((ret = mk_encoder_set_mask(*e, o->mask, o->seed)))
		return mk_error_param("mask");
	*max_len = o->max_len < mk_encoder_max_len(*e) ? o->max_len : mk_encoder_max_len(*e);
	return MK_OK;
}

int mk_encode_texts(const char *model, const char *const *texts, const size_t *lens,
		    int64_t count, const mk_encode_run_opts *o, mk_encode_maps *out)
{
	mk_encoder *e = NULL;
	mk_encode_ids x = {0};
	mk_text_lines lines = {0};
	int64_t max_len = 0;
	int ret;

	memset(out, 0, sizeof *out);
	if (o->qk || o->qk_limit > 0) {
		mk_error_set(MK_EINVAL, "queries and keys: only in a file (maskkit encode --qk)");
		return mk_error_param("qk");
	}
	if ((ret = mk_text_lines_from(texts, lens, count, o->sentences, &lines)) ||
	    (ret = enc_prepare(model, o, &e, &max_len)) ||
	    (ret = enc_samples(o, model, e, max_len, &lines, &x)))
		goto cleanup;
	ret = mk_encode_maps_make(e, &x, &(mk_encode_opts){
		.batch = o->batch, .max_len = max_len, .layout = o->layout, .dtype = o->dtype,
		.progress = o->progress, .progress_arg = o->progress_arg}, o->max_memory, out);
cleanup:
	mk_encode_ids_release(&x);
	mk_text_lines_release(&lines);
	mk_encoder_free(e);
	return ret;
}

int mk_encode_run(const char *model, const mk_encode_run_opts *o, const char *out,
		  mk_encode_summary *r)
{
	mk_encoder *e = NULL;
	mk_encode_ids x = {0};
	mk_encode_result res;
	int ret;

	memset(r, 0, sizeof *r);
	if ((ret = enc_prepare(model, o, &e, &r->max_len)) ||
	    (ret = enc_samples(o, model, e, r->max_len, NULL, &x)))
		goto cleanup;
	ret = mk_encode_write(e, &x, &(mk_encode_opts){
		.batch = o->batch, .max_len = r->max_len, .qk = o->qk || o->qk_limit > 0,
		.qk_limit = o->qk_limit, .layout = o->layout, .dtype = o->dtype, .model = model,
		.text = o->text ? o->text : o->ids, .progress = o->progress,
		.progress_arg = o->progress_arg}, out, &res);
	if (ret)
		goto cleanup;
	*r = (mk_encode_summary){.samples = x.samples, .n = x.n, .tokens = x.tokens,
				 .truncated = x.truncated, .max_len = r->max_len,
				 .seconds = res.seconds, .times = res.times, .output = out,
				 .rate = res.seconds > 0 ? (double)x.samples / res.seconds : 0.0,
				 .layout = mk_encode_layout_name(o->layout),
				 .dtype = mk_dtype_name(o->dtype == MK_DTYPE_F16 ? MK_DTYPE_F16
						       : MK_DTYPE_F32), .qk_samples = res.qk_samples};
cleanup:
	mk_encode_ids_release(&x);
	mk_encoder_free(e);
	return ret;
}

/* ---- the result, described once ------------------------------------------- */

static const mk_field enc_times_fields[] = {
	{MK_FIELD(mk_encoder_times, embed, "embeddings", MK_FT_REAL), .unit = "s"},
	{MK_FIELD(mk_encoder_times, linear, "projections", MK_FT_REAL), .unit = "s"},
	{MK_FIELD(mk_encoder_times, attention, "attention", MK_FT_REAL), .unit = "s"},
	{MK_FIELD(mk_encoder_times, norm, "norm_activation", MK_FT_REAL), .unit = "s"},
	{MK_FIELD(mk_encoder_times, callback, "writing", MK_FT_REAL), .unit = "s"},
};
static const mk_record enc_times_record =
	MK_RECORD("encode_times", mk_encoder_times, enc_times_fields);

static const mk_field enc_fields[] = {
	{MK_FIELD(mk_encode_summary, samples, "samples", MK_FT_I64)},
	{MK_FIELD(mk_encode_summary, n, "n", MK_FT_I64), .label = "N",
	 .help = "the longest sample, in tokens"},
	{MK_FIELD(mk_encode_summary, tokens, "tokens", MK_FT_I64)},
	{MK_FIELD(mk_encode_summary, truncated, "truncated", MK_FT_I64),
	 .help = "samples cut at max_len"},
	{MK_FIELD(mk_encode_summary, max_len, "max_len", MK_FT_I64)},
	{MK_FIELD(mk_encode_summary, seconds, "seconds", MK_FT_REAL), .fmt = "%.2f", .unit = "s"},
	{MK_FIELD(mk_encode_summary, rate, "sentences_per_second", MK_FT_REAL), .label = "rate",
	 .fmt = "%.1f", .unit = "samples/s"},
	{MK_FIELD(mk_encode_summary, times, "times", MK_FT_OBJ), .sub = &enc_times_record,
	 .flags = MK_FF_JSON, .help = "seconds by step"},
	{MK_FIELD(mk_encode_summary, output, "output", MK_FT_STR)},
	{MK_FIELD(mk_encode_summary, layout, "layout", MK_FT_STR),
	 .help = "padded (every sample N long) or ragged (no padding)"},
	{MK_FIELD(mk_encode_summary, dtype, "dtype", MK_FT_STR), .help = "of the stored floats"},
	{MK_FIELD(mk_encode_summary, qk_samples, "qk_samples", MK_FT_I64),
	 .help = "samples whose queries and keys were written"},
};

const mk_record mk_encode_summary_record = MK_RECORD("encode", mk_encode_summary, enc_fields);
