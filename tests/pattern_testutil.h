/* Helpers shared by the pattern unit tests (check_patterns.c, check_random.c). */
#ifndef MK_PATTERN_TESTUTIL_H
#define MK_PATTERN_TESTUTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pattern.h"
#include "testutil.h"

/* ---- helpers ---- */

/* ck_assert records a mark point even when it passes, far too slow inside
 * loops over cells: those test plainly and report only failures. */
#define CHECK(cond, ...)                          \
	do {                                      \
		if (!(cond))                      \
			ck_abort_msg(__VA_ARGS__); \
	} while (0)

#define MAX_LIST 64
#define TEST_NMAX 4096

/* Parses one value of parameter k at s; returns what follows it. */
static __attribute__((unused)) const char *term_value(mk_term *t, int k, const char *s)
{
	mk_pval *v = &t->p[k];
	char *end;
	v->given = true;
	if (t->def->info.params[k].kind != MK_PARAM_LIST) {
		v->i = strtoll(s, &end, 10);
		ck_assert(end != s);
		return end;
	}
	free(v->list);
	v->list = calloc(MAX_LIST, sizeof *v->list);
	v->len = 0;
	while (*s && *s != ' ') {
		ck_assert(v->len < MAX_LIST);
		v->list[v->len++] = strtoll(s, &end, 10);
		ck_assert(end != s);
		s = *end == ',' ? end + 1 : end;
	}
	return s;
}

/* Sets parameters from text like "w=2 causal=1 tokens=0,5". */
static __attribute__((unused)) void term_params(mk_term *t, const char *params)
{
	const char *s = params;
	while (*s) {
		char key[32];
		const char *eq = strchr(s, '=');
		int k;
		ck_assert_ptr_nonnull(eq);
		snprintf(key, sizeof key, "%.*s", (int)(eq - s), s);
		k = mk_term_param_index(t->def, key);
		ck_assert_msg(k >= 0, "no parameter '%s' in '%s'", key, t->def->info.name);
		s = term_value(t, k, eq + 1);
		while (*s == ' ')
			s++;
	}
}

/* Inits t and binds it at (n, seed); returns bind's status. */
static __attribute__((unused)) int term_make(mk_term *t, const char *name, const char *params, int64_t n,
		     uint64_t seed)
{
	const mk_pattern_def *def = mk_pattern_def_find(name);
	ck_assert_msg(def != NULL, "no pattern '%s'", name);
	ck_assert_int_eq(mk_term_init(t, def), MK_OK);
	term_params(t, params);
	t->n = n;
	t->seed = seed;
	return def->bind ? def->bind(t) : MK_OK;
}

/* Row (or column) k into m as line k; checks that nothing was written at
 * or beyond n, in the last word's tail or the guard word after it. */
static __attribute__((unused)) void mask_line(const mk_term *t, int64_t k, bool by_col, bool *m)
{
	size_t nw = mk_words(t->n);
	uint64_t buf[TEST_NMAX / 64 + 1];
	void (*fn)(const mk_term *, int64_t, uint64_t *) = t->def->row;
	if (by_col && t->def->col)
		fn = t->def->col;
	CHECK(t->n <= TEST_NMAX, "n too large for the test");
	memset(buf, 0, (nw + 1) * sizeof *buf);
	fn(t, k, buf);
	CHECK(buf[nw] == 0, "%s wrote past its row", t->def->info.name);
	if (t->n & 63)
		CHECK((buf[nw - 1] >> (t->n & 63)) == 0, "%s set bits >= n", t->def->info.name);
	for (int64_t j = 0; j < t->n; j++)
		m[k * t->n + j] = mk_bit_test(buf, j);
}

/* Row-major n x n matrix of the term, from its rows or from its columns
 * (line j is column j, so the result is the transpose). */
static __attribute__((unused)) bool *mask_lines(const mk_term *t, bool by_col)
{
	bool *m = calloc((size_t)(t->n * t->n), 1);
	ck_assert_ptr_nonnull(m);
	for (int64_t k = 0; k < t->n; k++)
		mask_line(t, k, by_col, m);
	return m;
}

static __attribute__((unused)) bool *mask_of(const char *name, const char *params, int64_t n, uint64_t seed)
{
	mk_term t;
	bool *m;
	ck_assert_int_eq(term_make(&t, name, params, n, seed), MK_OK);
	m = mask_lines(&t, false);
	mk_term_release(&t);
	return m;
}

static __attribute__((unused)) uint64_t mask_count(const bool *m, int64_t n)
{
	uint64_t c = 0;
	for (int64_t k = 0; k < n * n; k++)
		c += m[k];
	return c;
}

static __attribute__((unused)) uint64_t count_of(const char *name, const char *params, int64_t n, uint64_t seed)
{
	bool *m = mask_of(name, params, n, seed);
	uint64_t c = mask_count(m, n);
	free(m);
	return c;
}

static __attribute__((unused)) int64_t absdiff(int64_t a, int64_t b)
{
	return a > b ? a - b : b - a;
}


#endif
