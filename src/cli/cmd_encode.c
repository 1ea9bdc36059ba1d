/*
 * maskkit encode: runs a BERT-family encoder over the lines (or sentences)
 * of a text and writes every sample's attention probabilities, layer by
 * layer and head by head, as the data set the other commands read
 * (measure, attn-stats, prune, axis), with the queries and keys for
 * explain on request.  The work is the library's (src/model/encoder*.c,
 * encode*.c); this file parses, calls and prints.
 */
#include "config.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

typedef struct enc_opts {
	mk_encode_run_opts r; /* the library's: --text, --ids, --mask, --max-len ... */
	const char *out;
	int dtype, layout;
	bool json, quiet;
} enc_opts;

static const char *const enc_dtypes[] = {"fp32", "fp16", NULL};
static const int enc_dtype_values[] = {MK_DTYPE_F32, MK_DTYPE_F16};
static const char *const enc_layouts[] = {"padded", "ragged", NULL};
static const int enc_layout_values[] = {MK_ENCODE_PADDED, MK_ENCODE_RAGGED};

static const struct cli_opt enc_table[] = {
	CLI_OPT_READ("text", 0, enc_opts, r.text, "FILE",
		     "the UTF-8 text: one sample per non-blank line"),
	CLI_OPT_FLAG("sentences", 0, enc_opts, r.sentences,
		     "one sample per sentence of each paragraph instead (as maskkit tokenize)"),
	CLI_OPT_READ("ids", 0, enc_opts, r.ids, "FILE",
		     "token ids instead of --text: one sample per line, ids separated by spaces "
		     "(as maskkit tokenize prints them)"),
	CLI_OPT_INT("max-len", 0, enc_opts, r.max_len, "N", 2, MK_N_MAX, "128",
		    "at most N tokens a sample, [CLS] and [SEP] included (clamped to the model's "
		    "positions; longer samples are cut and counted)"),
	CLI_OPT_INT("limit", 0, enc_opts, r.limit, "K", 1, INT64_MAX / 2, NULL,
		    "the first K samples only"),
	CLI_OPT_INT("batch", 0, enc_opts, r.batch, "B", 1, 65536, "32",
		    "samples per forward pass"),
	CLI_OPT_READ_AS("mask", 0, CLI_STRING, enc_opts, r.mask, "EXPR",
		       "attend only where the mask expression, bound at each sample's length, "
		       "allows"),
	CLI_OPT_UINT("seed", 0, enc_opts, r.seed, "SEED", "0", "seed of --mask's random terms"),
	CLI_OPT_FLAG("qk", 0, enc_opts, r.qk,
		     "also write each layer's queries and keys, /qk/layer_L/{q,k}"),
	CLI_OPT_INT("qk-limit", 0, enc_opts, r.qk_limit, "K", 1, INT64_MAX / 2, NULL,
		    "queries and keys of the first K samples only (implies --qk)"),
	CLI_OPT_ENUM("dtype", 0, enc_opts, dtype, "T", enc_dtypes, enc_dtype_values, "fp32",
		     "stored floats: fp32, or fp16 (IEEE half, rounded to nearest: half the size)"),
	CLI_OPT_ENUM("layout", 0, enc_opts, layout, "LAYOUT", enc_layouts, enc_layout_values, "padded",
		     "padded (every sample N long) or ragged (no padding; see below)"),
	CLI_OPT_READ("tokenizer", 0, enc_opts, r.tokenizer, "PATH",
		     "the tokenizer (tokenizer.json, vocab.txt or their directory; default: "
		     "MODEL's directory)"),
	CLI_OPT_READ("config", 0, enc_opts, r.config, "PATH",
		     "config.json (default: the one beside the weights)"),
	CLI_OPT_SIZE("max-memory", 0, enc_opts, r.max_memory, "SIZE", "4G",
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

static int enc_check(const enc_opts *o, const cli_args *a)
{
	const struct mk_cmd *c = &mk_cmd_encode;

	if (a->argc == 0)
		return cli_usage_error(c, "missing MODEL (a model directory, or a weights file "
				       "with --tokenizer and --config)");
	if (a->argc > 1)
		return cli_usage_error(c, "one MODEL only, got %d operands", a->argc);
	if (!o->r.text == !o->r.ids)
		return cli_usage_error(c, o->r.text ? "give one of --text and --ids, not both"
						 : "missing --text FILE (or --ids FILE)");
	if (o->r.ids && (o->r.sentences || o->r.tokenizer))
		return cli_usage_error(c, "--%s goes with --text, not --ids",
				       o->r.sentences ? "sentences" : "tokenizer");
	if (!o->out)
		return cli_usage_error(c, "missing -o OUT.h5");
	/* -o over an input (the model's files among them): cli_io.c */
	return cli_check_output_dir(o->out);
}

static int enc_exec(void *opts, const cli_args *a)
{
	enc_opts *o = opts;
	mk_encode_summary r;
	bool tty = isatty(STDERR_FILENO);
	int ret;

	if ((ret = enc_check(o, a)))
		return ret;
	o->r.dtype = (mk_dtype)o->dtype;
	o->r.layout = (mk_encode_layout)o->layout;
	o->r.progress = o->quiet ? NULL : enc_progress;
	o->r.progress_arg = &tty;
	if ((ret = mk_encode_run(a->argv[0], &o->r, o->out, &r)))
		return ret;
	return mk_emit(stdout, o->json ? MK_EMIT_JSON : MK_EMIT_TEXT, &mk_encode_summary_record, &r,
		       1, MK_EMIT_NO_NOTE);
}

const struct mk_cmd mk_cmd_encode = {
	.name = "encode",
	.summary = "attention maps of a text from a BERT-family model (forward pass on the CPU)",
	.synopsis = "MODEL --text FILE [--sentences] [--max-len N] [--limit K] [--batch B]\n"
		    " [--mask EXPR] [--qk] [--qk-limit K] [--dtype fp32|fp16]\n"
		    " [--layout padded|ragged] [--json] [--quiet] -o OUT.h5\n"
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
"The output, OUT.h5, of floats float32 (or float16 with --dtype fp16), every\n"
"float dataset chunked with shuffle + deflate; with --layout padded (the\n"
"default):\n"
"  /attn      [samples, layers, heads, N, N]: sample i's P = softmax(Q K^T\n"
"             / sqrt(dk)) in its top-left len_i x len_i (row: query), zeros elsewhere;\n"
"             N is the longest sample; chunks of a (sample, layer) tile\n"
"  /qk/layer_L/q, /qk/layer_L/k   (--qk) [samples, heads, N, dk], zero-padded:\n"
"             the queries with their bias, before the 1/sqrt(dk) scaling, and the keys\n"
"with --layout ragged (no padding; attribute layout = \"ragged\"):\n"
"  /attn      [layers, T]: layer l's row holds each sample's [heads, len_i, len_i]\n"
"             in turn, sample i's at offsets[i] .. offsets[i+1]; attributes heads, n\n"
"  /offsets   int64 [samples + 1]: offsets[i+1] = offsets[i] + heads len_i^2\n"
"  /qk/layer_L/q, /qk/layer_L/k   (--qk) [tokens, heads, dk]: sample i's rows\n"
"             from the sum of the lengths before it\n"
"and in both:\n"
"  /lengths   int64 [samples]: tokens, [CLS] and [SEP] included\n"
"  /ids       int32 [samples, N]: the token ids, 0-padded\n"
"and the root's attributes model, model_type, text, layers, heads, max_len\n"
"and truncated.  measure, attn-stats, attn-derive, prune and axis read\n"
"OUT.h5 as a data set, either layout alike; explain reads one sample's\n"
"queries and keys with OUT.h5:/qk/layer_L --sample K.  --qk-limit K keeps\n"
"the queries and keys of the first K samples only (they hardly compress:\n"
"on 223 sentences of GPL-3, float32, 117 MB of the 215 MB padded file).\n"
"docs/encode.md gives each layout's size and how to read them with numpy.\n",
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
"  maskkit encode model.safetensors --config config.json --ids ids.txt --qk -o maps.h5\n"
"  maskkit encode ~/.cache/maskkit/all-MiniLM-L6-v2 --text book.txt --sentences \\\n"
"      --layout ragged --dtype fp16 -o maps.h5\n",
};
