/*
 * maskkit model: HuggingFace model directories (config.json), WordPiece
 * tokenisation (tokenizer.json or vocab.txt) and a BERT-family encoder's
 * forward pass (src/model/).
 */
#ifndef MK_MODEL_H
#define MK_MODEL_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- config.json (model_config.c) ----------------------------------------- */

/* What maskkit needs of a HuggingFace config.json; 0 or "" where absent. */
typedef struct mk_model_config {
	char model_type[32];       /* "bert", "roberta", "albert", ... */
	char hidden_act[24];       /* "gelu" when absent */
	char position_embedding_type[24]; /* "absolute" when absent */
	int64_t heads;             /* num_attention_heads */
	int64_t layers;            /* num_hidden_layers */
	int64_t hidden;            /* hidden_size */
	int64_t embedding_size;    /* ALBERT's embedding_size (0: the hidden size) */
	int64_t intermediate;      /* intermediate_size */
	int64_t max_positions;     /* max_position_embeddings */
	int64_t vocab;             /* vocab_size */
	int64_t type_vocab;        /* type_vocab_size */
	int64_t pad_token_id;      /* -1 when absent */
	double layer_norm_eps;     /* 1e-12 when absent */
	char path[4096];           /* the file it was read from, for messages */
} mk_model_config;

/* Reads config.json at path (a file, or a directory holding config.json).
 * Errors (MK_EFORMAT) name the file and the key: not JSON, not an object, a
 * size that is not a positive integer, heads that do not divide the hidden
 * size.  MK_EIO when the file cannot be read. */
int mk_model_config_read(const char *path, mk_model_config *out);

/* ---- WordPiece tokens (tokenizer.c) ---------------------------------------- */

/* A BERT WordPiece tokenizer: vocabulary, unknown token, "##" continuation,
 * lower-casing and accent stripping for uncased models, CJK characters as
 * words, punctuation split off, [CLS] ... [SEP] around each text. */
typedef struct mk_tokenizer mk_tokenizer;

/* path: a model directory (its tokenizer.json, else vocab.txt with
 * tokenizer_config.json's do_lower_case), or one of those files. */
int mk_tokenizer_open(const char *path, mk_tokenizer **out);
void mk_tokenizer_free(mk_tokenizer *t); /* NULL-safe */
int64_t mk_tokenizer_vocab_size(const mk_tokenizer *t);
/* The ids a text is cut to by default: tokenizer.json's truncation
 * max_length, or 0 when it sets none (vocab.txt, "truncation": null). */
int64_t mk_tokenizer_max_len(const mk_tokenizer *t);
const char *mk_tokenizer_token(const mk_tokenizer *t, int64_t id); /* NULL: no such id */

/* Tokenises one text of len bytes of UTF-8 into ids: [CLS], the word
 * pieces, [SEP], truncated to at most max_len ids (>= 2; [SEP] kept last).
 * *n gets the ids written, *full (may be NULL) the count before truncation.
 * ids must hold max_len entries.  Invalid UTF-8: MK_EFORMAT naming the byte
 * offset. */
int mk_tokenize(const mk_tokenizer *t, const char *text, size_t len, int64_t max_len,
		int32_t *ids, int64_t *n, int64_t *full);

/* The id of a token spelled exactly (len bytes, no normalisation), or -1. */
int64_t mk_tokenizer_lookup(const mk_tokenizer *t, const char *token, size_t len);
/* The ids of the special tokens; -1 where the vocabulary has none ([PAD] is
 * optional, the others always exist in an opened tokenizer). */
typedef struct mk_tokenizer_specials {
	int32_t cls, sep, unk, pad, mask;
} mk_tokenizer_specials;
void mk_tokenizer_get_specials(const mk_tokenizer *t, mk_tokenizer_specials *out);
/* Whether token id is punctuation: every character of it is one the
 * tokenizer splits off as a word of its own (ASCII !-/ :-@ [-` {-~, Unicode P*). */
bool mk_tokenizer_is_punct(const mk_tokenizer *t, int64_t id);

/* ---- maskkit tokenize in one call (tokenize_run.c) ------------------------- */

