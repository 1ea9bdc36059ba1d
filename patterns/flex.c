/*
 * The text a pattern's flex() writes: a growable expression string and the
 * lookup tables it refers to (pattern.h).  src/expr/expr_flex.c wraps the
 * terms' expressions into a whole mask_mod source file.
 */
#include "config.h"
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "mask.h"
#include "pattern.h"

void mk_flex_printf(mk_flex *f, const char *fmt, ...)
{
	va_list ap;

	if (f->err)
		return;
	va_start(ap, fmt);
	mk_sb_vprintf(f->text, fmt, ap);
	va_end(ap);
	if (f->text->err)
		f->err = mk_error_set(MK_ENOMEM, "out of memory for a mask_mod");
}

/* A new table of rows x cols entries, checked against max_memory (the
 * tables are what a mask_mod holds), or NULL with f->err set. */
static mk_flex_table *flex_table_new(mk_flex *f, mk_flex_kind kind, int64_t n, int64_t rows,
				     int64_t cols)
{
	mk_flex_table *t;
	uint64_t count, bytes;

	if (f->err)
		return NULL;
	if ((f->err = mk_mul_u64((uint64_t)rows, (uint64_t)cols, &count)) ||
	    (f->err = mk_mul_u64(count ? count : 1, sizeof(int32_t), &bytes)) ||
	    (f->err = mk_check_memory(f->bytes + bytes, f->max_memory,
				      "the lookup tables of a mask_mod")))
		return NULL;
	if (f->ntables == f->tcap) {
		size_t cap = f->tcap ? 2 * f->tcap : 4;
		mk_flex_table *more = realloc(f->tables, cap * sizeof *more);
		if (!more) {
			f->err = mk_error_set(MK_ENOMEM, "out of memory for a mask_mod");
			return NULL;
		}
		f->tables = more;
		f->tcap = cap;
	}
	t = &f->tables[f->ntables];
	*t = (mk_flex_table){.kind = kind, .n = n, .rows = rows, .cols = cols};
	if (!(t->data = malloc((size_t)bytes))) {
		f->err = mk_error_set(MK_ENOMEM, "out of memory for a mask_mod's tables");
		return NULL;
	}
	f->bytes += bytes;
	f->ntables++;
	return t;
}

/* The index of the table just filled: an earlier one equal to it (bigbird
 * and random with one seed draw the same keys) is used instead. */
static size_t flex_table_commit(mk_flex *f)
{
	mk_flex_table *t = &f->tables[f->ntables - 1];
	size_t bytes = (size_t)(t->rows * t->cols) * sizeof *t->data;

	for (size_t k = 0; k + 1 < f->ntables; k++) {
		const mk_flex_table *u = &f->tables[k];
		if (u->kind == t->kind && u->n == t->n && u->rows == t->rows && u->cols == t->cols &&
		    memcmp(u->data, t->data, bytes) == 0) {
			free(t->data);
			f->bytes -= bytes;
			f->ntables--;
			return k;
		}
	}
	return f->ntables - 1;
}

long mk_flex_table_add(mk_flex *f, mk_flex_kind kind, int64_t n, const int64_t *data,
		       int64_t len)
{
	mk_flex_table *t = flex_table_new(f, kind, n, len, 1);

	if (!t)
		return -1;
	for (int64_t k = 0; k < len; k++) /* positions and lengths are at most n <= 2^20 */
		t->data[k] = (int32_t)data[k];
	return (long)flex_table_commit(f);
}

/* The table of row i's k keys is read back from the drawn bits, so it holds
 * exactly what the rows generator sets; each key then is one comparison,
 * unrolled, since a kernel's mask_mod must be elementwise (no reduction),
 * and looked up in a column of its own: tK[c][i], not tK[i, c], which
 * compiled create_block_mask turned into an n x n int64 index (32 GiB at
 * n = 65536; bench/flex_block_mask.py). */
void mk_flex_draws(mk_flex *f, const mk_term *t, uint64_t tag, int64_t k)
{
	size_t words = mk_words(t->n);
	uint64_t *row = calloc(words, sizeof *row);
	mk_flex_table *tab = row ? flex_table_new(f, MK_FLEX_ROWS, t->n, t->n, k) : NULL;
	size_t name;

	if (!row && !f->err)
		f->err = mk_error_set(MK_ENOMEM, "out of memory for a mask_mod");
	if (!tab)
		goto out;
	for (int64_t i = 0; i < t->n; i++) {
		int64_t c = 0;
		mk_bits_zero(row, words);
		mk_draw_row(t->seed, tag, i, k, t->n, row);
		for (int64_t x = mk_bits_next(row, t->n, 0, true); x < t->n && c < k;
		     x = mk_bits_next(row, t->n, x + 1, true))
			tab->data[i * k + c++] = (int32_t)x;
	}
	name = flex_table_commit(f);
	mk_flex_printf(f, "(");
	for (int64_t c = 0; c < k; c++)
		mk_flex_printf(f, "%s(t%zu[%" PRId64 "][%s] == %s)", c ? " | " : "", name, c, f->ic,
			       f->j);
	mk_flex_printf(f, ")");
out:
	free(row);
}

void mk_flex_release(mk_flex *f)
{
	for (size_t k = 0; k < f->ntables; k++)
		free(f->tables[k].data);
	free(f->tables);
	f->tables = NULL;
	f->ntables = f->tcap = 0;
}
