/*
 * The texts of a --text FILE (maskkit tokenize, maskkit encode): its
 * non-blank lines, or its sentences.  The sentence rule is deliberately
 * simple and stated in model.h: it is for feeding prose to a model, not a
 * linguistic segmenter, and anyone can predict where it cuts.
 */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>
#include "internal.h"
#include "core.h"
#include "model.h"

static bool tx_blank(const char *s, size_t len)
{
	for (size_t k = 0; k < len; k++)
		if (s[k] != ' ' && s[k] != '\t')
			return false;
	return true;
}

/* Every line must be UTF-8: the error names the line and the byte in it. */
static int tx_check(const char *path, const char *s, size_t len, int64_t lineno)
{
	int32_t c;
	for (size_t k = 0; k < len;) {
		ssize_t r = utf8proc_iterate((const uint8_t *)s + k, (ssize_t)(len - k), &c);
		if (r < 0)
			return mk_error_set(MK_EFORMAT, "'%s': line %" PRId64 ": invalid UTF-8 at byte "
					    "%zu (0x%02x)", path, lineno, k + 1, (unsigned char)s[k]);
		k += (size_t)r;
	}
	return MK_OK;
}

static int tx_add(mk_text_lines *l, size_t *cap, const char *s, size_t len, int64_t lineno)
{
	if ((size_t)l->count == *cap) {
		size_t c = *cap ? 2 * *cap : 256;
		const char **t = realloc(l->text, c * sizeof *t);
		size_t *n = t ? realloc(l->len, c * sizeof *n) : NULL;
		int64_t *ln = n ? realloc(l->lineno, c * sizeof *ln) : NULL;
		if (t)
			l->text = t;
		if (n)
			l->len = n;
		if (!ln)
			return mk_error_set(MK_ENOMEM, "out of memory for the lines of a text");
		l->lineno = ln;
		*cap = c;
	}
	l->text[l->count] = s;
	l->len[l->count] = len;
	l->lineno[l->count++] = lineno;
	return MK_OK;
}

/* Where a sentence ends in p[0..len): the offset just after its last
 * character (the mark and its closers), and *next the start of the next
 * one; 0 when the paragraph has no break. */
static const char TX_CLOSERS[] = "\"')]";
static bool tx_opener(const char *s, size_t len)
{
	int32_t c;
	utf8proc_category_t k;
	if (utf8proc_iterate((const uint8_t *)s, (ssize_t)len, &c) < 0)
		return false;
	k = utf8proc_category(c);
	return k == UTF8PROC_CATEGORY_LU || k == UTF8PROC_CATEGORY_LT || k == UTF8PROC_CATEGORY_ND ||
	       c == '"' || c == '\'' || c == '(' || c == 0x201c || c == 0x2018 || c == 0xab;
}

/* The closing quotes and brackets that may follow a mark: ASCII ones, and
 * ’ ” » (3-byte and 2-byte UTF-8). */
static size_t tx_closer(const char *s, size_t len)
{
	if (len >= 1 && s[0] && strchr(TX_CLOSERS, s[0]))
		return 1;
	if (len >= 3 && !memcmp(s, "\xe2\x80\x99", 3))
		return 3;
	if (len >= 3 && !memcmp(s, "\xe2\x80\x9d", 3))
		return 3;
	if (len >= 2 && !memcmp(s, "\xc2\xbb", 2))
		return 2;
	return 0;
}

static size_t tx_break(const char *p, size_t len, size_t *next)
{
	for (size_t k = 0; k < len; k++) {
		size_t e = k + 1, w, c;
		if (p[k] != '.' && p[k] != '?' && p[k] != '!')
			continue;
		while ((c = tx_closer(p + e, len - e)))
			e += c;
		for (w = e; w < len && (p[w] == ' ' || p[w] == '\t'); w++)
			;
		if (w > e && w < len && tx_opener(p + w, len - w)) {
			*next = w;
			return e;
		}
	}
	return 0;
}

/* The paragraph of lines [first, last) of the line texts, joined at w
 * (inside buf) and cut into sentences. */
static int tx_paragraph(mk_text_lines *l, size_t *cap, const mk_text_lines *lines, int64_t first,
			int64_t last, char **w)
{
	char *start = *w, *p = *w;
	int64_t *where = malloc((size_t)(last - first) * sizeof *where); /* line of each byte run */
	size_t *at = malloc((size_t)(last - first) * sizeof *at);
	size_t len, off = 0, e, next;
	int ret = MK_OK;

	if (!where || !at) {
		ret = mk_error_set(MK_ENOMEM, "out of memory");
		goto cleanup;
	}
	for (int64_t k = first; k < last; k++) {
		const char *s = lines->text[k];
		size_t n = lines->len[k];
		while (n && (*s == ' ' || *s == '\t'))
			s++, n--;
		while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
			n--;
		if (p > start)
			*p++ = ' ';
		at[k - first] = (size_t)(p - start);
		where[k - first] = lines->lineno[k];
		memcpy(p, s, n);
		p += n;
	}
	len = (size_t)(p - start);
	/* a sentence's line: the last line starting at or before it; sentences
	 * only move forward, so does li (a scan from the first line for each
	 * sentence made 200k one-sentence lines take 43 s) */
	for (int64_t li = 0; off < len;) {
		e = tx_break(start + off, len - off, &next);
		if (!e)
			e = next = len - off;
		while (li + 1 < last - first && at[li + 1] <= off)
			li++;
		start[off + e] = '\0'; /* a space, or the byte after the paragraph */
		if ((ret = tx_add(l, cap, start + off, e, where[li])))
			goto cleanup;
		off += next;
	}
	*w = p + 1;
cleanup:
	free(where);
	free(at);
	return ret;
}

