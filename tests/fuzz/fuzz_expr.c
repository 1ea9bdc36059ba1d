/*
 * libFuzzer target: the expression language.  The input is the expression
 * text; one that parses is bound at a small n taken from the input, then
 * materialised and measured, and the streamed measurement must agree with
 * the materialised matrix (count, rows, diagonal, structure flags, tiles).
 *
 * Mask files named in an expression are looked up relative to the working
 * directory; expressions with a '/' are only parsed, never bound, so the
 * fuzzer cannot wander the file system.
 */
#include "config.h"
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "maskkit.h"
#include "fuzz.h"

#define MK_FUZZ_MAX_N 64

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

static uint64_t mk_fuzz_hash(const uint8_t *data, size_t size)
{
	uint64_t h = 14695981039346656037ull; /* FNV-1a */

	for (size_t k = 0; k < size; k++)
		h = (h ^ data[k]) * 1099511628211ull;
	return h;
}

static bool mk_fuzz_symmetric(const mk_mask *m)
{
	int64_t n = mk_mask_n(m);

	for (int64_t i = 0; i < n; i++)
		for (int64_t j = 0; j < i; j++)
			if (mk_mask_test(m, i, j) != mk_mask_test(m, j, i))
				return false;
	return true;
}

static bool mk_fuzz_causal(const mk_mask *m)
{
	int64_t n = mk_mask_n(m);

	for (int64_t i = 0; i < n; i++)
		for (int64_t j = i + 1; j < n; j++)
			if (mk_mask_test(m, i, j))
				return false;
	return true;
}

static bool mk_fuzz_toeplitz(const mk_mask *m)
{
	int64_t n = mk_mask_n(m);

	for (int64_t i = 0; i + 1 < n; i++)
		for (int64_t j = 0; j + 1 < n; j++)
			if (mk_mask_test(m, i, j) != mk_mask_test(m, i + 1, j + 1))
				return false;
	return true;
}

static void mk_fuzz_check_rows(const mk_mask *m, const mk_measure *r)
{
	int64_t n = mk_mask_n(m), min = INT64_MAX, max = 0, empty = 0, first = -1;
	int64_t *counts = malloc((size_t)n * sizeof *counts);
	uint64_t diag = 0;

	MK_FUZZ_CHECK(counts, "out of memory");
	mk_mask_row_counts(m, counts);
	for (int64_t i = 0; i < n; i++) {
		min = counts[i] < min ? counts[i] : min;
		max = counts[i] > max ? counts[i] : max;
		if (counts[i] == 0 && empty++ == 0)
			first = i;
		diag += mk_mask_test(m, i, i);
	}
	free(counts);
	MK_FUZZ_CHECK(r->row_min == min && r->row_max == max, "rows: measured %lld..%lld, "
		      "materialised %lld..%lld", (long long)r->row_min, (long long)r->row_max,
		      (long long)min, (long long)max);
	MK_FUZZ_CHECK(r->empty_rows == empty && r->first_empty_row == first,
		      "empty rows: measured %lld (first %lld), materialised %lld (first %lld)",
		      (long long)r->empty_rows, (long long)r->first_empty_row, (long long)empty,
		      (long long)first);
	MK_FUZZ_CHECK(r->diag == diag, "diagonal: measured %llu, materialised %llu",
		      (unsigned long long)r->diag, (unsigned long long)diag);
}

static void mk_fuzz_check_tiles(const mk_mask *m, const mk_measure *r)
{
	for (size_t k = 0; k < r->ntiles; k++) {
		const mk_tile_stats *s = &r->tiles[k];
		uint64_t nonempty = 0, full = 0, cells = 0;
		mk_tiles *t = NULL;
		int ret = mk_mask_tiles(m, s->block, &t);

		MK_FUZZ_CHECK(ret == MK_OK, "mk_mask_tiles(%lld): %s", (long long)s->block,
			      mk_error());
		for (int64_t bi = 0; bi < t->nb; bi++) {
			for (int64_t bj = 0; bj < t->nb; bj++) {
				uint8_t st = t->state[bi * t->nb + bj];
				nonempty += st != MK_TILE_EMPTY;
				full += st == MK_TILE_FULL;
				if (st != MK_TILE_EMPTY)
					cells += mk_tiles_area(t, bi, bj);
			}
		}
		MK_FUZZ_CHECK(s->tiles == (uint64_t)(t->nb * t->nb) && s->nonempty == nonempty &&
			      s->full == full && s->cells_in_nonempty == cells,
			      "tiles B=%lld: measured %llu/%llu non-empty, %llu full, %llu cells; "
			      "materialised %llu/%llu, %llu, %llu", (long long)s->block,
			      (unsigned long long)s->nonempty, (unsigned long long)s->tiles,
			      (unsigned long long)s->full, (unsigned long long)s->cells_in_nonempty,
			      (unsigned long long)nonempty, (unsigned long long)(t->nb * t->nb),
			      (unsigned long long)full, (unsigned long long)cells);
		mk_tiles_free(t);
	}
}

