/*
 * BERT's tokenisation of one text, as HuggingFace's tokenizers library does
 * it (BertNormalizer, BertPreTokenizer, WordPiece, [CLS] ... [SEP]):
 *
 *  0. special tokens ([CLS], [SEP], [UNK], [MASK], [PAD]) written in the
 *     text are matched first, in the raw text, and cut it into segments;
 *  1. clean_text: NUL, U+FFFD and control characters (categories Cc, Cf,
 *     Cn, Co, Cs, but for tab, newline and carriage return) dropped; white
 *     space (those three and Unicode's White_Space) becomes ' ';
 *  2. CJK ideographs (BERT's blocks) get a space on either side;
 *  3. strip_accents: NFD, then the nonspacing marks (Mn) dropped;
 *  4. lowercase: each character's full lower-case mapping.  Steps 3 then 4,
 *     in that order, as tokenizers does (transformers' Python BertTokenizer
 *     lowers first; the results differ only for characters whose lower-case
 *     form has accents that the upper-case one's decomposition lacks);
 *  5. words: split at White_Space (dropped) and around punctuation (ASCII
 *     !-/ :-@ [-` {-~ and categories P*), each punctuation mark a word;
 *  6. WordPiece: each word greedily, longest match first, the pieces after
 *     the first looked up with "##" before them; a word longer than
 *     max_input_chars_per_word, or one that cannot be covered, is one [UNK].
 *
 * Categories, NFD and lower case come from utf8proc (Unicode 15 for 2.8).
 * utf8proc_tolower is Unicode's simple mapping; the full mapping (Rust's
 * char::to_lowercase, Python's str.lower) differs only for U+0130 'İ',
 * which becomes "i" + U+0307 there: done by hand below.  Python's str.lower
 * of a whole string also turns a word-final capital sigma into 'ς'; tokenizers
 * lowers character by character and gives 'σ', and so does maskkit.
 */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>
#include "internal.h"
#include "core.h"
#include "model.h"
#include "tokenizer_internal.h"

/* What one call accumulates: the ids kept and the count before truncation. */
typedef struct wp_out {
	int32_t *ids;
	int64_t keep; /* room for pieces: max_len - 2 */
	int64_t n;    /* pieces kept (ids[1 + k]) */
	int64_t full; /* pieces produced */
} wp_out;

/* A call's scratch buffers, sized for the longest segment. */
typedef struct wp_buf {
	uint8_t *clean;   /* after steps 1 and 2 (UTF-8) */
	int32_t *cps;     /* after step 3 (code points) */
	size_t cps_cap;
	char *word;       /* the current word (UTF-8) */
	size_t word_len, word_cap;
	int64_t word_chars;
	int32_t *pieces;  /* one word's pieces */
	size_t pieces_cap;
} wp_buf;

/* Room for the pieces of a word of up to chars code points: one a code
 * point at most, and at most max_chars (a longer word is [UNK]).  Sized by
 * the text, not by max_chars alone, which a tokenizer.json may raise to
 * 10^6 (4 MB a call: 32 s for 30,000 short lines under AddressSanitizer). */
static int wp_pieces(const mk_tokenizer *t, size_t chars, wp_buf *b)
{
	size_t want = ((size_t)t->max_chars < chars ? (size_t)t->max_chars : chars) + 1;
	int32_t *p;
	if (want <= b->pieces_cap)
		return MK_OK;
	if (!(p = realloc(b->pieces, want * sizeof *p)))
		return mk_error_set(MK_ENOMEM, "out of memory");
	b->pieces = p;
	b->pieces_cap = want;
	return MK_OK;
}

static void wp_emit(wp_out *o, int32_t id)
{
	if (o->n < o->keep)
		o->ids[1 + o->n++] = id;
	o->full++;
}

/* Unicode's White_Space property (Rust's char::is_whitespace). */
static bool wp_white(int32_t c)
{
	return (c >= 0x09 && c <= 0x0d) || c == 0x20 || c == 0x85 || c == 0xa0 || c == 0x1680 ||
	       (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f ||
	       c == 0x205f || c == 0x3000;
}

/* What BertNormalizer's clean_text drops: control, format and private-use
 * characters.  Not the unassigned ones (Cn: U+0378, noncharacters, letters
 * newer than the tables): the tokenizers library keeps them, and the word
 * holding one becomes [UNK] (as it did on 75 of 94,689 real lines). */
static bool wp_control(int32_t c)
{
	utf8proc_category_t k;
	if (c == '\t' || c == '\n' || c == '\r')
		return false;
	k = utf8proc_category(c);
	return k == UTF8PROC_CATEGORY_CC || k == UTF8PROC_CATEGORY_CF ||
	       k == UTF8PROC_CATEGORY_CO || k == UTF8PROC_CATEGORY_CS;
}

static bool wp_chinese(int32_t c)
{
	return (c >= 0x4e00 && c <= 0x9fff) || (c >= 0x3400 && c <= 0x4dbf) ||
	       (c >= 0x20000 && c <= 0x2a6df) || (c >= 0x2a700 && c <= 0x2b73f) ||
	       (c >= 0x2b740 && c <= 0x2b81f) || (c >= 0x2b920 && c <= 0x2ceaf) ||
	       (c >= 0xf900 && c <= 0xfaff) || (c >= 0x2f800 && c <= 0x2fa1f);
}

static bool wp_punct(int32_t c)
{
	utf8proc_category_t k;
	if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
	    (c >= 123 && c <= 126))
		return true;
	k = utf8proc_category(c);
	return k >= UTF8PROC_CATEGORY_PC && k <= UTF8PROC_CATEGORY_PO;
}

