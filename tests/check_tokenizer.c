/*
 * The WordPiece tokenizer (src/model/tokenizer.c, wordpiece.c) and the text
 * reader (text.c) on a tiny vocabulary written by the tests, with answers
 * worked by hand.
 */
#include "config.h"
#include <check.h>
#include <stdio.h>
#include <string.h>
#include "maskkit.h"
#include "scratchutil.h"
#include "testutil.h"

/* id = line number */
static const char *const TINY_VOCAB[] = {
	"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", ",", "!", "un",
	"##aff", "##able", "cafe", "\xe4\xb8\xad" /* 中 */, "\xe5\x9b\xbd" /* 国 */, "a", "##a",
	"the", ".", "naive", "Hello", "i", "##\xcc\x87" /* ## + U+0307 */, NULL,
};
enum { PAD, UNK, CLS, SEP, MASK, HELLO, WORLD, COMMA, BANG, UN, AFF, ABLE, CAFE, ZHONG, GUO,
       A, HASH_A, THE, DOT, NAIVE, HELLO_CASED, I, HASH_DOT };

static void write_vocab(const char *name)
{
	FILE *f = fopen(path(name), "w");
	ck_assert_ptr_nonnull(f);
	for (int k = 0; TINY_VOCAB[k]; k++)
		fprintf(f, "%s\n", TINY_VOCAB[k]);
	ck_assert_int_eq(fclose(f), 0);
}

/* A tokenizer.json with the tiny vocabulary; model, normalizer and extra
 * vocabulary text are the test's. */
