/*
 * maskkit encode's inputs: the samples as token ids, [samples, N] with N
 * the longest, from texts through the tokenizer or from a file of ids.
 * Everything is tokenised before the first forward pass (tokenising is
 * cheap next to it), because N, the output's shape, is the longest sample.
 */
#include "config.h"
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model.h"
#include "internal.h"

#define ENCODE_IDS_MAX_BYTES ((uint64_t)1 << 32) /* an ids file, at most */

void mk_encode_ids_release(mk_encode_ids *x)
{
	if (!x)
		return;
	free(x->ids);
	free(x->len);
	memset(x, 0, sizeof *x);
}

/* Room for count samples of max_len ids (compacted to N later). */
static int encode_alloc(int64_t count, int64_t max_len, uint64_t max_memory, mk_encode_ids *out)
{
	uint64_t need = (uint64_t)count * ((uint64_t)max_len * 4 + 8);
	char a[32], b[32];

	memset(out, 0, sizeof *out);
	if (!max_memory)
		max_memory = MK_DEFAULT_MAX_MEMORY;
	if (max_len < 2 || max_len > MK_N_MAX)
		return mk_error_set(MK_EINVAL, "max_len must be in 2..%" PRId64 ", got %" PRId64,
				    (int64_t)MK_N_MAX, max_len);
	if (need > max_memory) {
		mk_format_bytes(need, a, sizeof a);
		mk_format_bytes(max_memory, b, sizeof b);
		mk_error_set(MK_ERANGE, "the token ids of %" PRId64 " samples take %s, more than "
			     "the memory limit of %s: take fewer samples", count, a, b);
		return mk_error_param("limit");
	}
	if (!(out->ids = calloc((size_t)count * (size_t)max_len, sizeof *out->ids)) ||
	    !(out->len = calloc((size_t)count, sizeof *out->len))) {
		mk_encode_ids_release(out);
		return mk_error_set(MK_ENOMEM, "out of memory for the token ids");
	}
	return MK_OK;
}

/* From rows of max_len ids to rows of n, the longest. */
static void encode_compact(mk_encode_ids *x, int64_t max_len)
{
	x->n = 0;
	x->tokens = 0;
	for (int64_t s = 0; s < x->samples; s++) {
		x->n = x->len[s] > x->n ? x->len[s] : x->n;
		x->tokens += x->len[s];
	}
	for (int64_t s = 1; s < x->samples; s++)
		memmove(x->ids + s * x->n, x->ids + s * max_len, (size_t)x->n * sizeof *x->ids);
}

int mk_encode_tokenize(const mk_tokenizer *t, const mk_text_lines *texts, int64_t max_len,
		       int64_t limit, uint64_t max_memory, mk_encode_ids *out)
{
	int64_t count = limit > 0 && limit < texts->count ? limit : texts->count;
	int ret;

	if (count < 1)
		return mk_error_set(MK_EFORMAT, "no text to encode");
	if ((ret = encode_alloc(count, max_len, max_memory, out)))
		return ret;
	for (int64_t s = 0; s < count; s++) {
		int64_t full = 0;
		ret = mk_tokenize(t, texts->text[s], texts->len[s], max_len, out->ids + s * max_len,
				  &out->len[s], &full);
		if (ret) {
			mk_encode_ids_release(out);
			mk_error_prefix("line %" PRId64 ": ", texts->lineno[s]);
			return ret;
		}
		out->truncated += full > out->len[s];
	}
	out->samples = count;
	encode_compact(out, max_len);
	return MK_OK;
}

/* One line of ids into row (at most max_len kept); *n the ids kept, *full
 * all of them. */
static int encode_ids_line(const char *p, const char *end, int64_t vocab, int64_t max_len,
			   int64_t lineno, int32_t *row, int64_t *n, int64_t *full)
{
	*n = *full = 0;
	while (p < end) {
		char *stop;
		long long v;
		if (isspace((unsigned char)*p)) {
			p++;
			continue;
		}
		errno = 0;
		v = strtoll(p, &stop, 10);
		if (stop == p || errno || (stop < end && !isspace((unsigned char)*stop)))
			return mk_error_set(MK_EFORMAT, "line %" PRId64 ": '%.*s' is not a token id",
					    lineno, (int)strcspn(p, " \t\r\n"), p);
		if (v < 0 || v >= vocab)
			return mk_error_set(MK_EFORMAT, "line %" PRId64 ": token id %lld is outside "
					    "the vocabulary of %" PRId64, lineno, v, vocab);
		if (*n < max_len)
			row[(*n)++] = (int32_t)v;
		(*full)++;
		p = stop;
	}
	return MK_OK;
}

/* Samples in text: its lines with something besides white space. */
static int64_t encode_count_lines(const char *text, size_t len)
{
	int64_t count = 0;
	bool ink = false;

	for (size_t k = 0; k < len; k++) {
		if (text[k] == '\n') {
			count += ink;
			ink = false;
		} else if (!isspace((unsigned char)text[k])) {
			ink = true;
		}
	}
	return count + ink;
}

int mk_encode_ids_read(const char *path, int64_t vocab, int64_t max_len, int64_t limit,
		       uint64_t max_memory, mk_encode_ids *out)
{
	char *text = NULL;
	size_t len = 0;
	int64_t count, lineno = 0, s = 0;
	int ret;

	memset(out, 0, sizeof *out);
	if ((ret = mk_file_read(path, ENCODE_IDS_MAX_BYTES, "an ids file", MK_FILE_TEXT, &text,
				&len)))
		return ret;
	count = encode_count_lines(text, len);
	count = limit > 0 && limit < count ? limit : count;
	if (count < 1) {
		ret = mk_error_set(MK_EFORMAT, "'%s': no token ids", path);
		goto cleanup;
	}
	if ((ret = encode_alloc(count, max_len, max_memory, out)))
		goto cleanup;
	for (const char *p = text, *end = text + len; p < end && s < count;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *stop = nl ? nl : end;
		int64_t full = 0;
		lineno++;
		if ((ret = encode_ids_line(p, stop, vocab, max_len, lineno, out->ids + s * max_len,
					   &out->len[s], &full)))
			break;
		if (out->len[s]) {
			out->truncated += full > out->len[s];
			s++;
		}
		p = stop + 1;
	}
	if (ret) {
		mk_error_prefix("'%s': ", path);
		mk_error_file(path);
		mk_encode_ids_release(out);
		goto cleanup;
	}
	out->samples = count;
	encode_compact(out, max_len);
cleanup:
	free(text);
	return ret;
}
