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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "internal.h"
#include "core.h"
#include "io.h"
#include "model.h"
#include "tokenizer_internal.h"
#include "json_strict.h"

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
int tk_alloc(mk_tokenizer *t, int64_t n, size_t bytes)
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
int tk_set(mk_tokenizer *t, const char *file, int64_t id, const char *s, size_t len)
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
int tk_add_literal(mk_tokenizer *t, const char *s, int32_t id)
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
int tk_specials(mk_tokenizer *t, const char *file, const char *names[5])
{
	int32_t *ids[5] = {&t->sp.cls, &t->sp.sep, &t->sp.unk, &t->sp.pad, &t->sp.mask};
	const char *what[5] = {"cls", "sep", "unk", "pad", "mask"};
	int ret;

	for (int k = 0; k < 5; k++) {
		int64_t id = mk_tokenizer_lookup(t, names[k], strlen(names[k]));
		*ids[k] = (int32_t)id;
		if (id < 0 && k < 3)
			return mk_error_set(MK_EFORMAT, "'%s': the %s token \"%s\" is not in the "
					    "vocabulary", file, what[k], names[k]);
		if (id >= 0 && (ret = tk_add_literal(t, t->tok[id], (int32_t)id))) {
			mk_error_prefix("'%s': ", file);
			mk_error_file(file);
			return ret;
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
int tk_bool(const cJSON *j, const char *file, const char *key, bool *v)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(j, key);
	if (!x || cJSON_IsNull(x))
		return MK_OK;
	if (!cJSON_IsBool(x))
		return mk_error_set(MK_EFORMAT, "'%s': \"%s\" must be true, false or null", file, key);
	*v = cJSON_IsTrue(x);
	return MK_OK;
}

int tk_read_json(const char *file, uint64_t max, const char *what, cJSON **out)
{
	char *text = NULL;
	size_t len;
	int ret = mk_file_read(file, max, what, MK_FILE_TEXT, &text, &len);

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
	if ((ret = tk_read_json(file, TK_CONFIG_MAX_BYTES, "a tokenizer_config.json", cfg)) ||
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

	if ((ret = mk_file_read(file, TK_MAX_BYTES, "a vocabulary", MK_FILE_TEXT, &text, &len)))
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
