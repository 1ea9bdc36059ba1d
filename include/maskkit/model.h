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
const char *mk_tokenizer_token(const mk_tokenizer *t, int64_t id); /* NULL: no such id */

/* Tokenises one text of len bytes of UTF-8 into ids: [CLS], the word
 * pieces, [SEP], truncated to at most max_len ids (>= 2; [SEP] kept last).
 * *n gets the ids written, *full (may be NULL) the count before truncation.
 * ids must hold max_len entries.  Invalid UTF-8: MK_EFORMAT naming the byte
 * offset. */
int mk_tokenize(const mk_tokenizer *t, const char *text, size_t len, int64_t max_len,
		int32_t *ids, int64_t *n, int64_t *full);

/* ---- the encoder (see below; bert.c) ---------------------------------------- */

#ifdef __cplusplus
}
#endif
#endif /* MK_MODEL_H */
