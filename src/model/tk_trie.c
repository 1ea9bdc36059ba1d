/*
 * The vocabulary as two byte tries, for WordPiece's longest match: one of
 * every token (a word's first piece) and one of the continuations without
 * their prefix ("##ing" as "ing").  A match from a position walks down the
 * trie only while the word's bytes have a path, so each position costs at
 * most the longest token's length, and usually a few steps: looking up
 * every shorter candidate in a hash table instead cost the longest token's
 * length squared per position (117 s for a 10,000-letter word when a long
 * token was in the vocabulary).  The roots' children are a table of 256;
 * deeper nodes keep their children in a sibling list (few each).
 */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "core.h"
#include "model.h"
#include "tokenizer_internal.h"

static int32_t tk_trie_add_node(tk_trie *r, unsigned char byte)
{
	int32_t n = r->nodes++;
	r->child[n] = r->next[n] = -1;
	r->id[n] = -1;
	r->byte[n] = byte;
	return n;
}

/* The child of node by byte, made when make is set (-1: none). */
static int32_t tk_trie_child(tk_trie *r, int root, int32_t node, unsigned char byte, bool make)
{
	int32_t c;

	if (node < 0) {
		c = r->root[root][byte];
		if (c < 0 && make)
			c = r->root[root][byte] = tk_trie_add_node(r, byte);
		return c;
	}
	for (c = r->child[node]; c >= 0; c = r->next[c])
		if (r->byte[c] == byte)
			return c;
	if (!make)
		return -1;
	c = tk_trie_add_node(r, byte);
	r->next[c] = r->child[node];
	r->child[node] = c;
	return c;
}

static void tk_trie_insert(tk_trie *r, int root, const char *s, size_t len, int32_t id)
{
	int32_t node = -1;
	for (size_t k = 0; k < len; k++)
		node = tk_trie_child(r, root, node, (unsigned char)s[k], true);
	if (node >= 0 && r->id[node] < 0)
		r->id[node] = id;
}

int tk_trie_build(mk_tokenizer *t)
{
	tk_trie *r = &t->trie;
	size_t bytes = 0;

	tk_trie_release(r);
	for (int64_t id = 0; id < t->size; id++)
		bytes += 2 * (size_t)t->tok_len[id];
	if (bytes > INT32_MAX)
		return mk_error_set(MK_EFORMAT, "the vocabulary is too large (%zu bytes)", bytes / 2);
	r->child = malloc((bytes ? bytes : 1) * sizeof *r->child);
	r->next = malloc((bytes ? bytes : 1) * sizeof *r->next);
	r->id = malloc((bytes ? bytes : 1) * sizeof *r->id);
	r->byte = malloc(bytes ? bytes : 1);
	if (!r->child || !r->next || !r->id || !r->byte) {
		tk_trie_release(r);
		return mk_error_set(MK_ENOMEM, "out of memory for the vocabulary's trie");
	}
	memset(r->root, 0xff, sizeof r->root); /* -1 */
	for (int64_t id = 0; id < t->size; id++) {
		const char *s = t->tok[id];
		size_t len = t->tok_len[id];
		if (!s)
			continue;
		tk_trie_insert(r, 0, s, len, (int32_t)id);
		if (len > t->prefix_len && !memcmp(s, t->prefix, t->prefix_len))
			tk_trie_insert(r, 1, s + t->prefix_len, len - t->prefix_len, (int32_t)id);
	}
	return MK_OK;
}

int64_t tk_trie_longest(const mk_tokenizer *t, bool cont, const char *w, size_t len,
			size_t *end)
{
	tk_trie *r = (tk_trie *)&t->trie; /* the walk makes nothing */
	int64_t best = -1;
	int32_t node = -1;

	for (size_t k = 0; k < len; k++) {
		node = tk_trie_child(r, cont, node, (unsigned char)w[k], false);
		if (node < 0)
			break;
		/* a token ends on a character boundary of the word */
		if (r->id[node] >= 0 && (k + 1 == len || ((unsigned char)w[k + 1] & 0xc0) != 0x80)) {
			best = r->id[node];
			*end = k + 1;
		}
	}
	return best;
}

void tk_trie_release(tk_trie *r)
{
	free(r->child);
	free(r->next);
	free(r->id);
	free(r->byte);
	memset(r, 0, sizeof *r);
}
