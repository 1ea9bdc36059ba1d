/*
 * The lexical side of expressions: a term's argument list, numbers, and the
 * "did you mean" suggestion.  Errors name the 1-based column.
 */
#include "config.h"
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "expr_internal.h"

#define MK_NUM_MAX ((int64_t)1 << 62)

static void mk_skip_space(const char *s, size_t *pos)
{
	while (s[*pos] == ' ' || s[*pos] == '\t')
		(*pos)++;
}

int mk_expr_error(const char *text, size_t pos, const char *what)
{
	size_t len = strlen(text), lo;
	/* a long expression is quoted around the column, so the line stays short */
	if (len <= 60)
		return mk_error_set(MK_EINVAL, "expression '%s' at column %zu: %s", text, pos + 1, what);
	lo = pos > 30 ? pos - 30 : 0;
	return mk_error_set(MK_EINVAL, "expression '%s%.60s%s' at column %zu: %s", lo ? "..." : "",
			    text + lo, lo + 60 < len ? "..." : "", pos + 1, what);
}

static int mk_lex_error(const char *text, size_t pos, const char *what)
{
	return mk_expr_error(text, pos, what);
}

static int mk_lex_number(const char *text, size_t *pos, int64_t *out)
{
	const char *s = text + *pos;
	char *end;
	long long v;
	if (!isdigit((unsigned char)*s)) {
		if (strncmp(s, "true", 4) == 0 && !isalnum((unsigned char)s[4])) {
			*out = 1, *pos += 4;
			return MK_OK;
		}
		if (strncmp(s, "false", 5) == 0 && !isalnum((unsigned char)s[5])) {
			*out = 0, *pos += 5;
			return MK_OK;
		}
		return mk_lex_error(text, *pos, "expected a non-negative integer");
	}
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || v > MK_NUM_MAX)
		return mk_lex_error(text, *pos, "number is too large");
	if (isalpha((unsigned char)*end) || *end == '.')
		return mk_lex_error(text, *pos + (size_t)(end - s), "expected an integer");
	*out = v;
	*pos += (size_t)(end - s);
	return MK_OK;
}

static size_t mk_lex_word(const char *s, size_t pos)
{
	size_t e = pos;
	while (isalnum((unsigned char)s[e]) || s[e] == '_')
		e++;
	return e - pos;
}

static int mk_append_list(mk_pval *v, int64_t x)
{
	int64_t *l = realloc(v->list, (v->len + 1) * sizeof *l);
	if (!l)
		return mk_error_set(MK_ENOMEM, "out of memory");
	v->list = l;
	v->list[v->len++] = x;
	return MK_OK;
}

/* Stores value x for parameter k (a fresh key, or a continuation of a list). */
static int mk_store(const char *text, size_t at, mk_term *t, int k, int64_t x, bool fresh)
{
	const mk_param_info *pi = &t->def->info.params[k];
	mk_pval *v = &t->p[k];
	char msg[160];
	if (pi->kind == MK_PARAM_LIST) {
		if (fresh)
			v->len = 0;
		v->given = true;
		return mk_append_list(v, x);
	}
	if (!fresh) {
		snprintf(msg, sizeof msg, "parameter '%s' of '%s' takes one value",
			 pi->name, t->def->info.name);
		return mk_lex_error(text, at, msg);
	}
	if (pi->kind == MK_PARAM_BOOL && x > 1) {
		snprintf(msg, sizeof msg, "parameter '%s' of '%s' is 0 or 1",
			 pi->name, t->def->info.name);
		return mk_lex_error(text, at, msg);
	}
	v->i = x;
	v->given = true;
	return MK_OK;
}

/* Resolves a key (or, for a positional first value, the shorthand) to a
 * parameter index; -2 is the generic block=B. */
static int mk_key_index(const char *text, size_t at, mk_term *t, const char *key, int *k)
{
	char msg[200];
	if (strcmp(key, "block") == 0) {
		*k = -2;
		return MK_OK;
	}
	*k = mk_term_param_index(t->def, key);
	if (*k >= 0)
		return MK_OK;
	snprintf(msg, sizeof msg, "'%s' has no parameter '%s'", t->def->info.name, key);
	return mk_lex_error(text, at, msg);
}