/* One text's tokens, as --json shows them (mk_token_line_record). */
typedef struct mk_token_line {
	const char *line;           /* the text */
	int64_t lineno;             /* the 1-based line of the file it starts on */
	const int64_t *ids;         /* n of them */
	const char *const *tokens;  /* n of them */
	int64_t n;
	bool truncated;             /* it had more than max_len ids */
} mk_token_line;
extern const struct mk_record mk_token_line_record;

typedef struct mk_tokenize_opts {
	bool sentences;   /* a text per sentence (mk_text_lines_read), else per line */
	int64_t max_len;  /* ids a text at most; 0: the tokenizer's (mk_tokenizer_max_len),
			   * else 512 */
	bool json;        /* an array of mk_token_line objects, one a line */
} mk_tokenize_opts;

/* Tokenises each text of the file text with the tokenizer at path
 * (mk_tokenizer_open) and writes them to out ("-": standard output; a file
 * atomically), as they come: the ids of each separated by spaces, a line
 * each (a blank line of the file gives an empty line unless sentences), or
 * the JSON array.  Errors name the file and the line. */
int mk_tokenize_file(const char *path, const char *text, const mk_tokenize_opts *o,
		     const char *out);

/* ---- text inputs (text.c): the lines of a --text FILE ----------------------- */

/* The texts of a file: its non-blank lines, or its sentences. */
typedef struct mk_text_lines {
	char *buf;        /* owned: the texts, each NUL-terminated */
	const char **text; /* text[k]: the k-th line or sentence (no '\n', no final '\r') */
	size_t *len;      /* its length in bytes */
	int64_t *lineno;  /* the 1-based line of the file it starts on */
	int64_t count;
	int64_t lines;    /* lines in the file */
	int64_t blank;    /* blank lines (empty, or spaces and tabs only): skipped */
} mk_text_lines;

/* Reads path (at most max_bytes) as UTF-8 text.  Without sentences: one
 * text per non-blank line, the final '\r' of a CRLF line removed.  With
 * sentences: the lines of each paragraph (runs of non-blank lines) joined by
 * one space, each line's leading and trailing spaces and tabs dropped, and
 * split after '.', '?' or '!' (and any closing quotes and brackets after it)
 * followed by whitespace and then an upper-case letter, a digit, a quote or
 * '(' -- a simple rule that also splits after "e.g. The" or "Mr. Smith".
 * MK_EFORMAT for invalid UTF-8 (naming the line and the byte) and for a
 * file with no non-blank line; MK_EIO when it cannot be read. */
int mk_text_lines_read(const char *path, uint64_t max_bytes, bool sentences,
		       mk_text_lines *out);
void mk_text_lines_release(mk_text_lines *l);
/* The same from texts in memory: texts[k], lens[k] bytes of UTF-8 (NULs
 * allowed), is one text.  Without sentences each text is a sample as it
 * is (line breaks inside it are white space to the tokenizer; lineno is
 * k + 1); with sentences each text is split as a file's text is (its
 * blank lines end paragraphs, and no paragraph runs from one text into the
 * next).  MK_EINVAL naming `texts` for no text, or without sentences an
 * empty or blank one (there is no such sample in a file); MK_EFORMAT for
 * invalid UTF-8 as mk_text_lines_read, the file called 'texts'. */
int mk_text_lines_from(const char *const *texts, const size_t *lens, int64_t count,
		       bool sentences, mk_text_lines *out);

/* ---- the encoder (encoder_load.c, encoder.c, encode.c, encode_h5.c) ---------- */

/*
 * A BERT-family encoder (BERT, RoBERTa, MiniLM and the like: model_type
 * "bert", "roberta", "xlm-roberta", "camembert") run forward in float32 on
 * the CPU, keeping each layer's attention probabilities.  Refused: ALBERT
 * (shared layers, projected embeddings), an embedding_size other than the
 * hidden size, position embeddings other than "absolute", activations other
 * than gelu, gelu_new, gelu_pytorch_tanh and relu.
 */
typedef struct mk_encoder mk_encoder;
struct mk_weights;