/* The streamed measurement against the materialised matrix. */
static void mk_fuzz_check(const mk_expr *e, const mk_mask *m, const mk_measure *r)
{
	bool sym = mk_fuzz_symmetric(m);

	MK_FUZZ_CHECK(r->n == mk_mask_n(m), "n: measured %lld, materialised %lld",
		      (long long)r->n, (long long)mk_mask_n(m));
	MK_FUZZ_CHECK(r->count == mk_mask_count(m), "|M|: measured %llu, materialised %llu",
		      (unsigned long long)r->count, (unsigned long long)mk_mask_count(m));
	mk_fuzz_check_rows(m, r);
	MK_FUZZ_CHECK(r->symmetric_known, "symmetry not checked although bound with need_cols");
	MK_FUZZ_CHECK(r->symmetric == sym, "symmetric: measured %d, materialised %d",
		      r->symmetric, sym);
	MK_FUZZ_CHECK(!mk_expr_known_symmetric(e) || sym, "known symmetric but is not");
	MK_FUZZ_CHECK(r->causal == mk_fuzz_causal(m), "causal: measured %d", r->causal);
	MK_FUZZ_CHECK(r->toeplitz == mk_fuzz_toeplitz(m), "toeplitz: measured %d", r->toeplitz);
	mk_fuzz_check_tiles(m, r);
}

/* Columns from the cursor against the transpose of the materialised rows. */
static void mk_fuzz_check_cols(const mk_expr *e, const mk_mask *m)
{
	int64_t n = mk_mask_n(m);
	uint64_t *col = malloc(mk_words(n) * sizeof *col);
	mk_mask *mt = NULL;
	mk_cursor *c = NULL;
	int ret;

	MK_FUZZ_CHECK(col, "out of memory");
	ret = mk_mask_transpose(m, &mt);
	MK_FUZZ_CHECK(ret == MK_OK, "mk_mask_transpose: %s", mk_error());
	ret = mk_cursor_new(e, &c);
	MK_FUZZ_CHECK(ret == MK_OK, "mk_cursor_new: %s", mk_error());
	for (int64_t j = 0; j < n; j++) {
		ret = mk_cursor_col(c, j, col);
		MK_FUZZ_CHECK(ret == MK_OK, "mk_cursor_col(%lld): %s", (long long)j, mk_error());
		MK_FUZZ_CHECK(memcmp(col, mk_mask_crow(mt, j), mk_words(n) * sizeof *col) == 0,
			      "column %lld differs from the transpose of the rows", (long long)j);
	}
	mk_cursor_free(c);
	mk_mask_free(mt);
	free(col);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t h = mk_fuzz_hash(data, size);
	mk_bind_opts o = {
		.n = (int64_t)(1 + h % MK_FUZZ_MAX_N),
		.seed = h >> 32,
		.max_memory = MK_FUZZ_MAX_MEMORY,
		.need_cols = true,
	};
	int64_t blocks[2] = {(int64_t)(1 + (h >> 8) % 16), 64};
	char *text = malloc(size + 1);
	mk_expr *e = NULL;
	mk_mask *m = NULL;
	mk_measure r;
	int ret;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	ret = mk_expr_parse(text, &e);
	if (ret != MK_OK) {
		MK_FUZZ_CHECK(e == NULL, "a failed parse returned an expression");
		MK_FUZZ_CHECK(mk_error()[0] != '\0', "status %d without a message", ret);
		goto out;
	}
	MK_FUZZ_CHECK(mk_expr_text(e) != NULL, "no text");
	if (strchr(text, '/'))
		goto out;
	if (mk_expr_bind(e, &o) != MK_OK)
		goto out;
	MK_FUZZ_CHECK(mk_expr_params(e) != NULL, "no parameters after binding");
	ret = mk_expr_to_mask(e, &m);
	MK_FUZZ_CHECK(ret == MK_OK, "mk_expr_to_mask at n = %lld: %s", (long long)o.n, mk_error());
	ret = mk_measure_expr(e, blocks, 2, NULL, NULL, &r);
	MK_FUZZ_CHECK(ret == MK_OK, "mk_measure_expr at n = %lld: %s", (long long)o.n, mk_error());
	mk_fuzz_check(e, m, &r);
	mk_fuzz_check_cols(e, m);
out:
	mk_mask_free(m);
	mk_expr_free(e);
	free(text);
	return 0;
}