static int mk_parse_one_arg(const char *text, size_t *pos, mk_term *t, int *cur, bool first,
			    bool *seen)
{
	char key[32];
	size_t at = *pos, len = mk_lex_word(text, *pos), save;
	int64_t x;
	int ret, k;
	save = *pos + len;
	mk_skip_space(text, &save);
	if (len > 0 && isalpha((unsigned char)text[at]) && text[save] == '=') {
		if (len >= sizeof key)
			return mk_lex_error(text, at, "parameter name too long");
		memcpy(key, text + at, len);
		key[len] = '\0';
		if ((ret = mk_key_index(text, at, t, key, &k)))
			return ret;
		if (k >= 0 ? seen[k] : seen[MK_MAX_PARAMS])
			return mk_lex_error(text, at, "parameter given twice");
		seen[k >= 0 ? k : MK_MAX_PARAMS] = true;
		*pos = save + 1;
		mk_skip_space(text, pos);
		at = *pos;
		if ((ret = mk_lex_number(text, pos, &x)))
			return ret;
		*cur = k;
		if (k == -2) {
			if (x < 1)
				return mk_lex_error(text, at, "block must be at least 1");
			t->block = x;
			return MK_OK;
		}
		return mk_store(text, at, t, k, x, true);
	}
	if ((ret = mk_lex_number(text, pos, &x)))
		return ret;
	if (first) { /* positional: the shorthand parameter, as in local(2) */
		if (!t->def->info.shorthand)
			return mk_lex_error(text, at, "this pattern takes only key=value parameters");
		*cur = mk_term_param_index(t->def, t->def->info.shorthand);
		if (seen[*cur])
			return mk_lex_error(text, at, "parameter given twice");
		seen[*cur] = true;
		return mk_store(text, at, t, *cur, x, true);
	}
	if (*cur < 0)
		return mk_lex_error(text, at, "a value with no parameter name");
	return mk_store(text, at, t, *cur, x, false);
}

int mk_expr_parse_args(const char *text, size_t *pos, mk_term *t)
{
	bool seen[MK_MAX_PARAMS + 1] = {false};
	int cur = -1, ret;
	bool first = true;
	/* a numeric suffix (local2) already set its parameter */
	for (size_t k = 0; k < t->def->info.nparams && k < MK_MAX_PARAMS; k++)
		seen[k] = t->p[k].given;
	(*pos)++; /* '(' */
	mk_skip_space(text, pos);
	if (text[*pos] == ')') {
		(*pos)++;
		return MK_OK;
	}
	for (;;) {
		mk_skip_space(text, pos);
		if ((ret = mk_parse_one_arg(text, pos, t, &cur, first, seen)))
			return ret;
		first = false;
		mk_skip_space(text, pos);
		if (text[*pos] == ')') {
			(*pos)++;
			return MK_OK;
		}
		if (text[*pos] != ',')
			return mk_lex_error(text, *pos, text[*pos] ? "expected ',' or ')'"
							 : "missing ')'");
		(*pos)++;
	}
}

static size_t mk_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), prev[32], cur[32];
	if (la > 30 || lb > 30)
		return 99;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t c = prev[j - 1] + (a[i - 1] != b[j - 1]);
			if (prev[j] + 1 < c)
				c = prev[j] + 1;
			if (cur[j - 1] + 1 < c)
				c = cur[j - 1] + 1;
			cur[j] = c;
		}
		memcpy(prev, cur, (lb + 1) * sizeof *prev);
	}
	return prev[lb];
}

const char *mk_expr_suggest(const char *name)
{
	const char *best = NULL;
	size_t bestd = 3;
	for (size_t k = 0; k < mk_pattern_def_count(); k++) {
		const char *cand = mk_pattern_def_get(k)->info.name;
		size_t d = mk_edit_distance(name, cand);
		if (d < bestd) {
			bestd = d;
			best = cand;
		}
	}
	return best;
}