/* Loads the weights by role from w, named as HuggingFace PyTorch checkpoints
 * name them ("embeddings.word_embeddings.weight",
 * "encoder.layer.0.attention.self.query.weight", [out, in]) or as TF/Keras
 * ones ("bert/encoder/layer_0/attention/self/query/kernel", ".../layer_._0/
 * .../kernel:0", [in, out]; LayerNorm "gamma"/"beta"), under any one prefix
 * ("bert.", "roberta.", "bert/tf_bert_model/bert/", none).  Each role must
 * match exactly one dataset and have the shape c gives (hidden, heads,
 * intermediate, layers, vocabulary, positions); a missing, duplicated or
 * misshapen tensor is an MK_EFORMAT error naming it.  max_memory bounds the
 * weights held (0: MK_DEFAULT_MAX_MEMORY). */
int mk_encoder_load(struct mk_weights *w, const mk_model_config *c, uint64_t max_memory,
		    mk_encoder **out);
void mk_encoder_free(mk_encoder *e); /* NULL-safe */
const mk_model_config *mk_encoder_config(const mk_encoder *e);
/* The longest input, in tokens: the position embeddings less RoBERTa's
 * offset of pad_token_id + 1. */
int64_t mk_encoder_max_len(const mk_encoder *e);
/* "torch" or "tf": how the checkpoint named its tensors. */
const char *mk_encoder_naming(const mk_encoder *e);

/* Restricts attention to a mask: spec is a mask expression (expr.h) bound,
 * with seed, at each sentence's length.  Masked-out entries get
 * probability 0; a query row the mask leaves with no key gets probabilities
 * 0 and a zero attention output (as the attention engine does).  NULL:
 * full attention.  MK_EINVAL for an expression that does not parse. */
int mk_encoder_set_mask(mk_encoder *e, const char *spec, uint64_t seed);

/* One layer of a batch, as mk_encoder_forward hands it over. */
typedef struct mk_encoder_layer {
	int64_t layer, count, heads, dk, hidden;
	const int64_t *len;  /* count: each sentence's length */
	const int64_t *off;  /* count: its first token's row in qkv */
	const int64_t *poff; /* count: where its probabilities start in p */
	/* sentence s, head h: the len x len probabilities (row i: query i) at
	 * p + poff[s] + h * len[s] * len[s] */
	const float *p;
	/* [tokens, 3 hidden]: each token's query (bias included, not yet scaled
	 * by 1/sqrt(dk)), key and value; head h's query at columns [h dk, (h+1) dk),
	 * its key hidden further, its value 2 hidden further */
	const float *qkv;
} mk_encoder_layer;

typedef struct mk_encoder_batch {
	int64_t count;       /* sentences */
	const int32_t *ids;  /* sentence s's ids at ids + s * stride */
	int64_t stride;
	const int64_t *len;  /* each in [1, mk_encoder_max_len] */
	/* called after each layer's attention (NULL: none); a non-zero return
	 * stops the pass and is returned */
	int (*layer)(void *arg, const mk_encoder_layer *x);
	void *arg;
	float *hidden;       /* NULL, or [tokens, hidden]: the last layer's output */
} mk_encoder_batch;

/* Seconds spent so far, by step. */
typedef struct mk_encoder_times {
	double embed;     /* embeddings and their LayerNorm */
	double linear;    /* the projections: Q/K/V, attention output, FFN (sgemm) */
	double attention; /* scores, softmax, P V (per sentence and head) */
	double norm;      /* residuals, LayerNorms, the activation */
	double callback;  /* the layer callback (writing, for maskkit encode) */
} mk_encoder_times;
void mk_encoder_get_times(const mk_encoder *e, mk_encoder_times *out);

/* Runs the batch forward: the sentences' tokens concatenated (no padding)
 * for the projections, attention per sentence and head at its own length
 * (OpenMP).  Token type 0 everywhere.  MK_EINVAL for a bad length or id,
 * MK_ENOMEM, MK_ERANGE beyond the encoder's max_memory. */
int mk_encoder_forward(mk_encoder *e, const mk_encoder_batch *b);

/* ---- maskkit encode: attention maps of a text into HDF5 (encode.c) -------- */

/* Samples of token ids, [samples, n] int32 zero-padded, with each length. */
typedef struct mk_encode_ids {
	int32_t *ids;
	int64_t *len;
	int64_t samples, n;
	int64_t tokens;    /* sum of the lengths */
	int64_t truncated; /* samples cut at max_len */
} mk_encode_ids;
void mk_encode_ids_release(mk_encode_ids *x);

