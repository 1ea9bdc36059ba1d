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

struct mk_tokenizer {
	char *arena;          /* every token, NUL-terminated, back to back */
	size_t arena_len, arena_cap;
	char **tok;           /* id -> token (pointers into arena) */
	uint32_t *tok_len;
	int64_t size;
	uint32_t *slot;       /* open addressing: id + 1, 0 for an empty slot */
	size_t mask;          /* slots - 1 (a power of two) */
	size_t max_piece;     /* bytes of the longest token, without the prefix */
	char prefix[TK_PREFIX_MAX]; /* "##" */
	size_t prefix_len;
	int64_t max_chars;    /* longer words are [UNK] */
	mk_tokenizer_specials sp;
	bool clean, chinese, strip, lower; /* BertNormalizer's switches */
	tk_added added[TK_ADDED_MAX];
	int nadded;
	unsigned char added_first[256]; /* bytes that start an added token */
};

/* The id of pre followed by s (prelen + len bytes), or -1. */
int64_t tk_find(const mk_tokenizer *t, const char *pre, size_t prelen, const char *s,
		size_t len);

#endif
