/*
 * The WordPiece tokenizer's vocabulary and settings: from a HuggingFace
 * tokenizer.json (a WordPiece model with BertNormalizer and
 * BertPreTokenizer), or from a vocab.txt (one token per line, the id its line
 * number) with tokenizer_config.json's switches.  Anything else is refused
 * rather than tokenised differently from the model's own tokenizer.  The
 * text pipeline is wordpiece.c.
 */
#include "config.h"
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "internal.h"
#include "maskkit.h"
#include "tokenizer_internal.h"
#include "json_strict.h"

#define TK_MAX_BYTES (256u << 20) /* multilingual tokenizer.json files are a few MB */
#define TK_CONFIG_MAX_BYTES (4u << 20)

/* FNV-1a over pre then s: the prefix is hashed in place, so that "##" +
 * piece needs no copy. */
static uint64_t tk_hash(const char *pre, size_t prelen, const char *s, size_t len)
{
	uint64_t h = 14695981039346656037u;
	for (size_t k = 0; k < prelen; k++)
		h = (h ^ (unsigned char)pre[k]) * 1099511628211u;
	for (size_t k = 0; k < len; k++)
		h = (h ^ (unsigned char)s[k]) * 1099511628211u;
	return h;
}

int64_t tk_find(const mk_tokenizer *t, const char *pre, size_t prelen, const char *s,
		size_t len)
{
	size_t i = (size_t)tk_hash(pre, prelen, s, len) & t->mask;

	for (; t->slot[i]; i = (i + 1) & t->mask) {
		uint32_t id = t->slot[i] - 1;
		const char *x = t->tok[id];
		if (t->tok_len[id] == prelen + len && !memcmp(x, pre, prelen) &&
		    !memcmp(x + prelen, s, len))
			return id;
	}
	return -1;
}

int64_t mk_tokenizer_lookup(const mk_tokenizer *t, const char *token, size_t len)
{
	return tk_find(t, "", 0, token, len);
}

/* Room for n tokens of bytes bytes in all (ids 0..n-1, set by tk_set). */
static int tk_alloc(mk_tokenizer *t, int64_t n, size_t bytes)
{
	size_t slots = 16;

	while (slots < 2 * (size_t)n)
		slots *= 2;
	t->size = n;
	t->mask = slots - 1;
	t->arena_cap = bytes + (size_t)n;
	t->tok = calloc((size_t)n, sizeof *t->tok);
	t->tok_len = calloc((size_t)n, sizeof *t->tok_len);
	t->slot = calloc(slots, sizeof *t->slot);
	t->arena = malloc(t->arena_cap ? t->arena_cap : 1);
	if (!t->tok || !t->tok_len || !t->slot || !t->arena)
		return mk_error_set(MK_ENOMEM, "out of memory for a vocabulary of %" PRId64 " tokens",
				    n);
	return MK_OK;
}

/* Token s gets id; the caller has checked that id < size.  A second
 * spelling of one id, or a second id of one spelling, is an error. */
static int tk_set(mk_tokenizer *t, const char *file, int64_t id, const char *s, size_t len)
{
	int64_t old = tk_find(t, "", 0, s, len);
	size_t i;

	if (old >= 0)
		return mk_error_set(MK_EFORMAT, "'%s': the token \"%s\" appears twice (ids %" PRId64
				    " and %" PRId64 ")", file, s, old, id);
	if (t->tok[id])
		return mk_error_set(MK_EFORMAT, "'%s': duplicate id %" PRId64 " (\"%s\" and \"%s\")",
				    file, id, t->tok[id], s);
	if (t->arena_len + len + 1 > t->arena_cap)
		return mk_error_set(MK_EINTERNAL, "vocabulary arena overflow");
	t->tok[id] = t->arena + t->arena_len;
	memcpy(t->tok[id], s, len);
	t->tok[id][len] = '\0';
	t->arena_len += len + 1;
	t->tok_len[id] = (uint32_t)len;
	for (i = (size_t)tk_hash("", 0, s, len) & t->mask; t->slot[i]; i = (i + 1) & t->mask)
		;
	t->slot[i] = (uint32_t)id + 1;
	return MK_OK;
}

