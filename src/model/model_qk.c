/*
 * One sentence's queries and keys at one layer of a model, for `maskkit
 * explain MODEL --text FILE`: the text tokenised, the sentence run through
 * the encoder up to that layer, its Q (bias included, before the 1/sqrt(dk)
 * scaling, as `encode --qk` writes them) and K kept per head.
 */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "internal.h"
#include "core.h"
#include "tensor.h"
#include "weights.h"
#include "explain.h"
#include "model.h"

#define MQ_TEXT_MAX ((uint64_t)1 << 30)
#define MQ_STOP 1 /* the layer callback's "done": stops the pass early */

typedef struct mq_job {
	int64_t layer;
	mk_qk *out;
} mq_job;

static int mq_layer(void *arg, const mk_encoder_layer *x)
{
	mq_job *j = arg;
	int64_t n = x->len[0], dk = x->dk;

	if (x->layer != j->layer)
		return MK_OK;
	for (int64_t h = 0; h < x->heads; h++)
		for (int64_t i = 0; i < n; i++) {
			const float *row = x->qkv + (x->off[0] + i) * 3 * x->hidden + h * dk;
			memcpy(j->out->q.data + (h * n + i) * dk, row, (size_t)dk * sizeof(float));
			memcpy(j->out->k.data + (h * n + i) * dk, row + x->hidden,
			       (size_t)dk * sizeof(float));
		}
	return MQ_STOP;
}

/* The sample's ids: its line (or sentence) of the text, tokenised. */
static int mq_ids(const char *model, const char *tokenizer, const char *text, bool sentences,
		  int64_t sample, int64_t max_len, int32_t *ids, int64_t *n)
{
	mk_tokenizer *t = NULL;
	mk_text_lines lines = {0};
	int ret;

	char dir[4096];
	const char *slash = strrchr(model, '/');
	struct stat st;

	/* a weights file's tokenizer is beside it */
	if (!tokenizer && stat(model, &st) == 0 && !S_ISDIR(st.st_mode))
		snprintf(dir, sizeof dir, "%.*s", slash ? (slash == model ? 1 : (int)(slash - model)) : 1,
			 slash ? model : ".");
	else
		snprintf(dir, sizeof dir, "%s", tokenizer ? tokenizer : model);
	if ((ret = mk_tokenizer_open(dir, &t)) ||
	    (ret = mk_text_lines_read(text, MQ_TEXT_MAX, sentences, &lines)))
		goto cleanup;
	if (sample >= lines.count) {
		ret = mk_error_set(MK_EINVAL, "'%s' has %" PRId64 " %s: no sample %" PRId64 " (they "
				   "count from 0)", text, lines.count, sentences ? "sentences" :
				   "non-blank lines", sample);
		goto cleanup;
	}
	ret = mk_tokenize(t, lines.text[sample], lines.len[sample], max_len, ids, n, NULL);
cleanup:
	mk_text_lines_release(&lines);
	mk_tokenizer_free(t);
	return ret;
}

int mk_qk_from_model(const char *model, const char *tokenizer, const char *text,
		     bool sentences, int64_t sample, int64_t layer, int64_t max_len,
		     uint64_t max_memory, mk_qk *out)
{
	mk_weights *w = NULL;
	mk_encoder *e = NULL;
	const mk_model_config *c;
	int32_t *ids = NULL;
	int64_t n = 0;
	int ret;

	memset(out, 0, sizeof *out);
	if ((ret = mk_weights_open(model, &w)))
		return ret;
	if (!(c = mk_weights_config(w))) {
		ret = mk_error_set(MK_EINVAL, "'%s': no config.json beside the weights", model);
		goto cleanup;
	}
	if ((ret = mk_encoder_load(w, c, max_memory, &e)))
		goto cleanup;
	c = mk_encoder_config(e);
	if (layer < 0 || layer >= c->layers) {
		mk_error_set(MK_EINVAL, "layer %" PRId64 ": '%s' has %" PRId64 " layers, 0..%" PRId64,
			     layer, model, c->layers, c->layers - 1);
		ret = mk_error_param("layer");
		goto cleanup;
	}
	max_len = max_len < mk_encoder_max_len(e) ? max_len : mk_encoder_max_len(e);
	if (!(ids = malloc((size_t)max_len * sizeof *ids))) {
		ret = mk_error_set(MK_ENOMEM, "out of memory");
		goto cleanup;
	}
	if ((ret = mq_ids(model, tokenizer, text, sentences, sample, max_len, ids, &n)))
		goto cleanup;
	int64_t dims[3] = {c->heads, n, c->hidden / c->heads};
	if ((ret = mk_tensor_new(3, dims, MK_DTYPE_F32, max_memory, "the queries", &out->q)) ||
	    (ret = mk_tensor_new(3, dims, MK_DTYPE_F32, max_memory, "the keys", &out->k)))
		goto cleanup;
	mq_job j = {.layer = layer, .out = out};
	ret = mk_encoder_forward(e, &(mk_encoder_batch){.count = 1, .ids = ids, .stride = n,
							.len = &n, .layer = mq_layer, .arg = &j});
	if (ret == MQ_STOP)
		ret = MK_OK;
	out->heads = dims[0];
	out->n = n;
	out->d = dims[2];
cleanup:
	if (ret)
		mk_qk_release(out);
	free(ids);
	mk_encoder_free(e);
	mk_weights_close(w);
	return ret;
}
