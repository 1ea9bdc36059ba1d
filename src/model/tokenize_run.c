/*
 * maskkit tokenize in one call: a text's lines (or sentences) tokenised and
 * written as they come, the ids a line each or each text's record in a JSON
 * array, so that a large text needs no more memory than its own.
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io.h"
#include "weights.h"
#include "result.h"

#define TOK_TEXT_MAX ((uint64_t)1 << 30)

typedef struct tok_run {
	const mk_tokenize_opts *o;
	const char *text;
	const mk_tokenizer *t;
	const mk_text_lines *lines;
	int32_t *ids;
	int64_t *wide;       /* the ids as the record's numbers */
	const char **tokens;
	int64_t cap;         /* ids' room: max_len, or less where no text can reach it */
} tok_run;

/* Text k's output; *prev is the last line number written, so that the
 * plain output keeps a line (empty) for each blank line of the file. */
static int tok_one(const tok_run *r, FILE *f, int64_t k, int64_t *prev)
{
	const mk_text_lines *l = r->lines;
	int64_t n, full;
	int ret = mk_tokenize(r->t, l->text[k], l->len[k], r->cap, r->ids, &n, &full);

	if (ret)
		return mk_error_prefix("'%s': line %" PRId64 ": ", r->text, l->lineno[k]);
	if (r->o->json) {
		mk_token_line x = {.line = l->text[k], .lineno = l->lineno[k], .ids = r->wide,
				   .tokens = r->tokens, .n = n, .truncated = full > n};
		char *s;
		for (int64_t j = 0; j < n; j++) {
			r->wide[j] = r->ids[j];
			r->tokens[j] = mk_tokenizer_token(r->t, r->ids[j]);
		}
		if (!(s = mk_emit_json_text(&mk_token_line_record, &x, 1, MK_EMIT_COMPACT)))
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

int mk_tokenize_file(const char *path, const char *text, const mk_tokenize_opts *o,
		     const char *out)
{
	mk_tokenizer *t = NULL;
	mk_text_lines lines = {0};
	tok_run r = {.o = o, .text = text, .lines = &lines};
	size_t longest = 0;
	int64_t max_len;
	int ret;

	if ((ret = mk_tokenizer_open(path, &t)) ||
	    (ret = mk_text_lines_read(text, TOK_TEXT_MAX, o->sentences, &lines)))
		goto cleanup;
	for (int64_t k = 0; k < lines.count; k++)
		longest = lines.len[k] > longest ? lines.len[k] : longest;
	/* the cut the tokenizer's own file sets, as the tokenizers library does */
	max_len = o->max_len ? o->max_len : mk_tokenizer_max_len(t) ? mk_tokenizer_max_len(t) : 512;
	/* a text of b bytes has far fewer than 4b + 8 ids (at most one a
	 * character after NFD, which gives at most 3 characters for 2 bytes):
	 * no need for max_len's room when the texts are short */
	r.cap = longest < (size_t)max_len / 4 && 4 * (int64_t)longest + 8 < max_len
		? 4 * (int64_t)longest + 8 : max_len;
	r.ids = malloc((size_t)r.cap * sizeof *r.ids);
	r.wide = o->json ? malloc((size_t)r.cap * sizeof *r.wide) : NULL;
	r.tokens = o->json ? malloc((size_t)r.cap * sizeof *r.tokens) : NULL;
	if (!r.ids || (o->json && (!r.wide || !r.tokens))) {
		ret = mk_error_set(MK_ENOMEM, "out of memory");
		goto cleanup;
	}
	r.t = t;
	if (out && strcmp(out, "-"))
		ret = mk_write_atomic(out, tok_write, &r);
	else if (!(ret = tok_write(stdout, &r)) && fflush(stdout))
		ret = mk_error_set(MK_ESYS, "write error: %s", strerror(errno));
cleanup:
	free(r.ids);
	free(r.wide);
	free(r.tokens);
	mk_text_lines_release(&lines);
	mk_tokenizer_free(t);
	return ret;
}

/* ---- the result, described once ------------------------------------------- */

static const mk_field tok_fields[] = {
	{MK_FIELD(mk_token_line, line, "line", MK_FT_STR), .help = "the text"},
	{MK_FIELD(mk_token_line, lineno, "lineno", MK_FT_I64),
	 .help = "the line of the file it starts on"},
	{MK_FIELD(mk_token_line, ids, "ids", MK_FT_I64S),
	 .count_offset = offsetof(mk_token_line, n)},
	{MK_FIELD(mk_token_line, tokens, "tokens", MK_FT_STRS),
	 .count_offset = offsetof(mk_token_line, n)},
	{MK_FIELD(mk_token_line, truncated, "truncated", MK_FT_BOOL),
	 .help = "it had more than max_len ids"},
};

const mk_record mk_token_line_record = MK_RECORD("token_line", mk_token_line, tok_fields);