static void write_json(const char *model_type, const char *normalizer, const char *extra)
{
	FILE *f = fopen(path("tokenizer.json"), "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "{\"version\": \"1.0\", \"added_tokens\": [{\"id\": 4, \"content\": \"[MASK]\"}],\n"
		   " \"normalizer\": %s,\n \"pre_tokenizer\": {\"type\": \"BertPreTokenizer\"},\n"
		   " \"post_processor\": {\"type\": \"TemplateProcessing\", \"single\": ["
		   "{\"SpecialToken\": {\"id\": \"[CLS]\", \"type_id\": 0}}, {\"Sequence\": {\"id\": \"A\"}},"
		   " {\"SpecialToken\": {\"id\": \"[SEP]\", \"type_id\": 0}}]},\n"
		   " \"model\": {\"type\": \"%s\", \"unk_token\": \"[UNK]\", "
		   "\"continuing_subword_prefix\": \"##\", \"max_input_chars_per_word\": 100, \"vocab\": {",
		normalizer, model_type);
	for (int k = 0; TINY_VOCAB[k]; k++)
		fprintf(f, "%s\"%s\": %d", k ? ", " : "", TINY_VOCAB[k], k);
	fprintf(f, "%s}}}\n", extra);
	ck_assert_int_eq(fclose(f), 0);
}

static void put_str(const char *name, const char *s)
{
	put_file(path(name), s, strlen(s));
}

static mk_tokenizer *open_txt(void)
{
	mk_tokenizer *t;
	write_vocab("vocab.txt");
	ck_assert_msg(mk_tokenizer_open(scratch, &t) == MK_OK, "%s", mk_error());
	return t;
}

/* Tokenises s and compares with the expected ids (ending in -1). */
static void expect(const mk_tokenizer *t, const char *s, int64_t max_len, const int *want)
{
	int32_t ids[512];
	int64_t n, full, m = 0;

	ck_assert_msg(mk_tokenize(t, s, strlen(s), max_len, ids, &n, &full) == MK_OK, "%s",
		      mk_error());
	while (want[m] >= 0)
		m++;
	ck_assert_msg(n == m, "'%s': %lld ids, expected %lld", s, (long long)n, (long long)m);
	for (int64_t k = 0; k < n; k++)
		ck_assert_msg(ids[k] == want[k], "'%s': id %lld is %d, expected %d", s, (long long)k,
			      ids[k], want[k]);
	ck_assert_int_ge(full, n);
}

#define EXPECT(t, s, ...) expect(t, s, 512, (const int[]){__VA_ARGS__, -1})

START_TEST(vocab_txt_basics)
{
	mk_tokenizer *t = open_txt();
	mk_tokenizer_specials sp;

	ck_assert_int_eq(mk_tokenizer_vocab_size(t), HASH_DOT + 1);
	ck_assert_str_eq(mk_tokenizer_token(t, AFF), "##aff");
	ck_assert_ptr_null(mk_tokenizer_token(t, 999));
	ck_assert_int_eq(mk_tokenizer_lookup(t, "world", 5), WORLD);
	ck_assert_int_eq(mk_tokenizer_lookup(t, "worl", 4), -1);
	mk_tokenizer_get_specials(t, &sp);
	ck_assert_int_eq(sp.cls, CLS);
	ck_assert_int_eq(sp.sep, SEP);
	ck_assert_int_eq(sp.unk, UNK);
	ck_assert_int_eq(sp.pad, PAD);
	ck_assert_int_eq(sp.mask, MASK);
	mk_tokenizer_free(t);
}
END_TEST

START_TEST(punctuation_split)
{
	mk_tokenizer *t = open_txt();
	EXPECT(t, "Hello, world!", CLS, HELLO, COMMA, WORLD, BANG, SEP);
	EXPECT(t, "hello,world!!", CLS, HELLO, COMMA, WORLD, BANG, BANG, SEP);
	EXPECT(t, "", CLS, SEP);
	mk_tokenizer_free(t);
}
END_TEST

START_TEST(accents_stripped_and_lowered)
{
	mk_tokenizer *t = open_txt();
	EXPECT(t, "Caf\xc3\xa9 NA\xc3\x8fVE", CLS, CAFE, NAIVE, SEP);    /* Café NAÏVE */
	EXPECT(t, "Cafe\xcc\x81", CLS, CAFE, SEP);                       /* e + combining acute */
	EXPECT(t, "\xc4\xb0", CLS, I, SEP); /* İ: NFD I + U+0307, the mark dropped, then lowered */
	mk_tokenizer_free(t);
}
END_TEST

START_TEST(cjk_split)
{
	mk_tokenizer *t = open_txt();
	EXPECT(t, "\xe4\xb8\xad\xe5\x9b\xbd", CLS, ZHONG, GUO, SEP);
	EXPECT(t, "a\xe4\xb8\xad\xe5\x9b\xbd" "a", CLS, A, ZHONG, GUO, A, SEP);
	mk_tokenizer_free(t);
}
END_TEST

START_TEST(wordpiece_pieces_and_unknown)
{
	mk_tokenizer *t = open_txt();
	EXPECT(t, "unaffable", CLS, UN, AFF, ABLE, SEP);
	EXPECT(t, "aaa", CLS, A, HASH_A, HASH_A, SEP);
	EXPECT(t, "unaffablex world", CLS, UNK, WORLD, SEP); /* "##x": the whole word is [UNK] */
	EXPECT(t, "zebra", CLS, UNK, SEP);
	mk_tokenizer_free(t);
}
END_TEST

START_TEST(long_word_is_unknown)
{
	mk_tokenizer *t = open_txt();
	char s[102];
	int want[104];

	memset(s, 'a', 100);
	s[100] = '\0';
	want[0] = CLS;
	want[1] = A;
	for (int k = 2; k <= 100; k++)
		want[k] = HASH_A;
	want[101] = SEP;
	want[102] = -1;
	expect(t, s, 512, want); /* 100 characters: pieces */
	s[100] = 'a';
	s[101] = '\0';
	EXPECT(t, s, CLS, UNK, SEP); /* 101: one [UNK] */
	mk_tokenizer_free(t);
}
END_TEST

START_TEST(truncation_keeps_sep)
{
	mk_tokenizer *t = open_txt();
	int32_t ids[4];
	int64_t n, full;

	ck_assert_int_eq(mk_tokenize(t, "hello world hello world", 23, 4, ids, &n, &full), MK_OK);
	ck_assert_int_eq(n, 4);
	ck_assert_int_eq(full, 6);
	ck_assert_int_eq(ids[0], CLS);
	ck_assert_int_eq(ids[1], HELLO);
	ck_assert_int_eq(ids[2], WORLD);
	ck_assert_int_eq(ids[3], SEP);
	ck_assert_int_eq(mk_tokenize(t, "hello", 5, 2, ids, &n, &full), MK_OK);
	ck_assert_int_eq(n, 2);
	ck_assert_int_eq(ids[1], SEP);
	ck_assert_int_eq(mk_tokenize(t, "hello", 5, 1, ids, &n, &full), MK_EINVAL);
	mk_tokenizer_free(t);
}
END_TEST

START_TEST(invalid_utf8_names_offset)
{
	mk_tokenizer *t = open_txt();
	int32_t ids[8];
	int64_t n;

	ck_assert_int_eq(mk_tokenize(t, "ab\xff" "c", 4, 8, ids, &n, NULL), MK_EFORMAT);
	ck_assert_msg(strstr(mk_error(), "byte offset 2"), "%s", mk_error());
	ck_assert_int_eq(mk_tokenize(t, "hello \xed\xa0\x80", 9, 8, ids, &n, NULL), MK_EFORMAT);
	ck_assert_msg(strstr(mk_error(), "byte offset 6"), "%s", mk_error()); /* a surrogate */
	mk_tokenizer_free(t);
}
END_TEST

START_TEST(control_and_white_space)
{
	mk_tokenizer *t = open_txt();
	/* tab, no-break space, ideographic space split; U+0001, U+200B (Cf),
	 * U+FFFD vanish, joining what they separated */
	EXPECT(t, "hello\tworld\xc2\xa0hello\xe3\x80\x80world", CLS, HELLO, WORLD, HELLO, WORLD, SEP);
	EXPECT(t, "hel\x01lo wor\xe2\x80\x8bld\xef\xbf\xbd", CLS, HELLO, WORLD, SEP);
	mk_tokenizer_free(t);
}
END_TEST

START_TEST(special_tokens_in_text)
{
	mk_tokenizer *t = open_txt();
	EXPECT(t, "hello [MASK] world", CLS, HELLO, MASK, WORLD, SEP);
	EXPECT(t, "hello[MASK]world", CLS, HELLO, MASK, WORLD, SEP);
	EXPECT(t, "[mask]", CLS, UNK, UNK, UNK, SEP); /* lower case: text, "[" unknown */
	mk_tokenizer_free(t);
}
END_TEST

START_TEST(tokenizer_json_cased)
{
	mk_tokenizer *t;
	write_json("WordPiece", "{\"type\": \"BertNormalizer\", \"clean_text\": true, "
		   "\"handle_chinese_chars\": true, \"strip_accents\": null, \"lowercase\": false}", "");
	ck_assert_msg(mk_tokenizer_open(scratch, &t) == MK_OK, "%s", mk_error());
	EXPECT(t, "Hello hello Caf\xc3\xa9", CLS, HELLO_CASED, HELLO, UNK, SEP);
	EXPECT(t, "hello [MASK]", CLS, HELLO, MASK, SEP);
	mk_tokenizer_free(t);
	write_json("WordPiece", "{\"type\": \"BertNormalizer\", \"lowercase\": true}", "");
	ck_assert_msg(mk_tokenizer_open(path("tokenizer.json"), &t) == MK_OK, "%s", mk_error());
	EXPECT(t, "Hello Caf\xc3\xa9", CLS, HELLO, CAFE, SEP);
	mk_tokenizer_free(t);
	/* lower case without accent stripping: İ's full lower case is "i" +
	 * U+0307 (Python's and Rust's), not utf8proc_tolower's "i" */
	write_json("WordPiece", "{\"type\": \"BertNormalizer\", \"lowercase\": true, "
		   "\"strip_accents\": false}", "");
	ck_assert_msg(mk_tokenizer_open(scratch, &t) == MK_OK, "%s", mk_error());
	EXPECT(t, "\xc4\xb0 Caf\xc3\xa9", CLS, I, HASH_DOT, UNK, SEP);
	mk_tokenizer_free(t);
}
END_TEST

START_TEST(vocab_txt_cased_config)
{
	mk_tokenizer *t;
	write_vocab("vocab.txt");
	put_str("tokenizer_config.json", "{\"do_lower_case\": false}");
	ck_assert_msg(mk_tokenizer_open(scratch, &t) == MK_OK, "%s", mk_error());
	EXPECT(t, "Hello hello", CLS, HELLO_CASED, HELLO, SEP);
	mk_tokenizer_free(t);
}
END_TEST

static void expect_refused(const char *p, int code, const char *needle)
{
	mk_tokenizer *t = NULL;
	ck_assert_int_eq(mk_tokenizer_open(p, &t), code);
	ck_assert_ptr_null(t);
	ck_assert_msg(strstr(mk_error(), needle), "'%s' lacks '%s'", mk_error(), needle);
	ck_assert_ptr_null(strchr(mk_error(), '\n'));
}

START_TEST(refusals)
{
	const char *bert = "{\"type\": \"BertNormalizer\"}";
	expect_refused(scratch, MK_EIO, "looked for tokenizer.json and vocab.txt");
	write_json("BPE", bert, "");
	expect_refused(scratch, MK_EFORMAT, "not WordPiece");
	write_json("WordPiece", "{\"type\": \"NFKC\"}", "");
	expect_refused(scratch, MK_EFORMAT, "not BertNormalizer");
	write_json("WordPiece", bert, ", \"again\": 5");
	expect_refused(scratch, MK_EFORMAT, "duplicate id 5");
	write_json("WordPiece", bert, ", \"more\": 99");
	/* the missing id is named, not only the token past the end (issue 27) */
	expect_refused(scratch, MK_EFORMAT, "no token has the id 23: the 24 tokens must have the "
		       "ids 0 to 23, each once (\"more\" has 99)");
	write_json("WordPiece", bert, ", \"more\": -1");
	expect_refused(scratch, MK_EFORMAT, "the id of \"more\" is not an integer from 0");
	put_str("tokenizer.json", "{\"model\": {\"type\": \"WordPiece\"}}");
	expect_refused(scratch, MK_EFORMAT, "no \"model\".\"vocab\"");
	put_str("tokenizer.json", "{\"model\": {\"type\": \"WordPiece\", \"vocab\": "
		"{\"[UNK]\": 0, \"[CLS]\": 1}}, \"pre_tokenizer\": {\"type\": \"BertPreTokenizer\"}}");
	expect_refused(scratch, MK_EFORMAT, "the sep token \"[SEP]\" is not in the vocabulary");
	put_str("tokenizer.json", "[1, 2]");
	expect_refused(scratch, MK_EFORMAT, "not a JSON object");
	unlink(path("tokenizer.json"));
	put_str("vocab.txt", "[UNK]\n[CLS]\n[SEP]\nx\nx\n");
	expect_refused(scratch, MK_EFORMAT, "the token \"x\" appears twice");
}
END_TEST

/* A tokenizer.json of the first seven tiny tokens with the given added
 * tokens, post-processor and top-level extra members. */
static void put_small_json(const char *added, const char *post, const char *extra)
{
	char text[2048];
	snprintf(text, sizeof text,
		 "{\"added_tokens\": [%s], \"normalizer\": {\"type\": \"BertNormalizer\"}, "
		 "\"pre_tokenizer\": {\"type\": \"BertPreTokenizer\"}, \"post_processor\": %s, "
		 "\"model\": {\"type\": \"WordPiece\", \"vocab\": {\"[PAD]\": 0, \"[UNK]\": 1, "
		 "\"[CLS]\": 2, \"[SEP]\": 3, \"[MASK]\": 4, \"hello\": 5, \"world\": 6}}%s}",
		 added, post, extra);
	put_str("tokenizer.json", text);
}

/* What the tokenizers library does (issue 27): added tokens matched by
 * their content, the post-processor's own ids, tokenizer.json's truncation
 * as the default cut, unassigned code points kept (the word is [UNK]). */
START_TEST(huggingface_semantics)
{
	mk_tokenizer *t;
	put_small_json("{\"id\": 5, \"content\": \"<greet>\"}", "null", "");
	ck_assert_msg(mk_tokenizer_open(scratch, &t) == MK_OK, "%s", mk_error());
	EXPECT(t, "<greet> world", CLS, HELLO, WORLD, SEP);
	ck_assert_int_eq(mk_tokenizer_max_len(t), 0);
	mk_tokenizer_free(t);
	put_small_json("", "{\"type\": \"TemplateProcessing\", \"single\": [{\"SpecialToken\": "
		       "{\"id\": \"[CLS]\"}}, {\"Sequence\": {\"id\": \"A\"}}, {\"SpecialToken\": "
		       "{\"id\": \"[SEP]\"}}], \"special_tokens\": {\"[CLS]\": {\"ids\": [6]}, "
		       "\"[SEP]\": {\"ids\": [5]}}}", ", \"truncation\": {\"max_length\": 4}");
	ck_assert_msg(mk_tokenizer_open(scratch, &t) == MK_OK, "%s", mk_error());
	EXPECT(t, "hello", WORLD, HELLO, HELLO);
	ck_assert_int_eq(mk_tokenizer_max_len(t), 4);
	mk_tokenizer_free(t);
	put_small_json("", "{\"type\": \"BertProcessing\", \"cls\": [\"[CLS]\", 6], "
		       "\"sep\": [\"[SEP]\", 5]}", "");
	ck_assert_msg(mk_tokenizer_open(scratch, &t) == MK_OK, "%s", mk_error());
	EXPECT(t, "world", WORLD, WORLD, HELLO);
	/* U+0378 (unassigned) and U+FDD0 (a noncharacter) stay in their words */
	EXPECT(t, "hel\xcd\xb8lo world\xef\xb7\x90", WORLD, UNK, UNK, HELLO);
	mk_tokenizer_free(t);
	/* what JSON readers disagree on is refused */
	put_small_json("", "null", ", \"truncation\": null, \"truncation\": {\"max_length\": 8}");
	expect_refused(scratch, MK_EFORMAT, "the key \"truncation\" appears twice");
	put_small_json("", "null", "} {");
	expect_refused(scratch, MK_EFORMAT, "text after the JSON value");
}
END_TEST

static mk_text_lines read_text(const char *content, bool sentences)
{
	mk_text_lines l;
	put_file(path("t.txt"), content, strlen(content));
	ck_assert_msg(mk_text_lines_read(path("t.txt"), 1 << 20, sentences, &l) == MK_OK, "%s",
		      mk_error());
	return l;
}

START_TEST(text_lines)
{
	mk_text_lines l = read_text("first\r\n\n  \t\nsecond line\nlast", false);
	ck_assert_int_eq(l.count, 3);
	ck_assert_int_eq(l.blank, 2);
	ck_assert_int_eq(l.lines, 5);
	ck_assert_str_eq(l.text[0], "first");
	ck_assert_uint_eq(l.len[0], 5);
	ck_assert_str_eq(l.text[1], "second line");
	ck_assert_int_eq(l.lineno[1], 4);
	ck_assert_str_eq(l.text[2], "last");
	ck_assert_int_eq(l.lineno[2], 5);
	mk_text_lines_release(&l);
}
END_TEST

START_TEST(text_sentences)
{
	static const char *const want[] = {
		"First one.", "Second (x) here?", "\"Quoted\" yes!", "Same paragraph e.g. lower stays.",
		"New paragraph.", "3 items.", "(Brackets.)", "\xe2\x80\x9c" "Curly.\xe2\x80\x9d", "End",
	};
	static const int64_t line[] = {1, 1, 1, 2, 4, 4, 5, 5, 5};
	mk_text_lines l = read_text("First one. Second (x) here? \"Quoted\" yes!\n"
				    "  Same paragraph e.g. lower stays.\n\n"
				    "New paragraph.  3 items.\n(Brackets.) \xe2\x80\x9c" "Curly.\xe2\x80\x9d" " End\n",
				    true);
	ck_assert_int_eq(l.count, 9);
	for (int k = 0; k < 9; k++) {
		ck_assert_str_eq(l.text[k], want[k]);
		ck_assert_uint_eq(l.len[k], strlen(want[k]));
		ck_assert_int_eq(l.lineno[k], line[k]);
	}
	mk_text_lines_release(&l);
}
END_TEST

/* Texts in memory: one sample each, or split as a file's text is. */
START_TEST(text_from_memory)
{
	static const char para[] = "One. Two (x) here?\n  Same paragraph.\n\nNew one.\r\n";
	const char *texts[3] = {"a line\nwith a break", para, "tail. Last"};
	size_t lens[3] = {20, sizeof para - 1, 10};
	mk_text_lines f = read_text(para, true), l;

	ck_assert_int_eq(mk_text_lines_from(texts, lens, 3, false, &l), MK_OK);
	ck_assert_int_eq(l.count, 3);
	ck_assert_str_eq(l.text[0], "a line\nwith a break");
	ck_assert_uint_eq(l.len[1], sizeof para - 1);
	ck_assert_int_eq(l.lineno[2], 3);
	mk_text_lines_release(&l);
	/* one text: the file's sentences; the texts' never run into each other */
	ck_assert_int_eq(mk_text_lines_from(&texts[1], &lens[1], 1, true, &l), MK_OK);
	ck_assert_int_eq(l.count, f.count);
	for (int64_t k = 0; k < f.count; k++) {
		ck_assert_str_eq(l.text[k], f.text[k]);
		ck_assert_int_eq(l.lineno[k], f.lineno[k]);
	}
	mk_text_lines_release(&l);
	ck_assert_int_eq(mk_text_lines_from(texts, lens, 3, true, &l), MK_OK);
	ck_assert_int_eq(l.count, 1 + f.count + 2);
	ck_assert_str_eq(l.text[0], "a line with a break");
	ck_assert_str_eq(l.text[1], f.text[0]);
	ck_assert_str_eq(l.text[l.count - 2], "tail.");
	mk_text_lines_release(&l);
	mk_text_lines_release(&f);
	/* no sample from a blank text, no texts, invalid UTF-8 */
	lens[0] = 0;
	ck_assert_int_eq(mk_text_lines_from(texts, lens, 3, false, &l), MK_EINVAL);
	ck_assert_str_eq(mk_error_get()->param, "texts");
	ck_assert_int_eq(mk_text_lines_from(texts, lens, 0, false, &l), MK_EINVAL);
	texts[2] = "bad \xc3(";
	lens[2] = 6;
	ck_assert_int_eq(mk_text_lines_from(&texts[2], &lens[2], 1, false, &l), MK_EFORMAT);
	ck_assert_msg(strstr(mk_error(), "line 1: invalid UTF-8 at byte 5"), "%s", mk_error());
	ck_assert_ptr_null(l.buf);
}
END_TEST

START_TEST(text_errors)
{
	mk_text_lines l;
	put_str("t.txt", "fine\nbad \xc3(\n");
	ck_assert_int_eq(mk_text_lines_read(path("t.txt"), 1 << 20, false, &l), MK_EFORMAT);
	ck_assert_msg(strstr(mk_error(), "line 2: invalid UTF-8 at byte 5 (0xc3)"), "%s", mk_error());
	put_str("t.txt", "\n \n");
	ck_assert_int_eq(mk_text_lines_read(path("t.txt"), 1 << 20, true, &l), MK_EFORMAT);
	ck_assert_msg(strstr(mk_error(), "every line is blank"), "%s", mk_error());
	put_str("t.txt", "");
	ck_assert_int_eq(mk_text_lines_read(path("t.txt"), 1 << 20, false, &l), MK_EFORMAT);
	ck_assert_msg(strstr(mk_error(), "the file is empty"), "%s", mk_error());
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tokenizer");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, scratch_setup, scratch_teardown);
	tcase_add_test(tc, vocab_txt_basics);
	tcase_add_test(tc, punctuation_split);
	tcase_add_test(tc, accents_stripped_and_lowered);
	tcase_add_test(tc, cjk_split);
	tcase_add_test(tc, wordpiece_pieces_and_unknown);
	tcase_add_test(tc, long_word_is_unknown);
	tcase_add_test(tc, truncation_keeps_sep);
	tcase_add_test(tc, invalid_utf8_names_offset);
	tcase_add_test(tc, control_and_white_space);
	tcase_add_test(tc, special_tokens_in_text);
	tcase_add_test(tc, tokenizer_json_cased);
	tcase_add_test(tc, vocab_txt_cased_config);
	tcase_add_test(tc, refusals);
	tcase_add_test(tc, huggingface_semantics);
	tcase_add_test(tc, text_lines);
	tcase_add_test(tc, text_sentences);
	tcase_add_test(tc, text_errors);
	tcase_add_test(tc, text_from_memory);
	suite_add_tcase(s, tc);
	return mk_test_main(s);
}