/* Step 6 on the word in b: its pieces, or one [UNK]. */
static void wp_word(const mk_tokenizer *t, wp_buf *b, wp_out *o)
{
	const char *w = b->word;
	size_t len = b->word_len, start = 0;
	int64_t np = 0;

	if (!len)
		return;
	if (b->word_chars > t->max_chars) {
		wp_emit(o, t->sp.unk);
		goto done;
	}
	while (start < len) {
		/* the longest piece from start, walking the vocabulary's trie */
		size_t end = start;
		int64_t id = tk_trie_longest(t, start > 0, w + start, len - start, &end);
		end += start;
		if (id < 0) {
			wp_emit(o, t->sp.unk);
			goto done;
		}
		b->pieces[np++] = (int32_t)id;
		start = end;
	}
	for (int64_t k = 0; k < np; k++)
		wp_emit(o, b->pieces[k]);
done:
	b->word_len = 0;
	b->word_chars = 0;
}

static void wp_push(wp_buf *b, int32_t c)
{
	b->word_len += (size_t)utf8proc_encode_char(c, (uint8_t *)b->word + b->word_len);
	b->word_chars++;
}

/* Steps 4 to 6 on one character. */
static void wp_char(const mk_tokenizer *t, wp_buf *b, int32_t c, wp_out *o)
{
	if (t->lower) {
		if (c == 0x130) { /* the one full mapping that is not the simple one */
			wp_push(b, 'i');
			c = 0x307;
		} else {
			c = utf8proc_tolower(c);
		}
	}
	if (wp_white(c)) {
		wp_word(t, b, o);
	} else if (wp_punct(c)) {
		wp_word(t, b, o);
		wp_push(b, c);
		wp_word(t, b, o);
	} else {
		wp_push(b, c);
	}
}

/* Steps 1 and 2 into b->clean; returns its length. */
static size_t wp_clean(const mk_tokenizer *t, const uint8_t *s, size_t len, wp_buf *b)
{
	size_t n = 0;
	int32_t c;

	for (size_t k = 0; k < len;) {
		k += (size_t)utf8proc_iterate(s + k, (ssize_t)(len - k), &c);
		if (t->clean && (c == 0 || c == 0xfffd || wp_control(c)))
			continue;
		if (t->clean && (c == '\t' || c == '\n' || c == '\r' || wp_white(c)))
			c = ' ';
		if (t->chinese && wp_chinese(c)) {
			b->clean[n++] = ' ';
			n += (size_t)utf8proc_encode_char(c, b->clean + n);
			b->clean[n++] = ' ';
		} else {
			n += (size_t)utf8proc_encode_char(c, b->clean + n);
		}
	}
	return n;
}

/* Steps 1 to 6 on a segment of valid UTF-8 without special tokens. */
static int wp_segment(const mk_tokenizer *t, const char *s, size_t len, wp_buf *b, wp_out *o)
{
	size_t n = wp_clean(t, (const uint8_t *)s, len, b);
	ssize_t m;

	if (t->strip) {
		m = utf8proc_decompose(b->clean, (ssize_t)n, b->cps, (ssize_t)b->cps_cap,
				       UTF8PROC_DECOMPOSE);
		if (m > (ssize_t)b->cps_cap) { /* rare: NFD longer than 4 code points a byte */
			int32_t *p = realloc(b->cps, (size_t)m * sizeof *p);
			if (!p)
				return mk_error_set(MK_ENOMEM, "out of memory");
			b->cps = p;
			b->cps_cap = (size_t)m;
			if (wp_pieces(t, b->cps_cap, b))
				return MK_ENOMEM;
			m = utf8proc_decompose(b->clean, (ssize_t)n, b->cps, m, UTF8PROC_DECOMPOSE);
		}
		if (m < 0)
			return mk_error_set(MK_EINTERNAL, "NFD failed: %s", utf8proc_errmsg(m));
		if ((size_t)m > b->word_cap / 5) { /* with the realloc above only */
			char *p = realloc(b->word, 5 * (size_t)m + 8);
			if (!p)
				return mk_error_set(MK_ENOMEM, "out of memory");
			b->word = p;
			b->word_cap = 5 * (size_t)m + 8;
		}
	} else {
		m = 0;
		for (size_t k = 0; k < n; m++)
			k += (size_t)utf8proc_iterate(b->clean + k, (ssize_t)(n - k), &b->cps[m]);
	}
	for (ssize_t k = 0; k < m; k++)
		if (!t->strip || utf8proc_category(b->cps[k]) != UTF8PROC_CATEGORY_MN)
			wp_char(t, b, b->cps[k], o);
	wp_word(t, b, o);
	return MK_OK;
}

