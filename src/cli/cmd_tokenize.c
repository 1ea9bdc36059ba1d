/*
 * maskkit tokenize: a model's WordPiece tokens of each line (or sentence) of
 * a text file, as the model's own HuggingFace tokenizer would give them:
 * the ids, or with --json the ids, the tokens and whether the text was cut
 * at --max-len.  The work is the library's (src/model/tokenizer.c,
 * wordpiece.c, text.c); this file parses, calls and prints.
 */
#include "config.h"
#include "cli.h"

typedef struct tok_opts {
	mk_tokenize_opts t; /* the library's: --sentences, --max-len, --json */
	const char *text, *out;
} tok_opts;

static const struct cli_opt tok_table[] = {
	CLI_OPT_READ("text", 0, tok_opts, text, "FILE",
		     "the UTF-8 text, one text per line"),
	CLI_OPT_FLAG("sentences", 0, tok_opts, t.sentences,
		     "one text per sentence of each paragraph instead (the rule is below)"),
	CLI_OPT_INT("max-len", 0, tok_opts, t.max_len, "N", 2, 1 << 30, NULL,
		    "at most N ids a text, [CLS] and [SEP] included (longer texts are cut, [SEP] "
		    "kept; default: tokenizer.json's truncation max_length, else 512)"),
	CLI_OPT_FLAG("json", 0, tok_opts, t.json,
		     "an array of {line, lineno, ids, tokens, truncated}, one object a line"),
	CLI_OPT_WRITE("output", 'o', tok_opts, out, "FILE", "write to FILE (atomically)"),
	CLI_OPT_END,
};

static int tok_exec(void *opts, const cli_args *a)
{
	const tok_opts *o = opts;

	if (a->argc == 0)
		return cli_usage_error(&mk_cmd_tokenize, "missing MODEL (a model directory or its "
				       "tokenizer)");
	if (a->argc > 1)
		return cli_usage_error(&mk_cmd_tokenize, "one MODEL only, got %d operands", a->argc);
	if (!o->text)
		return cli_usage_error(&mk_cmd_tokenize, "missing --text FILE");
	return mk_tokenize_file(a->argv[0], o->text, &o->t, o->out ? o->out : "-");
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