/* A literal matched in the raw text; s is copied (an added token's content
 * lives in the JSON, freed after loading). */
static int tk_add_literal(mk_tokenizer *t, const char *s, int32_t id)
{
	char *copy;
	if (!*s)
		return MK_OK;
	for (int k = 0; k < t->nadded; k++)
		if (!strcmp(t->added[k].s, s))
			return MK_OK;
	/* silently tokenising the rest as text would give other ids than the
	 * model was trained on */
	if (t->nadded == TK_ADDED_MAX)
		return mk_error_set(MK_EFORMAT, "more than %d added tokens ('%.40s' is one too many)",
				    TK_ADDED_MAX, s);
	if (!(copy = strdup(s)))
		return mk_error_set(MK_ENOMEM, "out of memory");
	t->added[t->nadded++] = (tk_added){.s = copy, .len = strlen(copy), .id = id};
	t->added_first[(unsigned char)s[0]] = 1;
	return MK_OK;
}

/* [CLS], [SEP], [UNK] must be in the vocabulary; [PAD] and [MASK] may be.
 * Each is also matched literally in the raw text, as the tokenizers library
 * and transformers' BertTokenizer do with special tokens. */
static int tk_specials(mk_tokenizer *t, const char *file, const char *names[5])
{
	int32_t *ids[5] = {&t->sp.cls, &t->sp.sep, &t->sp.unk, &t->sp.pad, &t->sp.mask};
	const char *what[5] = {"cls", "sep", "unk", "pad", "mask"};

	for (int k = 0; k < 5; k++) {
		int64_t id = mk_tokenizer_lookup(t, names[k], strlen(names[k]));
		*ids[k] = (int32_t)id;
		if (id < 0 && k < 3)
			return mk_error_set(MK_EFORMAT, "'%s': the %s token \"%s\" is not in the "
					    "vocabulary", file, what[k], names[k]);
		if (id >= 0 && tk_add_literal(t, t->tok[id], (int32_t)id)) {
			char msg[256];
			snprintf(msg, sizeof msg, "%s", mk_error());
			return mk_error_set(MK_EFORMAT, "'%s': %s", file, msg);
		}
	}
	return MK_OK;
}

/* A token name in tokenizer_config.json: a string or {"content": string}. */
static const char *tk_name(const cJSON *j, const char *key, const char *def)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(j, key);
	if (cJSON_IsObject(x))
		x = cJSON_GetObjectItemCaseSensitive(x, "content");
	return cJSON_IsString(x) && x->valuestring[0] ? x->valuestring : def;
}

/* A boolean switch: absent or null leaves *v. */
static int tk_bool(const cJSON *j, const char *file, const char *key, bool *v)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(j, key);
	if (!x || cJSON_IsNull(x))
		return MK_OK;
	if (!cJSON_IsBool(x))
		return mk_error_set(MK_EFORMAT, "'%s': \"%s\" must be true, false or null", file, key);
	*v = cJSON_IsTrue(x);
	return MK_OK;
}

static int tk_read_json(const char *file, uint64_t max, const char *what, cJSON **out)
{
	char *text = NULL;
	size_t len;
	int ret = mk_text_read(file, max, what, &text, &len);

	*out = NULL;
	if (ret)
		return ret;
	if ((ret = mk_json_parse_strict(file, text, len, out)))
		;
	else if (!cJSON_IsObject(*out))
		ret = mk_error_set(MK_EFORMAT, "'%s': not a JSON object", file);
	free(text);
	return ret;
}

/* ---- vocab.txt ---------------------------------------------------------- */

/* tokenizer_config.json beside vocab.txt, when there is one: transformers'
 * BertTokenizer switches (do_lower_case, strip_accents following it when
 * null, tokenize_chinese_chars; the text is always cleaned). */