/* The texts tokenised (at most limit of them; 0: all), each truncated to
 * max_len tokens; n is the longest. */
int mk_encode_tokenize(const mk_tokenizer *t, const mk_text_lines *texts, int64_t max_len,
		       int64_t limit, uint64_t max_memory, mk_encode_ids *out);
/* A file of token ids, one sample a line, separated by white space (blank
 * lines skipped); each id in [0, vocab); a line longer than max_len keeps
 * its first max_len ids.  MK_EFORMAT naming the line. */
int mk_encode_ids_read(const char *path, int64_t vocab, int64_t max_len, int64_t limit,
		       uint64_t max_memory, mk_encode_ids *out);

/* How maskkit encode lays out the maps: each sample padded to the longest,
 * or without padding (see mk_encode_write). */
typedef enum mk_encode_layout { MK_ENCODE_PADDED = 0, MK_ENCODE_RAGGED } mk_encode_layout;
/* "padded", "ragged"; "?" for a value outside the enum. */
const char *mk_encode_layout_name(mk_encode_layout l);

typedef struct mk_encode_opts {
	int64_t batch;       /* sentences per forward pass */
	int64_t max_len;     /* recorded in the file */
	bool qk;             /* also write /qk/layer_L/{q,k} */
	int64_t qk_limit;    /* with qk: of the first qk_limit samples only (0: all) */
	mk_encode_layout layout;
	mk_dtype dtype;      /* stored floats: MK_DTYPE_F32 (also for 0) or MK_DTYPE_F16 */
	const char *model, *text; /* recorded in the file */
	void (*progress)(int64_t done, int64_t total, double seconds, void *arg);
	void *progress_arg;
} mk_encode_opts;

typedef struct mk_encode_result {
	double seconds, write_seconds;
	int64_t qk_samples;  /* samples whose queries and keys were written */
	mk_encoder_times times;
} mk_encode_result;

/* Runs the samples through e batch by batch and writes, through a temporary
 * file renamed over path at the end (nothing left on failure), floats of
 * o->dtype (float32 or IEEE float16, rounded to nearest even), every float
 * dataset chunked with shuffle + deflate level 1:
 *   MK_ENCODE_PADDED:
 *   /attn     [samples, layers, heads, n, n], sample i's probabilities in
 *             its top-left len_i x len_i, zeros elsewhere; chunks of one
 *             (sample, layer)
 *   /qk/layer_L/q, /qk/layer_L/k  [samples, heads, n, dk] with qk
 *   MK_ENCODE_RAGGED (no padding):
 *   /attn     [layers, T], T = heads * sum of len_i^2: layer l's row holds
 *             each sample's [heads, len_i, len_i] block in turn, sample i's
 *             from offsets[i] to offsets[i + 1]; attributes layout =
 *             "ragged", heads, n (the longest)
 *   /offsets  int64 [samples + 1]: offsets[0] = 0, offsets[i + 1] =
 *             offsets[i] + heads len_i^2
 *   /qk/layer_L/q, /qk/layer_L/k  [tokens, heads, dk] with qk: sample i's
 *             rows from the sum of the lengths before it; attribute layout =
 *             "ragged"
 *   both:
 *   /lengths  int64 [samples]; /ids int32 [samples, n]
 * With qk_limit the queries and keys are those of the first qk_limit
 * samples (the dataset's leading axis, or its tokens, that many samples
 * long).  The root attributes: model, model_type, text (fixed-length
 * strings), layers, heads, max_len, truncated. */
int mk_encode_write(mk_encoder *e, const mk_encode_ids *x, const mk_encode_opts *o,
		    const char *path, mk_encode_result *r);

/* ---- maskkit encode in one call (encode_run.c) ----------------------------- */