/* The special token written at s (the longest, when several are), or -1. */
static int wp_added(const mk_tokenizer *t, const char *s, size_t len, size_t *mlen)
{
	int best = -1;

	if (!t->added_first[(unsigned char)*s])
		return -1;
	for (int k = 0; k < t->nadded; k++)
		if (t->added[k].len <= len && !memcmp(s, t->added[k].s, t->added[k].len) &&
		    (best < 0 || t->added[k].len > t->added[best].len))
			best = k;
	if (best >= 0)
		*mlen = t->added[best].len;
	return best;
}

static int wp_alloc(const mk_tokenizer *t, size_t len, wp_buf *b)
{
	/* steps 1-2 at most double a text (" c " around a 3-byte ideograph);
	 * NFD gives at most 3 code points a byte (4 leaves room); a word takes
	 * at most 4 bytes a code point, 5 when lower case lengthens one
	 * (U+023A: 2 bytes, its lower case 3; İ: 2, "i" + U+0307: 3) */
	b->clean = malloc(2 * len + 8);
	b->cps_cap = 4 * (2 * len + 8);
	b->cps = malloc(b->cps_cap * sizeof *b->cps);
	b->word_cap = 5 * b->cps_cap + 8;
	b->word = malloc(b->word_cap);
	if (!b->clean || !b->cps || !b->word || wp_pieces(t, b->cps_cap, b))
		return mk_error_set(MK_ENOMEM, "out of memory for a text of %zu bytes", len);
	return MK_OK;
}

static int wp_check_utf8(const char *text, size_t len)
{
	int32_t c;
	for (size_t k = 0; k < len;) {
		ssize_t r = utf8proc_iterate((const uint8_t *)text + k, (ssize_t)(len - k), &c);
		if (r < 0)
			return mk_error_set(MK_EFORMAT, "invalid UTF-8 at byte offset %zu (0x%02x)", k,
					    (unsigned char)text[k]);
		k += (size_t)r;
	}
	return MK_OK;
}

int mk_tokenize(const mk_tokenizer *t, const char *text, size_t len, int64_t max_len,
		int32_t *ids, int64_t *n, int64_t *full)
{
	wp_out o = {.ids = ids, .keep = max_len - 2};
	wp_buf b = {0};
	size_t seg = 0, k = 0, mlen = 0;
	int ret;

	*n = 0;
	if (full)
		*full = 0;
	if (max_len < 2)
		return mk_error_set(MK_EINVAL, "max_len must be at least 2 ([CLS] and [SEP]), got %"
				    PRId64, max_len);
	if ((ret = wp_check_utf8(text, len)) || (ret = wp_alloc(t, len, &b)))
		goto cleanup;
	while (k < len) {
		int a = wp_added(t, text + k, len - k, &mlen);
		if (a < 0) {
			k++;
			continue;
		}
		if ((ret = wp_segment(t, text + seg, k - seg, &b, &o)))
			goto cleanup;
		wp_emit(&o, t->added[a].id);
		seg = k += mlen;
	}
	if ((ret = wp_segment(t, text + seg, len - seg, &b, &o)))
		goto cleanup;
	ids[0] = t->sp.cls;
	ids[1 + o.n] = t->sp.sep;
	*n = o.n + 2;
	if (full)
		*full = o.full + 2;
cleanup:
	free(b.clean);
	free(b.cps);
	free(b.word);
	free(b.pieces);
	return ret;
}

bool mk_tokenizer_is_punct(const mk_tokenizer *t, int64_t id)
{
	const char *s = mk_tokenizer_token(t, id);
	size_t len = s ? t->tok_len[id] : 0, k = 0;

	/* the pre-tokenizer's rule (wp_punct): a mark split off as its own word */
	while (k < len) {
		int32_t c;
		utf8proc_ssize_t step = utf8proc_iterate((const utf8proc_uint8_t *)s + k,
							 (utf8proc_ssize_t)(len - k), &c);
		if (step <= 0 || !wp_punct(c))
			return false;
		k += (size_t)step;
	}
	return len > 0;
}