static int tk_txt_config(mk_tokenizer *t, const char *dir, cJSON **cfg)
{
	char file[4096];
	struct stat st;
	int ret;

	t->clean = t->chinese = t->lower = t->strip = true;
	if ((size_t)snprintf(file, sizeof file, "%s/tokenizer_config.json", dir) >= sizeof file ||
	    stat(file, &st) != 0)
		return MK_OK;
	if ((ret = tk_read_json(file, TK_CONFIG_MAX_BYTES, "tokenizer_config.json", cfg)) ||
	    (ret = tk_bool(*cfg, file, "do_lower_case", &t->lower)) ||
	    (ret = tk_bool(*cfg, file, "tokenize_chinese_chars", &t->chinese)))
		return ret;
	t->strip = t->lower;
	return tk_bool(*cfg, file, "strip_accents", &t->strip);
}

static int tk_open_txt(mk_tokenizer *t, const char *file, const char *dir)
{
	cJSON *cfg = NULL;
	char *text = NULL, *p, *end;
	int64_t n = 0, line = 0;
	size_t len;
	int ret;

	if ((ret = mk_text_read(file, TK_MAX_BYTES, "vocabulary", &text, &len)))
		return ret;
	for (size_t k = 0; k < len; k++)
		n += text[k] == '\n';
	n += len && text[len - 1] != '\n';
	if (n == 0) {
		ret = mk_error_set(MK_EFORMAT, "'%s': an empty vocabulary", file);
		goto cleanup;
	}
	if ((ret = tk_alloc(t, n, len)))
		goto cleanup;
	for (p = text; p < text + len; p = end + 1, line++) {
		size_t l;
		end = memchr(p, '\n', (size_t)(text + len - p));
		if (!end)
			end = text + len;
		*end = '\0';
		l = (size_t)(end - p);
		if (l && p[l - 1] == '\r')
			p[--l] = '\0';
		if (!l) {
			ret = mk_error_set(MK_EFORMAT, "'%s': line %" PRId64 " is empty (a vocabulary "
					   "has one token per line)", file, line + 1);
			goto cleanup;
		}
		if ((ret = tk_set(t, file, line, p, l)))
			goto cleanup;
	}
	memcpy(t->prefix, "##", 3);
	t->prefix_len = 2;
	t->max_chars = 100;
	if ((ret = tk_trie_build(t)) || (ret = tk_txt_config(t, dir, &cfg)))
		goto cleanup;
	ret = tk_specials(t, file, (const char *[5]){
		tk_name(cfg, "cls_token", "[CLS]"), tk_name(cfg, "sep_token", "[SEP]"),
		tk_name(cfg, "unk_token", "[UNK]"), tk_name(cfg, "pad_token", "[PAD]"),
		tk_name(cfg, "mask_token", "[MASK]")});
cleanup:
	cJSON_Delete(cfg);
	free(text);
	return ret;
}

/* ---- tokenizer.json ------------------------------------------------------- */

