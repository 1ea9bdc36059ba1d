/* The WordPiece tokenizer's insides, shared by its loader (tokenizer.c) and
 * its text pipeline (wordpiece.c). */
#ifndef MK_TOKENIZER_INTERNAL_H
#define MK_TOKENIZER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "model.h"

#define TK_PREFIX_MAX 16
#define TK_ADDED_MAX 64

/* A token matched in the raw text before any normalisation (tokenizers'
 * added tokens with normalized = false, BERT's [CLS], [SEP], [MASK], ...). */
typedef struct tk_added {
	const char *s;
	size_t len;
	int32_t id;
} tk_added;

/* The vocabulary's two byte tries (tk_trie.c): root 0 every token, root 1
 * the continuations without their prefix; node arrays indexed by node. */
typedef struct tk_trie {
	int32_t root[2][256];    /* the roots' children by byte, -1: none */
	int32_t *child, *next;   /* first child, next sibling, -1: none */
	int32_t *id;             /* the token ending at the node, -1: none */
	unsigned char *byte;     /* the byte leading to the node */
	int32_t nodes;
} tk_trie;

struct mk_tokenizer {
	char *arena;          /* every token, NUL-terminated, back to back */
	size_t arena_len, arena_cap;
	char **tok;           /* id -> token (pointers into arena) */
	uint32_t *tok_len;
	int64_t size;
	uint32_t *slot;       /* open addressing: id + 1, 0 for an empty slot */
	size_t mask;          /* slots - 1 (a power of two) */
	char prefix[TK_PREFIX_MAX]; /* "##" */
	size_t prefix_len;
	int64_t max_chars;    /* longer words are [UNK] */
	int64_t max_len;      /* tokenizer.json's truncation.max_length, or 0 */
	mk_tokenizer_specials sp;
	bool clean, chinese, strip, lower; /* BertNormalizer's switches */
	tk_added added[TK_ADDED_MAX];
	int nadded;
	unsigned char added_first[256]; /* bytes that start an added token */
	tk_trie trie;
};

/* The id of pre followed by s (prelen + len bytes), or -1. */
int64_t tk_find(const mk_tokenizer *t, const char *pre, size_t prelen, const char *s,
		size_t len);

struct cJSON;

#define TK_MAX_BYTES (256u << 20) /* multilingual tokenizer.json files are a few MB */

/* tokenizer.c: the vocabulary's storage, shared with tk_json.c.  tk_alloc
 * makes room for ids 0..n-1 of bytes bytes in all; tk_set gives s the id
 * (refusing a second spelling of an id or a second id of a spelling);
 * tk_add_literal matches s literally in raw text; tk_specials finds [CLS],
 * [SEP], [UNK] (required), [PAD] and [MASK] by name; tk_bool reads a JSON
 * switch (absent or null: *v kept); tk_read_json reads a JSON object. */
int tk_alloc(mk_tokenizer *t, int64_t n, size_t bytes);
int tk_set(mk_tokenizer *t, const char *file, int64_t id, const char *s, size_t len);
int tk_add_literal(mk_tokenizer *t, const char *s, int32_t id);
int tk_specials(mk_tokenizer *t, const char *file, const char *names[5]);
int tk_bool(const struct cJSON *j, const char *file, const char *key, bool *v);
int tk_read_json(const char *file, uint64_t max, const char *what, struct cJSON **out);

/* tk_json.c: t from the tokenizer.json at file. */
int tk_open_json(mk_tokenizer *t, const char *file);

/* tk_trie.c: builds t->trie from the vocabulary (after its prefix is set). */
int tk_trie_build(mk_tokenizer *t);
/* The longest token that w[0..len) starts with, on a character boundary:
 * its id and *end its length in bytes, or -1.  cont: a continuation (the
 * prefix implied). */
int64_t tk_trie_longest(const mk_tokenizer *t, bool cont, const char *w, size_t len,
			size_t *end);
void tk_trie_release(tk_trie *r); /* zeroes it */

#endif
