/*
 * maskkit encode: runs a BERT-family encoder over the lines (or sentences)
 * of a text and writes every sample's attention probabilities, layer by
 * layer and head by head, as the data set the other commands read
 * (measure, attn-stats, prune, axis), with the queries and keys for
 * explain on request.  The work is the library's (src/model/encoder*.c,
 * encode*.c); this file parses, calls and prints.
 */
#include "config.h"
#include <cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"

#define ENC_TEXT_MAX ((uint64_t)1 << 30)

typedef struct enc_opts {
	const char *text, *ids, *mask, *out, *tokenizer, *config;
	int64_t max_len, limit, batch;
	uint64_t seed, max_memory;
	bool sentences, qk, json, quiet;
} enc_opts;

static const struct cli_opt enc_table[] = {
	CLI_OPT_READ("text", 0, enc_opts, text, "FILE",
		     "the UTF-8 text: one sample per non-blank line"),
	CLI_OPT_FLAG("sentences", 0, enc_opts, sentences,
		     "one sample per sentence of each paragraph instead (as maskkit tokenize)"),
	CLI_OPT_READ("ids", 0, enc_opts, ids, "FILE",
		     "token ids instead of --text: one sample per line, ids separated by spaces "
		     "(as maskkit tokenize prints them)"),
	CLI_OPT_INT("max-len", 0, enc_opts, max_len, "N", 2, MK_N_MAX, "128",
		    "at most N tokens a sample, [CLS] and [SEP] included (clamped to the model's "
		    "positions; longer samples are cut and counted)"),
	CLI_OPT_INT("limit", 0, enc_opts, limit, "K", 1, INT64_MAX / 2, NULL,
		    "the first K samples only"),
	CLI_OPT_INT("batch", 0, enc_opts, batch, "B", 1, 65536, "32",
		    "samples per forward pass"),
	CLI_OPT_READ_AS("mask", 0, CLI_STRING, enc_opts, mask, "EXPR",
		       "attend only where the mask expression, bound at each sample's length, "
		       "allows"),
	CLI_OPT_UINT("seed", 0, enc_opts, seed, "SEED", "0", "seed of --mask's random terms"),
	CLI_OPT_FLAG("qk", 0, enc_opts, qk,
		     "also write each layer's queries and keys, /qk/layer_L/{q,k}"),
	CLI_OPT_READ("tokenizer", 0, enc_opts, tokenizer, "PATH",
		     "the tokenizer (tokenizer.json, vocab.txt or their directory; default: "
		     "MODEL's directory)"),
	CLI_OPT_READ("config", 0, enc_opts, config, "PATH",
		     "config.json (default: the one beside the weights)"),
	CLI_OPT_SIZE("max-memory", 0, enc_opts, max_memory, "SIZE", "4G",
		     "limit for the weights, a batch's buffers and the token ids"),
	CLI_OPT_FLAG("json", 0, enc_opts, json, "print a summary as JSON"),
	CLI_OPT_FLAG("quiet", 'q', enc_opts, quiet, "no progress on stderr"),
	CLI_OPT_WRITE("output", 'o', enc_opts, out, "FILE", "the HDF5 file to write (OUT.h5)"),
	CLI_OPT_END,
};

static void enc_progress(int64_t done, int64_t total, double seconds, void *arg)
{
	bool tty = *(const bool *)arg;

	/* on a terminal one line rewritten; in a log one line per batch */
	fprintf(stderr, "%smaskkit: encode: %" PRId64 "/%" PRId64 " samples, %.1f/s%s",
		tty ? "\r" : "", done, total, seconds > 0 ? (double)done / seconds : 0.0,
		tty && done < total ? "" : "\n");
}

/* The directory MODEL names, or the one its file is in. */
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

/* The encoder: weights from MODEL, config.json from --config or beside them. */
static int enc_load(const enc_opts *o, const char *model, mk_encoder **e)
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
		ret = mk_error_set(MK_EINVAL, "'%s': no config.json beside the weights (give "
				   "--config PATH)", model);
		goto cleanup;
	}
	ret = mk_encoder_load(w, c, o->max_memory, e);
cleanup:
	mk_weights_close(w);
	return ret;
}

