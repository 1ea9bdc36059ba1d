/*
 * A HuggingFace tokenizer.json read into the tokenizer (tokenizer.c holds
 * the vocabulary's storage and vocab.txt): a WordPiece model with
 * BertNormalizer and BertPreTokenizer, its added tokens by content, its
 * post-processor's ids and its truncation length.
 */
#include "config.h"
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "core.h"
#include "model.h"
#include "tokenizer_internal.h"


static const char *tk_type(const cJSON *j)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(j, "type");
	return cJSON_IsString(x) ? x->valuestring : "?";
}

/* A vocabulary of n tokens with an id of n or more has a gap below n: name
 * the first missing id, which is what the user has to fix. */
static int tk_json_gap(const char *file, const cJSON *vocab, int64_t n, const char *token,
		       int64_t id)
{
	uint8_t *seen = calloc((size_t)n, 1);
	const cJSON *x;
	int64_t missing = 0;

	if (!seen)
		return mk_error_set(MK_ENOMEM, "out of memory");
	cJSON_ArrayForEach(x, vocab)
		if (cJSON_IsNumber(x) && x->valuedouble >= 0 && x->valuedouble < (double)n)
			seen[(int64_t)x->valuedouble] = 1;
	while (missing < n && seen[missing])
		missing++;
	free(seen);
	return mk_error_set(MK_EFORMAT, "'%s': no token has the id %" PRId64 ": the %" PRId64
			    " tokens must have the ids 0 to %" PRId64 ", each once (\"%s\" has %"
			    PRId64 ")", file, missing, n, n - 1, token, id);
}

static int tk_json_vocab(mk_tokenizer *t, const char *file, const cJSON *vocab)
{
	const cJSON *x;
	int64_t n = 0;
	size_t bytes = 0;
	int ret;

	if (!cJSON_IsObject(vocab) || !vocab->child)
		return mk_error_set(MK_EFORMAT, "'%s': no \"model\".\"vocab\" object (token -> id)",
				    file);
	cJSON_ArrayForEach(x, vocab) {
		n++;
		bytes += strlen(x->string);
	}
	if (n >= INT32_MAX)
		return mk_error_set(MK_EFORMAT, "'%s': %" PRId64 " tokens, too many", file, n);
	if ((ret = tk_alloc(t, n, bytes)))
		return ret;
	cJSON_ArrayForEach(x, vocab) {
		double d = cJSON_IsNumber(x) ? x->valuedouble : NAN;
		if (!(d >= 0 && d < (double)INT32_MAX && d == floor(d)))
			return mk_error_set(MK_EFORMAT, "'%s': the id of \"%s\" is not an integer from "
					    "0", file, x->string);
		if (d >= (double)n)
			return tk_json_gap(file, vocab, n, x->string, (int64_t)d);
		if ((ret = tk_set(t, file, (int64_t)d, x->string, strlen(x->string))))
			return ret;
	}
	return MK_OK;
}

/* model: WordPiece with its unknown token, prefix and word limit. */
static int tk_json_model(mk_tokenizer *t, const char *file, const cJSON *m, const char **unk)
{
	const cJSON *pre = cJSON_GetObjectItemCaseSensitive(m, "continuing_subword_prefix");
	const cJSON *max = cJSON_GetObjectItemCaseSensitive(m, "max_input_chars_per_word");
	const cJSON *u = cJSON_GetObjectItemCaseSensitive(m, "unk_token");
	int ret;

	if (!cJSON_IsObject(m) || strcmp(tk_type(m), "WordPiece"))
		return mk_error_set(MK_EFORMAT, "'%s': the model is %s, not WordPiece (maskkit reads "
				    "BERT-style WordPiece tokenizers)", file,
				    cJSON_IsObject(m) ? tk_type(m) : "missing");
	if ((ret = tk_json_vocab(t, file, cJSON_GetObjectItemCaseSensitive(m, "vocab"))))
		return ret;
	snprintf(t->prefix, sizeof t->prefix, "##");
	if (pre && !cJSON_IsNull(pre)) {
		if (!cJSON_IsString(pre) || strlen(pre->valuestring) >= sizeof t->prefix)
			return mk_error_set(MK_EFORMAT, "'%s': \"continuing_subword_prefix\" must be a "
					    "string of at most %zu bytes", file, sizeof t->prefix - 1);
		snprintf(t->prefix, sizeof t->prefix, "%s", pre->valuestring);
	}
	t->prefix_len = strlen(t->prefix);
	t->max_chars = 100;
	if (max && !cJSON_IsNull(max)) {
		if (!cJSON_IsNumber(max) || !(max->valuedouble >= 1 && max->valuedouble <= 1e6))
			return mk_error_set(MK_EFORMAT, "'%s': \"max_input_chars_per_word\" must be an "
					    "integer in [1, 1000000]", file);
		t->max_chars = (int64_t)max->valuedouble;
	}
	*unk = cJSON_IsString(u) ? u->valuestring : "[UNK]";
	return tk_trie_build(t);
}