static const char *tk_type(const cJSON *j)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(j, "type");
	return cJSON_IsString(x) ? x->valuestring : "?";
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
		if (!(d >= 0 && d < (double)n && d == floor(d)))
			return mk_error_set(MK_EFORMAT, "'%s': the id of \"%s\" must be an integer in "
					    "[0, %" PRId64 "] (the vocabulary has %" PRId64 " tokens)",
					    file, x->string, n - 1, n);
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

	cJSON_ArrayForEach(x, a) {
		const cJSON *c = cJSON_GetObjectItemCaseSensitive(x, "content");
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(x, "id");
		if (!cJSON_IsString(c) || !cJSON_IsNumber(id) || id->valuedouble < 0 ||
		    id->valuedouble >= (double)t->size || id->valuedouble != floor(id->valuedouble))
			return mk_error_set(MK_EFORMAT, "'%s': an added token that is not {\"id\": an id "
					    "of the vocabulary, \"content\": a string}", file);
		/* matched by its content, whatever the vocabulary spells its id
		 * (the tokenizers library does) */
		if (tk_add_literal(t, c->valuestring, (int32_t)id->valuedouble)) {
			char msg[256];
			snprintf(msg, sizeof msg, "%s", mk_error());
			return mk_error_set(MK_EFORMAT, "'%s': %s", file, msg);
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

static int tk_open_json(mk_tokenizer *t, const char *file)
{
	const char *unk = "[UNK]", *cls = "[CLS]", *sep = "[SEP]";
	int64_t post[2];
	cJSON *j = NULL;
	int ret;

	if ((ret = tk_read_json(file, TK_MAX_BYTES, "tokenizer.json", &j)) ||
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

/* ---- the public functions ------------------------------------------------ */

/* A directory: its tokenizer.json, else its vocab.txt.  A file: JSON when
 * it starts with '{', else a vocab.txt. */
static int tk_locate(const char *path, char *file, size_t cap, char *dir, size_t dcap,
		     bool *json)
{
	struct stat st;
	char head[1] = {0};
	void *fp;
	FILE *f;
	int ret, c;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(dir, dcap, "%s", path);
		if ((size_t)snprintf(file, cap, "%s/tokenizer.json", path) >= cap)
			return mk_error_set(MK_EINVAL, "'%s': path too long", path);
		*json = true;
		if (stat(file, &st) == 0)
			return MK_OK;
		snprintf(file, cap, "%s/vocab.txt", path);
		*json = false;
		if (stat(file, &st) == 0)
			return MK_OK;
		return mk_error_set(MK_EIO, "'%s': no tokenizer (looked for tokenizer.json and "
				    "vocab.txt)", path);
	}
	if ((size_t)snprintf(file, cap, "%s", path) >= cap)
		return mk_error_set(MK_EINVAL, "'%s': path too long", path);
	snprintf(dir, dcap, "%s", path);
	if (strrchr(dir, '/'))
		*strrchr(dir, '/') = '\0';
	else
		snprintf(dir, dcap, ".");
	/* mk_input_open: a FIFO named as the tokenizer is refused, not waited on */
	if ((ret = mk_input_open(path, &fp)))
		return ret;
	f = fp;
	while ((c = fgetc(f)) == ' ' || c == '\n' || c == '\t' || c == '\r')
		;
	head[0] = (char)c;
	fclose(f);
	*json = head[0] == '{';
	return MK_OK;
}

int mk_tokenizer_open(const char *path, mk_tokenizer **out)
{
	char file[4096], dir[4096];
	mk_tokenizer *t;
	bool json;
	int ret;

	*out = NULL;
	if ((ret = tk_locate(path, file, sizeof file, dir, sizeof dir, &json)))
		return ret;
	if (!(t = calloc(1, sizeof *t)))
		return mk_error_set(MK_ENOMEM, "out of memory");
	ret = json ? tk_open_json(t, file) : tk_open_txt(t, file, dir);
	if (ret) {
		mk_tokenizer_free(t);
		return ret;
	}
	*out = t;
	return MK_OK;
}

void mk_tokenizer_free(mk_tokenizer *t)
{
	if (!t)
		return;
	tk_trie_release(&t->trie);
	for (int k = 0; k < t->nadded; k++)
		free((char *)(uintptr_t)t->added[k].s);
	free(t->arena);
	free(t->tok);
	free(t->tok_len);
	free(t->slot);
	free(t);
}

int64_t mk_tokenizer_max_len(const mk_tokenizer *t)
{
	return t->max_len;
}

int64_t mk_tokenizer_vocab_size(const mk_tokenizer *t)
{
	return t->size;
}

const char *mk_tokenizer_token(const mk_tokenizer *t, int64_t id)
{
	return id >= 0 && id < t->size ? t->tok[id] : NULL;
}

void mk_tokenizer_get_specials(const mk_tokenizer *t, mk_tokenizer_specials *out)
{
	*out = t->sp;
}