/* The samples: the text tokenised, or the ids file. */
static int enc_samples(const enc_opts *o, const char *model, const mk_encoder *e,
		       int64_t max_len, mk_encode_ids *x)
{
	mk_tokenizer *t = NULL;
	mk_text_lines lines = {0};
	char dir[4096];
	int64_t vocab = mk_encoder_config(e)->vocab;
	int ret;

	if (o->ids)
		return mk_encode_ids_read(o->ids, vocab, max_len, o->limit, o->max_memory, x);
	if ((ret = enc_model_dir(model, dir, sizeof dir)) ||
	    (ret = mk_tokenizer_open(o->tokenizer ? o->tokenizer : dir, &t)))
		goto cleanup;
	if (mk_tokenizer_vocab_size(t) > vocab) {
		ret = mk_error_set(MK_EINVAL, "the tokenizer has %" PRId64 " tokens but the model's "
				   "vocabulary %" PRId64, mk_tokenizer_vocab_size(t), vocab);
		goto cleanup;
	}
	if ((ret = mk_text_lines_read(o->text, ENC_TEXT_MAX, o->sentences, &lines)))
		goto cleanup;
	if ((ret = mk_encode_tokenize(t, &lines, max_len, o->limit, o->max_memory, x))) {
		mk_error_prefix("'%s': ", o->text);
	}
cleanup:
	mk_text_lines_release(&lines);
	mk_tokenizer_free(t);
	return ret;
}

static int enc_json(const enc_opts *o, const mk_encode_ids *x, const mk_encode_result *r,
		    int64_t max_len)
{
	cJSON *j = cJSON_CreateObject(), *t = cJSON_CreateObject();

	cJSON_AddNumberToObject(j, "samples", (double)x->samples);
	cJSON_AddNumberToObject(j, "n", (double)x->n);
	cJSON_AddNumberToObject(j, "tokens", (double)x->tokens);
	cJSON_AddNumberToObject(j, "truncated", (double)x->truncated);
	cJSON_AddNumberToObject(j, "max_len", (double)max_len);
	cJSON_AddNumberToObject(j, "seconds", r->seconds);
	cJSON_AddNumberToObject(j, "sentences_per_second",
				r->seconds > 0 ? (double)x->samples / r->seconds : 0.0);
	cJSON_AddNumberToObject(t, "embeddings", r->times.embed);
	cJSON_AddNumberToObject(t, "projections", r->times.linear);
	cJSON_AddNumberToObject(t, "attention", r->times.attention);
	cJSON_AddNumberToObject(t, "norm_activation", r->times.norm);
	cJSON_AddNumberToObject(t, "writing", r->times.callback);
	cJSON_AddItemToObject(j, "times", t);
	cJSON_AddStringToObject(j, "output", o->out);
	return cli_json_out(j);
}

static int enc_check(const enc_opts *o, const cli_args *a)
{
	const struct mk_cmd *c = &mk_cmd_encode;

	if (a->argc == 0)
		return cli_usage_error(c, "missing MODEL (a model directory, or a weights file "
				       "with --tokenizer and --config)");
	if (a->argc > 1)
		return cli_usage_error(c, "one MODEL only, got %d operands", a->argc);
	if (!o->text == !o->ids)
		return cli_usage_error(c, o->text ? "give one of --text and --ids, not both"
					       : "missing --text FILE (or --ids FILE)");
	if (o->ids && (o->sentences || o->tokenizer))
		return cli_usage_error(c, "--%s goes with --text, not --ids",
				       o->sentences ? "sentences" : "tokenizer");
	if (!o->out)
		return cli_usage_error(c, "missing -o OUT.h5");
	/* -o over an input (the model's files among them): cli_io.c */
	return cli_check_output_dir(o->out);
}

