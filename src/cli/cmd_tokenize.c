/*
 * maskkit tokenize: a model's WordPiece tokens of each line (or sentence) of
 * a text file, as the model's own HuggingFace tokenizer would give them:
 * the ids, or with --json the ids, the tokens and whether the text was cut
 * at --max-len.  The work is the library's (src/model/tokenizer.c,
 * wordpiece.c, text.c); this file parses, calls and prints.
 */
#include "config.h"
#include <cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

#define TOK_TEXT_MAX ((uint64_t)1 << 30)

typedef struct tok_opts {
	const char *text, *out;
	int64_t max_len;
	bool sentences, json;
} tok_opts;

static const struct cli_opt tok_table[] = {
	CLI_OPT_READ("text", 0, tok_opts, text, "FILE",
		     "the UTF-8 text, one text per line"),
	CLI_OPT_FLAG("sentences", 0, tok_opts, sentences,
		     "one text per sentence of each paragraph instead (the rule is below)"),
	CLI_OPT_INT("max-len", 0, tok_opts, max_len, "N", 2, 1 << 30, NULL,
		    "at most N ids a text, [CLS] and [SEP] included (longer texts are cut, [SEP] "
		    "kept; default: tokenizer.json's truncation max_length, else 512)"),
	CLI_OPT_FLAG("json", 0, tok_opts, json,
		     "an array of {line, lineno, ids, tokens, truncated}, one object a line"),
	CLI_OPT_WRITE("output", 'o', tok_opts, out, "FILE", "write to FILE (atomically)"),
	CLI_OPT_END,
};

typedef struct tok_run {
	const tok_opts *o;
	const mk_tokenizer *t;
	const mk_text_lines *lines;
	int32_t *ids;
	int64_t cap; /* ids' room: --max-len, or less where no text can reach it */
} tok_run;

static cJSON *tok_json(const tok_run *r, int64_t k, int64_t n, int64_t full)
{
	cJSON *x = cJSON_CreateObject(), *ids = cJSON_CreateArray(), *toks = cJSON_CreateArray();

	cJSON_AddStringToObject(x, "line", r->lines->text[k]);
	cJSON_AddNumberToObject(x, "lineno", (double)r->lines->lineno[k]);
	for (int64_t j = 0; j < n; j++) {
		cJSON_AddItemToArray(ids, cJSON_CreateNumber(r->ids[j]));
		cJSON_AddItemToArray(toks, cJSON_CreateString(mk_tokenizer_token(r->t, r->ids[j])));
	}
	cJSON_AddItemToObject(x, "ids", ids);
	cJSON_AddItemToObject(x, "tokens", toks);
	cJSON_AddBoolToObject(x, "truncated", full > n);
	return x;
}

/* One text's output; *prev is the last line number printed, so that the
 * plain output keeps a line (empty) for each blank line of the file. */
static int tok_one(const tok_run *r, FILE *f, int64_t k, int64_t *prev)
{
	const mk_text_lines *l = r->lines;
	int64_t n, full;
	int ret = mk_tokenize(r->t, l->text[k], l->len[k], r->cap, r->ids, &n, &full);

	if (ret) {
		mk_error_prefix("'%s': line %" PRId64 ": ", r->o->text, l->lineno[k]);
		return ret;
	}
	if (r->o->json) {
		cJSON *x = tok_json(r, k, n, full);
		char *s = x ? cJSON_PrintUnformatted(x) : NULL;
		cJSON_Delete(x);
		if (!s)
			return mk_error_set(MK_ENOMEM, "out of memory for the JSON output");
		fprintf(f, "%s%s", k ? ",\n" : "", s);
		free(s);
		return MK_OK;
	}
	for (; !r->o->sentences && *prev + 1 < l->lineno[k]; (*prev)++)
		fputc('\n', f);
	*prev = l->lineno[k];
	for (int64_t j = 0; j < n; j++)
		fprintf(f, "%s%" PRId32, j ? " " : "", r->ids[j]);
	fputc('\n', f);
	return MK_OK;
}

static int tok_write(void *file, void *arg)
{
	const tok_run *r = arg;
	FILE *f = file;
	int64_t prev = 0;
	int ret = MK_OK;

	if (r->o->json)
		fputs("[\n", f);
	for (int64_t k = 0; k < r->lines->count && !ret; k++)
		ret = tok_one(r, f, k, &prev);
	for (; !ret && !r->o->json && !r->o->sentences && prev < r->lines->lines; prev++)
		fputc('\n', f);
	if (!ret && r->o->json)
		fputs("\n]\n", f);
	return ret;
}