typedef struct mk_encode_run_opts {
	const char *text;      /* the samples: a UTF-8 text's non-blank lines ... */
	bool sentences;        /* ... or its sentences (mk_text_lines_read) */
	const char *ids;       /* or token ids instead of text (mk_encode_ids_read) */
	const char *tokenizer; /* NULL: the model's directory */
	const char *config;    /* config.json; NULL: the one beside the weights */
	const char *mask;      /* mk_encoder_set_mask's spec, NULL: full attention */
	uint64_t seed;         /* of the mask's random terms */
	int64_t max_len;       /* tokens a sample, clamped to mk_encoder_max_len */
	int64_t limit;         /* the first limit samples (0: all) */
	int64_t batch;
	bool qk;
	int64_t qk_limit;      /* as mk_encode_opts' (qk_limit > 0 implies qk) */
	mk_encode_layout layout;
	mk_dtype dtype;
	uint64_t max_memory;
	void (*progress)(int64_t done, int64_t total, double seconds, void *arg);
	void *progress_arg;
} mk_encode_run_opts;

/* What maskkit encode wrote (mk_encode_summary_record). */
typedef struct mk_encode_summary {
	int64_t samples, n, tokens, truncated, max_len;
	double seconds, rate;   /* rate: samples a second */
	mk_encoder_times times;
	const char *output;
	const char *layout, *dtype; /* "padded" or "ragged"; "float32" or "float16" */
	int64_t qk_samples;         /* samples whose queries and keys were written */
} mk_encode_summary;

/* Loads model's encoder (a model directory, or a weights file with
 * o->config), makes the samples (o->text tokenised by the model's
 * tokenizer or o->tokenizer, or o->ids) and writes their attention maps to
 * out (mk_encode_write).  A mask that does not parse is an error of
 * parameter "mask". */
int mk_encode_run(const char *model, const mk_encode_run_opts *o, const char *out,
		  mk_encode_summary *r);
extern const struct mk_record mk_encode_summary_record;

/* ---- maskkit encode into memory (encode_mem.c, encode_run.c) --------------- */

/* What mk_encode_write's padded layout holds, in memory: /attn, /lengths,
 * /ids and the root's numeric attributes. */
typedef struct mk_encode_maps {
	void *attn;         /* [samples, layers, heads, n, n]: float (dtype MK_DTYPE_F32) or
			     * IEEE halves as uint16 (MK_DTYPE_F16); zeros past each length */
	int64_t *lengths;   /* [samples] */
	int32_t *ids;       /* [samples, n], 0-padded */
	int64_t samples, layers, heads, n;
	int64_t max_len, truncated, tokens;
	mk_dtype dtype;
	char model_type[32];
} mk_encode_maps;
void mk_encode_maps_release(mk_encode_maps *m); /* NULL-safe */

/* Runs the samples through e batch by batch, as mk_encode_write does, into
 * out: the same floats (the same forward pass, the same rounding to
 * float16) in the padded layout; the ids and lengths are copied.  o's
 * batch, dtype and max_len are read (o->qk and a ragged layout are
 * MK_EINVAL: they are the file's).  The maps' size is checked against
 * max_memory (0: MK_DEFAULT_MAX_MEMORY; MK_ERANGE naming `max_memory`)
 * before they are allocated. */
int mk_encode_maps_make(mk_encoder *e, const mk_encode_ids *x, const mk_encode_opts *o,
			uint64_t max_memory, mk_encode_maps *out);

/* mk_encode_run over texts in memory (mk_text_lines_from with o->sentences)
 * into out instead of a file: o->text and o->ids are not read; o->qk,
 * o->qk_limit and a ragged layout are refused. */
int mk_encode_texts(const char *model, const char *const *texts, const size_t *lens,
		    int64_t count, const mk_encode_run_opts *o, mk_encode_maps *out);

/* ---- one sentence's queries and keys (model_qk.c) ------------------------- */

/* The queries (bias included, before the 1/sqrt(dk) scaling) and keys of
 * every head at one layer (0-based) of a model (a directory, or a weights
 * file with config.json beside it) run over one sample of a text: its
 * non-blank line, or with `sentences` its sentence, number `sample`
 * (0-based), tokenised (tokenizer: NULL for the model's own) and cut to
 * max_len.  *out as explain.h's mk_qk_read gives it ([heads, n, dk]). */
struct mk_qk;
int mk_qk_from_model(const char *model, const char *tokenizer, const char *text,
		     bool sentences, int64_t sample, int64_t layer, int64_t max_len,
		     uint64_t max_memory, struct mk_qk *out);

#ifdef __cplusplus
}
#endif
#endif /* MK_MODEL_H */