static int tx_sentences(mk_text_lines *l, size_t total)
{
	mk_text_lines lines = *l;
	char *buf = malloc(total + 1), *w = buf;
	size_t cap = 0;
	int64_t k = 0;
	int ret = MK_OK;

	if (!buf)
		return mk_error_set(MK_ENOMEM, "out of memory for a text of %zu bytes", total);
	l->buf = buf;
	l->text = NULL;
	l->len = NULL;
	l->lineno = NULL;
	l->count = 0;
	while (k < lines.count && !ret) {
		int64_t j = k + 1;
		while (j < lines.count && lines.lineno[j] == lines.lineno[j - 1] + 1)
			j++;
		ret = tx_paragraph(l, &cap, &lines, k, j, &w);
		k = j;
	}
	mk_text_lines_release(&lines);
	return ret;
}

/* The lines of text[0..len) (NUL-terminated in place), numbered on from
 * *lineno, added to l unless blank. */
static int tx_lines(mk_text_lines *l, size_t *cap, char *text, size_t len, const char *path,
		    int64_t *lineno)
{
	int ret;

	for (char *p = text, *end; p < text + len; p = end + 1) {
		size_t n;
		end = memchr(p, '\n', (size_t)(text + len - p));
		if (!end)
			end = text + len;
		*end = '\0';
		n = (size_t)(end - p);
		++*lineno;
		if (n && p[n - 1] == '\r')
			p[--n] = '\0';
		if ((ret = tx_check(path, p, n, *lineno)))
			return ret;
		if (tx_blank(p, n))
			l->blank++;
		else if ((ret = tx_add(l, cap, p, n, *lineno)))
			return ret;
	}
	return MK_OK;
}

int mk_text_lines_read(const char *path, uint64_t max_bytes, bool sentences, mk_text_lines *out)
{
	char *text = NULL;
	size_t len, cap = 0;
	int64_t lineno = 0;
	int ret;

	memset(out, 0, sizeof *out);
	if ((ret = mk_file_read(path, max_bytes, "a text file", MK_FILE_TEXT, &text, &len)))
		return ret;
	out->buf = text;
	if ((ret = tx_lines(out, &cap, text, len, path, &lineno)))
		goto cleanup;
	out->lines = lineno;
	if (!out->count) {
		ret = mk_error_set(MK_EFORMAT, "'%s': no text (%s)", path,
				   lineno ? "every line is blank" : "the file is empty");
		goto cleanup;
	}
	if (sentences)
		ret = tx_sentences(out, len);
cleanup:
	if (ret)
		mk_text_lines_release(out);
	return ret;
}

/* Text k of mk_text_lines_from, copied to w: one sample, or its lines
 * (a text's lines never join the next text's paragraph: a blank line
 * between them is counted). */
static int tx_one(mk_text_lines *l, size_t *cap, char *w, const char *s, size_t len, int64_t k,
		  bool sentences, int64_t *lineno)
{
	int ret;

	memcpy(w, s, len);
	w[len] = '\0';
	if (sentences) {
		ret = tx_lines(l, cap, w, len, "texts", lineno);
		++*lineno;
		return ret;
	}
	*lineno = k + 1;
	if ((ret = tx_check("texts", w, len, k + 1)))
		return ret;
	if (len == 0 || tx_blank(w, len)) {
		mk_error_set(MK_EINVAL, "text %" PRId64 " is %s: every text is a sample", k + 1,
			     len ? "blank" : "empty");
		return mk_error_param("texts");
	}
	return tx_add(l, cap, w, len, k + 1);
}

int mk_text_lines_from(const char *const *texts, const size_t *lens, int64_t count,
		       bool sentences, mk_text_lines *out)
{
	size_t total = 0, cap = 0;
	int64_t lineno = 0;
	char *w;
	int ret = MK_OK;

	memset(out, 0, sizeof *out);
	if (count < 1) {
		mk_error_set(MK_EINVAL, "no text to encode");
		return mk_error_param("texts");
	}
	for (int64_t k = 0; k < count; k++) {
		if (lens[k] > SIZE_MAX / 2 - total - 1)
			return mk_error_set(MK_ERANGE, "the texts are too long");
		total += lens[k] + 1;
	}
	if (!(out->buf = w = malloc(total + 1)))
		return mk_error_set(MK_ENOMEM, "out of memory for texts of %zu bytes", total);
	for (int64_t k = 0; k < count && ret == MK_OK; k++) {
		ret = tx_one(out, &cap, w, texts[k], lens[k], k, sentences, &lineno);
		w += lens[k] + 1;
	}
	out->lines = lineno;
	if (ret == MK_OK && !out->count) {
		mk_error_set(MK_EINVAL, "no text: every text is blank");
		ret = mk_error_param("texts");
	}
	if (ret == MK_OK && sentences)
		ret = tx_sentences(out, total);
	if (ret)
		mk_text_lines_release(out);
	return ret;
}

void mk_text_lines_release(mk_text_lines *l)
{
	free(l->buf);
	free(l->text);
	free(l->len);
	free(l->lineno);
	memset(l, 0, sizeof *l);
}