/* normalizer: BertNormalizer (or none); pre_tokenizer: BertPreTokenizer. */
static int tk_json_pipeline(mk_tokenizer *t, const char *file, const cJSON *j)
{
	const cJSON *norm = cJSON_GetObjectItemCaseSensitive(j, "normalizer");
	const cJSON *pre = cJSON_GetObjectItemCaseSensitive(j, "pre_tokenizer");
	int ret;

	if (norm && !cJSON_IsNull(norm)) {
		if (strcmp(tk_type(norm), "BertNormalizer"))
			return mk_error_set(MK_EFORMAT, "'%s': the normalizer is %s, not BertNormalizer",
					    file, tk_type(norm));
		t->clean = t->chinese = t->lower = true;
		if ((ret = tk_bool(norm, file, "clean_text", &t->clean)) ||
		    (ret = tk_bool(norm, file, "handle_chinese_chars", &t->chinese)) ||
		    (ret = tk_bool(norm, file, "lowercase", &t->lower)))
			return ret;
		t->strip = t->lower; /* strip_accents null follows lowercase */
		if ((ret = tk_bool(norm, file, "strip_accents", &t->strip)))
			return ret;
	}
	if (!pre || strcmp(tk_type(pre), "BertPreTokenizer"))
		return mk_error_set(MK_EFORMAT, "'%s': the pre_tokenizer is %s, not BertPreTokenizer",
				    file, pre && !cJSON_IsNull(pre) ? tk_type(pre) : "missing");
	return MK_OK;
}

/* An id the post-processor gives: a number that is an id of the
 * vocabulary, or -1 when x is none. */
static int tk_post_id(const mk_tokenizer *t, const char *file, const cJSON *x, int64_t *id)
{
	*id = -1;
	if (!x)
		return MK_OK;
	if (!cJSON_IsNumber(x) || x->valuedouble < 0 || x->valuedouble >= (double)t->size ||
	    x->valuedouble != floor(x->valuedouble))
		return mk_error_set(MK_EFORMAT, "'%s': the post_processor gives a special token an id "
				    "outside the vocabulary", file);
	*id = (int64_t)x->valuedouble;
	return MK_OK;
}

/* The ids TemplateProcessing's special_tokens give name (one id), or -1. */
static int tk_template_id(const mk_tokenizer *t, const char *file, const cJSON *p,
			  const char *name, int64_t *id)
{
	const cJSON *sp = cJSON_GetObjectItemCaseSensitive(p, "special_tokens");
	const cJSON *ids = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(sp, name), "ids");
	*id = -1;
	if (!ids)
		return MK_OK;
	if (cJSON_GetArraySize(ids) != 1)
		return mk_error_set(MK_EFORMAT, "'%s': the post_processor's \"%s\" is not one id",
				    file, name);
	return tk_post_id(t, file, cJSON_GetArrayItem(ids, 0), id);
}

/* post_processor: [CLS] A [SEP] (BertProcessing, or TemplateProcessing's
 * single template), or none (BERT's names then).  The ids it gives (its
 * own, whatever the vocabulary says) go to ids[0] and ids[1], else -1. */