static int enc_exec(void *opts, const cli_args *a)
{
	const enc_opts *o = opts;
	mk_encoder *e = NULL;
	mk_encode_ids x = {0};
	mk_encode_result r;
	bool tty = isatty(STDERR_FILENO);
	int64_t max_len;
	int ret;

	if ((ret = enc_check(o, a)) || (ret = enc_load(o, a->argv[0], &e)))
		goto cleanup;
	if ((ret = mk_encoder_set_mask(e, o->mask, o->seed))) /* the error names mask */
		goto cleanup;
	max_len = o->max_len < mk_encoder_max_len(e) ? o->max_len : mk_encoder_max_len(e);
	if ((ret = enc_samples(o, a->argv[0], e, max_len, &x)))
		goto cleanup;
	ret = mk_encode_write(e, &x, &(mk_encode_opts){
		.batch = o->batch, .max_len = max_len, .qk = o->qk, .model = a->argv[0],
		.text = o->text ? o->text : o->ids, .progress = o->quiet ? NULL : enc_progress,
		.progress_arg = &tty}, o->out, &r);
	if (ret)
		goto cleanup;
	if (o->json)
		ret = enc_json(o, &x, &r, max_len);
	else
		printf("%s: %" PRId64 " samples, N = %" PRId64 ", %" PRId64 " tokens, %" PRId64
		       " cut at %" PRId64 " tokens; %.2f s, %.1f samples/s\n", o->out, x.samples,
		       x.n, x.tokens, x.truncated, max_len, r.seconds,
		       r.seconds > 0 ? (double)x.samples / r.seconds : 0.0);
cleanup:
	mk_encode_ids_release(&x);
	mk_encoder_free(e);
	return ret;
}

const struct mk_cmd mk_cmd_encode = {
	.name = "encode",
	.summary = "attention maps of a text from a BERT-family model (forward pass on the CPU)",
	.synopsis = "MODEL --text FILE [--sentences] [--max-len N] [--limit K] [--batch B]\n"
		    " [--mask EXPR] [--qk] [--json] [--quiet] -o OUT.h5\n"
		    "MODEL --ids FILE [options] -o OUT.h5",
	.opts = enc_table,
	.opts_size = sizeof(enc_opts),
	.exec = enc_exec,
	.description =
"Runs a BERT-family encoder (model_type bert, roberta, xlm-roberta,\n"
"camembert: BERT, RoBERTa, MiniLM and the like) forward in float32 over each\n"
"line (or, with --sentences, each sentence) of FILE and writes every\n"
"sample's attention probabilities.  MODEL is a HuggingFace model directory\n"
"(config.json, model.safetensors or tf_model.h5, tokenizer.json or\n"
"vocab.txt), or a .safetensors or HDF5 weights file (--config and\n"
"--tokenizer when they are not beside it).  Weights are found by role under\n"
"PyTorch names (encoder.layer.0.attention.self.query.weight, any prefix\n"
"such as bert. or roberta.) or TF/Keras ones (.../layer_0/attention/self/\n"
"query/kernel), and checked against config.json.\n"
"\n"
"The output, OUT.h5:\n"
"  /attn      float32 [samples, layers, heads, N, N]: sample i's P = softmax(Q K^T\n"
"             / sqrt(dk)) in its top-left len_i x len_i (row: query), zeros elsewhere;\n"
"             N is the longest sample; chunks of a (sample, layer) tile, shuffle + deflate\n"
"  /lengths   int64 [samples]: tokens, [CLS] and [SEP] included\n"
"  /ids       int32 [samples, N]: the token ids, 0-padded\n"
"  /qk/layer_L/q, /qk/layer_L/k   (--qk) float32 [samples, heads, N, dk], zero-padded:\n"
"             the queries with their bias, before the 1/sqrt(dk) scaling, and the keys\n"
"and the root's attributes model, model_type, text, layers, heads, max_len\n"
"and truncated.  measure, attn-stats, prune and axis read OUT.h5 as a data\n"
"set; explain reads one sample's queries and keys with OUT.h5:/qk/layer_L\n"
"--sample K.\n",
	.notes =
"Each batch of samples is run at once without padding: the projections\n"
"are single sgemm calls over all the batch's tokens, attention runs per\n"
"sample and head at the sample's own length, on every OpenMP thread\n"
"(OMP_NUM_THREADS).  Every token has token type 0 and positions start at 0\n"
"(RoBERTa: at pad_token_id + 1).  With --mask, masked-out entries get\n"
"probability 0 and the rest of each row is renormalised; a query row the\n"
"mask leaves with no key gets all-zero probabilities and a zero output.\n"
"\n"
"Progress goes to stderr (samples done and the rate) unless --quiet.  The\n"
"file is written to a temporary name and renamed at the end: a failure or\n"
"an interruption leaves nothing.  ALBERT (shared layers, projected\n"
"embeddings) and relative position embeddings are refused.\n",
	.examples =
"  maskkit encode ~/.cache/maskkit/all-MiniLM-L6-v2 --text book.txt --sentences -o maps.h5\n"
"  maskkit encode model.safetensors --config config.json --ids ids.txt --qk -o maps.h5\n",
};