static int tok_exec(void *opts, const cli_args *a)
{
	const tok_opts *o = opts;
	mk_tokenizer *t = NULL;
	mk_text_lines lines = {0};
	tok_run r = {.o = o};
	size_t longest = 0;
	int64_t max_len;
	int ret;

	if (a->argc == 0)
		return cli_usage_error(&mk_cmd_tokenize, "missing MODEL (a model directory or its "
				       "tokenizer)");
	if (a->argc > 1)
		return cli_usage_error(&mk_cmd_tokenize, "one MODEL only, got %d operands", a->argc);
	if (!o->text)
		return cli_usage_error(&mk_cmd_tokenize, "missing --text FILE");
	if ((ret = mk_tokenizer_open(a->argv[0], &t)) ||
	    (ret = mk_text_lines_read(o->text, TOK_TEXT_MAX, o->sentences, &lines)))
		goto cleanup;
	for (int64_t k = 0; k < lines.count; k++)
		longest = lines.len[k] > longest ? lines.len[k] : longest;
	/* a text of b bytes has far fewer than 4b + 8 ids (at most one a
	 * character after NFD, which gives at most 3 characters for 2 bytes):
	 * no need for --max-len's room when the texts are short */
	/* the cut the tokenizer's own file sets, as the tokenizers library does */
	max_len = o->max_len ? o->max_len : mk_tokenizer_max_len(t) ? mk_tokenizer_max_len(t) : 512;
	r.cap = longest < (size_t)max_len / 4 && 4 * (int64_t)longest + 8 < max_len
		? 4 * (int64_t)longest + 8 : max_len;
	r.ids = malloc((size_t)r.cap * sizeof *r.ids);
	if (!r.ids) {
		ret = mk_error_set(MK_ENOMEM, "out of memory");
		goto cleanup;
	}
	r.t = t;
	r.lines = &lines;
	ret = o->out ? mk_write_atomic(o->out, tok_write, &r) : tok_write(stdout, &r);
cleanup:
	free(r.ids);
	mk_text_lines_release(&lines);
	mk_tokenizer_free(t);
	return ret;
}

const struct mk_cmd mk_cmd_tokenize = {
	.name = "tokenize",
	.summary = "a model's WordPiece token ids of each line of a text",
	.synopsis = "MODEL --text FILE [--sentences] [--max-len N] [--json] [-o FILE]",
	.opts = tok_table,
	.opts_size = sizeof(tok_opts),
	.exec = tok_exec,
	.description =
"Tokenises each line of FILE as BERT-family models do, with the model's own\n"
"vocabulary and settings: MODEL is a HuggingFace model directory (its\n"
"tokenizer.json, else its vocab.txt with tokenizer_config.json's\n"
"do_lower_case) or one of those files.  The text is cleaned (control\n"
"characters dropped, white space made spaces), CJK ideographs are split\n"
"off, accents are stripped and letters lowered for uncased models, words\n"
"are split at spaces and punctuation and cut into WordPiece pieces (\"##\"\n"
"continuations; [UNK] for a word the vocabulary cannot spell), and [CLS]\n"
"... [SEP] are put around each text: the ids of HuggingFace's tokenizers\n"
"library.  Special tokens written in the text ([MASK], [SEP], ...) are\n"
"kept as such.\n"
"\n"
"Prints one line of space-separated ids per line of FILE; a blank line of\n"
"FILE (empty, or spaces and tabs only) gives an empty line, so that output\n"
"line k belongs to input line k.  --json prints an array with one object\n"
"per non-blank line: the text (\"line\"), its line number (\"lineno\"), the\n"
"ids, the tokens and \"truncated\" (true when the text had more than N ids).\n",
	.notes =
"--sentences joins the lines of each paragraph (paragraphs are separated by\n"
"blank lines) and cuts after '.', '?' or '!' (and closing quotes or\n"
"brackets) followed by a space and an upper-case letter, a digit, a quote\n"
"or '(': one output line per sentence, and \"lineno\" is the line the\n"
"sentence starts on.  The rule is simple on purpose: \"e.g. The\" is cut too.\n"
"\n"
"FILE must be UTF-8 (the error names the line and the byte) and hold at\n"
"least one non-blank line.  A file with a CRLF line end loses the CR.\n",
	.examples =
"  maskkit tokenize ~/.cache/maskkit/all-MiniLM-L6-v2 --text notes.txt\n"
"  maskkit tokenize bert-base-uncased/vocab.txt --text book.txt --sentences --json -o tokens.json\n",
};