static int tk_json_post(const mk_tokenizer *t, const char *file, const cJSON *j,
			const char **cls, const char **sep, int64_t ids[2])
{
	const cJSON *p = cJSON_GetObjectItemCaseSensitive(j, "post_processor"), *s;
	const char *ty = tk_type(p);
	int ret;

	ids[0] = ids[1] = -1;
	if (!p || cJSON_IsNull(p))
		return MK_OK;
	if (!strcmp(ty, "BertProcessing")) {
		const cJSON *c = cJSON_GetObjectItemCaseSensitive(p, "cls");
		s = cJSON_GetObjectItemCaseSensitive(p, "sep");
		if (cJSON_IsString(cJSON_GetArrayItem(c, 0)) && cJSON_IsString(cJSON_GetArrayItem(s, 0))) {
			*cls = cJSON_GetArrayItem(c, 0)->valuestring;
			*sep = cJSON_GetArrayItem(s, 0)->valuestring;
			if ((ret = tk_post_id(t, file, cJSON_GetArrayItem(c, 1), &ids[0])))
				return ret;
			return tk_post_id(t, file, cJSON_GetArrayItem(s, 1), &ids[1]);
		}
	} else if (!strcmp(ty, "TemplateProcessing")) {
		const cJSON *x[3], *id[3];
		s = cJSON_GetObjectItemCaseSensitive(p, "single");
		for (int k = 0; k < 3; k++) {
			x[k] = cJSON_GetArrayItem(s, k);
			x[k] = cJSON_GetObjectItemCaseSensitive(x[k], k == 1 ? "Sequence" : "SpecialToken");
			id[k] = cJSON_GetObjectItemCaseSensitive(x[k], "id");
		}
		if (cJSON_GetArraySize(s) == 3 && x[1] && cJSON_IsString(id[0]) &&
		    cJSON_IsString(id[2])) {
			*cls = id[0]->valuestring;
			*sep = id[2]->valuestring;
			if ((ret = tk_template_id(t, file, p, *cls, &ids[0])))
				return ret;
			return tk_template_id(t, file, p, *sep, &ids[1]);
		}
	}
	return mk_error_set(MK_EFORMAT, "'%s': the post_processor (%s) is not BERT's "
			    "[CLS] text [SEP]", file, ty);
}

/* added_tokens: matched in the raw text.  BERT's are not normalised; one
 * that asks for normalisation (rare in WordPiece models) is still matched in
 * the raw text. */
static int tk_json_added(mk_tokenizer *t, const char *file, const cJSON *j)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(j, "added_tokens"), *x;
	int ret;

	cJSON_ArrayForEach(x, a) {
		const cJSON *c = cJSON_GetObjectItemCaseSensitive(x, "content");
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(x, "id");
		if (!cJSON_IsString(c) || !cJSON_IsNumber(id) || id->valuedouble < 0 ||
		    id->valuedouble >= (double)t->size || id->valuedouble != floor(id->valuedouble))
			return mk_error_set(MK_EFORMAT, "'%s': an added token that is not {\"id\": an id "
					    "of the vocabulary, \"content\": a string}", file);
		/* matched by its content, whatever the vocabulary spells its id
		 * (the tokenizers library does) */
		if ((ret = tk_add_literal(t, c->valuestring, (int32_t)id->valuedouble))) {
			mk_error_prefix("'%s': ", file);
			mk_error_file(file);
			return ret;
		}
	}
	return MK_OK;
}

/* truncation: {"max_length": N, ...} or null: the default cut of a text. */
static int tk_json_truncation(mk_tokenizer *t, const char *file, const cJSON *j)
{
	const cJSON *tr = cJSON_GetObjectItemCaseSensitive(j, "truncation"), *m;

	if (!tr || cJSON_IsNull(tr))
		return MK_OK;
	m = cJSON_GetObjectItemCaseSensitive(tr, "max_length");
	if (!cJSON_IsNumber(m) || !(m->valuedouble >= 2 && m->valuedouble <= (double)(1 << 30)) ||
	    m->valuedouble != floor(m->valuedouble))
		return mk_error_set(MK_EFORMAT, "'%s': \"truncation\" needs a \"max_length\" from 2 "
				    "to 2^30", file);
	t->max_len = (int64_t)m->valuedouble;
	return MK_OK;
}

int tk_open_json(mk_tokenizer *t, const char *file)
{
	const char *unk = "[UNK]", *cls = "[CLS]", *sep = "[SEP]";
	int64_t post[2];
	cJSON *j = NULL;
	int ret;

	if ((ret = tk_read_json(file, TK_MAX_BYTES, "a tokenizer.json", &j)) ||
	    (ret = tk_json_model(t, file, cJSON_GetObjectItemCaseSensitive(j, "model"), &unk)) ||
	    (ret = tk_json_pipeline(t, file, j)) ||
	    (ret = tk_json_post(t, file, j, &cls, &sep, post)) ||
	    (ret = tk_json_added(t, file, j)) || (ret = tk_json_truncation(t, file, j)))
		goto cleanup;
	ret = tk_specials(t, file, (const char *[5]){cls, sep, unk, "[PAD]", "[MASK]"});
	/* the post-processor's ids are what the tokenizers library writes */
	if (ret == MK_OK && post[0] >= 0)
		t->sp.cls = (int32_t)post[0];
	if (ret == MK_OK && post[1] >= 0)
		t->sp.sep = (int32_t)post[1];
cleanup:
	cJSON_Delete(j);
	return ret;
}

