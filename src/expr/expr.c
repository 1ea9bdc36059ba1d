/*
 * Parsing expressions into a tree of pattern terms, mask files and set
 * operations, and printing trees back as text.  Grammar in expr.h.
 */
#include "config.h"
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "expr_internal.h"

static const char *const mk_file_exts[] = {".json", ".h5", ".hdf5", ".npy", ".txt", ".npz"};

typedef struct mk_parser {
	const char *text;
	size_t pos;
	int depth;
} mk_parser;

static int mk_parse_sum(mk_parser *p, mk_node **out);

/* ---- strings ---- */

/* ---- nodes ---- */

static mk_node *mk_node_alloc(int kind)
{
	mk_node *x = calloc(1, sizeof *x);
	if (x)
		x->kind = kind;
	return x;
}

void mk_node_free(mk_node *x)
{
	if (!x)
		return;
	mk_node_free(x->a);
	mk_node_free(x->b);
	if (x->kind == MK_NODE_PATTERN)
		mk_term_release(&x->term);
	free(x->path);
	mk_mask_free(x->mask);
	mk_mask_free(x->maskT);
	free(x);
}

static int mk_op_prec(int op)
{
	return op == MK_OP_NOT ? 3 : op == MK_OP_AND ? 2 : 1;
}

static void mk_print_term(const mk_term *t, mk_sb *b, bool full)
{
	const mk_pattern_info *in = &t->def->info;
	const char *sep = "(";
	mk_sb_printf(b, "%s", in->name);
	for (size_t k = 0; k < in->nparams; k++) {
		const mk_pval *v = &t->p[k];
		if (!full && !v->given)
			continue;
		if (in->params[k].kind == MK_PARAM_LIST) {
			if (v->len == 0 && !v->given)
				continue;
			mk_sb_printf(b, "%s%s=", sep, in->params[k].name);
			for (size_t m = 0; m < v->len; m++)
				mk_sb_printf(b, "%s%" PRId64, m ? "," : "", v->list[m]);
		} else if (full && strcmp(in->params[k].name, "seed") == 0) {
			mk_sb_printf(b, "%sseed=%" PRIu64, sep, t->seed);
		} else {
			mk_sb_printf(b, "%s%s=%" PRId64, sep, in->params[k].name, v->i);
		}
		sep = ",";
	}
	if (t->block > 1)
		mk_sb_printf(b, "%sblock=%" PRId64, sep, t->block), sep = ",";
	if (*sep == ',')
		mk_sb_printf(b, ")");
}

void mk_node_print(const mk_node *x, mk_sb *b, bool full, int parent_prec)
{
	static const char *const opstr[] = {"", " + ", " & ", " - ", "~"};
	int prec;
	if (x->kind == MK_NODE_PATTERN) {
		mk_print_term(&x->term, b, full);
		return;
	}
	if (x->kind == MK_NODE_FILE) {
		mk_sb_printf(b, "%s", x->path);
		return;
	}
	prec = mk_op_prec(x->op);
	if (prec < parent_prec)
		mk_sb_printf(b, "(");
	if (x->op == MK_OP_NOT) {
		mk_sb_printf(b, "~");
		mk_node_print(x->a, b, full, 4);
	} else {
		mk_node_print(x->a, b, full, prec);
		mk_sb_printf(b, "%s", opstr[x->op]);
		/* left-associative: a right operand of equal precedence needs parentheses */
		mk_node_print(x->b, b, full, prec + 1);
	}
	if (prec < parent_prec)
		mk_sb_printf(b, ")");
}

/* ---- the parser ---- */

static int mk_parse_error(const mk_parser *p, size_t pos, const char *what)
{
	return mk_expr_error(p->text, pos, what);
}

static void mk_skip(mk_parser *p)
{
	while (p->text[p->pos] == ' ' || p->text[p->pos] == '\t')
		p->pos++;
}

static bool mk_file_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '.' || c == '/' || c == '-' || c == ':';
}

static bool mk_term_end(char c)
{
	return !c || c == ' ' || c == '\t' || c == '+' || c == '&' || c == ')' || c == '-';
}

/* True when s[0..e) is FILE.h5:/path (or .hdf5): a dataset of an HDF5 file. */
static bool mk_h5_spec(const char *s, size_t e)
{
	for (size_t c = 1; c + 1 < e; c++) {
		if (s[c] != ':' || s[c + 1] != '/')
			continue;
		if ((c > 3 && strncasecmp(s + c - 3, ".h5", 3) == 0) ||
		    (c > 5 && strncasecmp(s + c - 5, ".hdf5", 5) == 0))
			return true;
	}
	return false;
}

/* Length of a file name at s, or 0: the shortest run of file characters that
 * ends in a mask extension at a term boundary ("a-b.npy" is one file,
 * "strided-diag" is not a file), or FILE.h5:/path up to one ('-' ends it). */
static size_t mk_file_len(const char *s)
{
	for (size_t e = 1; mk_file_char(s[e - 1]); e++) {
		if (!mk_term_end(s[e]))
			continue;
		if (mk_h5_spec(s, e))
			return e;
		for (size_t k = 0; k < sizeof mk_file_exts / sizeof *mk_file_exts; k++) {
			size_t xl = strlen(mk_file_exts[k]);
			if (e > xl && strncasecmp(s + e - xl, mk_file_exts[k], xl) == 0)
				return e;
		}
	}
	return 0;
}

static int mk_parse_file(mk_parser *p, size_t len, mk_node **out)
{
	mk_node *x = mk_node_alloc(MK_NODE_FILE);
	if (!x || !(x->path = strndup(p->text + p->pos, len))) {
		free(x);
		return mk_error_set(MK_ENOMEM, "out of memory");
	}
	p->pos += len;
	*out = x;
	return MK_OK;
}

static int mk_unknown_pattern(const mk_parser *p, size_t at, const char *name)
{
	const char *hint = mk_expr_suggest(name);
	char msg[200];
	if (hint)
		snprintf(msg, sizeof msg, "unknown pattern '%s' (did you mean '%s'?)", name, hint);
	else
		snprintf(msg, sizeof msg, "unknown pattern '%s' (see 'maskkit patterns')", name);
	return mk_parse_error(p, at, msg);
}

/* NAME[digits][(args)] */
static int mk_parse_pattern(mk_parser *p, mk_node **out)
{
	char name[32], msg[160];
	size_t at = p->pos, len = 0, dl;
	const mk_pattern_def *def;
	mk_node *x = NULL;
	int ret;
	while (isalpha((unsigned char)p->text[p->pos + len]) || p->text[p->pos + len] == '_')
		len++;
	if (len == 0)
		return mk_parse_error(p, at, p->text[at] ? "expected a pattern name, a mask file or '('"
				      : at == 0 || strspn(p->text, " \t") == at ? "empty expression"
				      : "expected a term after the operator");
	if (len >= sizeof name)
		return mk_parse_error(p, at, "pattern name too long");
	memcpy(name, p->text + at, len);
	name[len] = '\0';
	def = mk_pattern_def_find(name);
	if (!def)
		return mk_unknown_pattern(p, at, name);
	x = mk_node_alloc(MK_NODE_PATTERN);
	if (!x)
		return mk_error_set(MK_ENOMEM, "out of memory");
	if ((ret = mk_term_init(&x->term, def)))
		goto out;
	p->pos += len;
	for (dl = 0; isdigit((unsigned char)p->text[p->pos + dl]); dl++)
		;
	if (dl > 0) {
		int k = def->info.shorthand ? mk_term_param_index(def, def->info.shorthand) : -1;
		char *end;
		long long v;
		if (k < 0) {
			snprintf(msg, sizeof msg, "'%s' takes no numeric suffix", name);
			ret = mk_parse_error(p, p->pos, msg);
			goto out;
		}
		v = strtoll(p->text + p->pos, &end, 10);
		if (dl > 15 || v < 0) {
			ret = mk_parse_error(p, p->pos, "number is too large");
			goto out;
		}
		x->term.p[k].i = v;
		x->term.p[k].given = true;
		p->pos += dl;
	}
	if (isalnum((unsigned char)p->text[p->pos]) || p->text[p->pos] == '_') {
		ret = mk_parse_error(p, p->pos, "unexpected character after the pattern name");
		goto out;
	}
	if (p->text[p->pos] == '(' && (ret = mk_expr_parse_args(p->text, &p->pos, &x->term)))
		goto out;
	*out = x;
	return MK_OK;
out:
	mk_node_free(x);
	return ret;
}

static int mk_make_op(int op, mk_node *a, mk_node *b, mk_node **out)
{
	mk_node *x = mk_node_alloc(MK_NODE_OP);
	if (!x) {
		mk_node_free(a);
		mk_node_free(b);
		return mk_error_set(MK_ENOMEM, "out of memory");
	}
	x->op = op;
	x->a = a;
	x->b = b;
	*out = x;
	return MK_OK;
}

static int mk_parse_unary(mk_parser *p, mk_node **out)
{
	size_t flen, at;
	mk_node *x = NULL;
	int ret;
	mk_skip(p);
	at = p->pos;
	if (++p->depth > 200)
		return mk_parse_error(p, at, "expression nested too deeply");
	if (p->text[at] == '~') {
		p->pos++;
		if ((ret = mk_parse_unary(p, &x)))
			return ret;
		ret = mk_make_op(MK_OP_NOT, x, NULL, out);
	} else if (p->text[at] == '(') {
		p->pos++;
		if ((ret = mk_parse_sum(p, &x)))
			return ret;
		mk_skip(p);
		if (p->text[p->pos] != ')') {
			mk_node_free(x);
			return mk_parse_error(p, p->pos, "missing ')'");
		}
		p->pos++;
		*out = x;
		ret = MK_OK;
	} else if ((flen = mk_file_len(p->text + at)) > 0) {
		ret = mk_parse_file(p, flen, out);
	} else {
		ret = mk_parse_pattern(p, out);
	}
	p->depth--;
	return ret;
}

/* The operator at the parser's position for precedence level `level`
 * (1: '+' '-', 2: '&'), or 0. */
static int mk_peek_op(mk_parser *p, int level)
{
	char c;
	mk_skip(p);
	c = p->text[p->pos];
	if (level == 1)
		return c == '+' ? MK_OP_OR : c == '-' ? MK_OP_ANDNOT : 0;
	return c == '&' ? MK_OP_AND : 0;
}

/* Left-associative binary operators of one precedence level. */
static int mk_parse_level(mk_parser *p, int level, mk_node **out)
{
	mk_node *a = NULL, *b = NULL;
	int ret = level == 2 ? mk_parse_unary(p, &a) : mk_parse_level(p, 2, &a), op;
	while (!ret && (op = mk_peek_op(p, level)) != 0) {
		p->pos++;
		ret = level == 2 ? mk_parse_unary(p, &b) : mk_parse_level(p, 2, &b);
		if (!ret && (ret = mk_make_op(op, a, b, &a)))
			a = NULL;
	}
	if (ret) {
		mk_node_free(a);
		return ret;
	}
	*out = a;
	return MK_OK;
}

static int mk_parse_sum(mk_parser *p, mk_node **out)
{
	return mk_parse_level(p, 1, out);
}

static int mk_expr_wrap(mk_node *root, mk_expr **out)
{
	mk_expr *e = calloc(1, sizeof *e);
	mk_sb b = {0};
	if (e) {
		mk_node_print(root, &b, false, 0);
		e->text = mk_sb_take(&b);
	}
	if (!e || !e->text) {
		free(e);
		mk_node_free(root);
		return mk_error_set(MK_ENOMEM, "out of memory");
	}
	e->root = root;
	*out = e;
	return MK_OK;
}

int mk_expr_parse(const char *text, mk_expr **out)
{
	mk_parser p = {.text = text, .pos = 0, .depth = 0};
	mk_node *root = NULL;
	int ret;
	*out = NULL;
	if (strlen(text) > 65536)
		return mk_error_set(MK_EINVAL, "expression is too long (%zu characters)", strlen(text));
	if ((ret = mk_parse_sum(&p, &root)))
		return ret;
	mk_skip(&p);
	if (p.text[p.pos]) {
		mk_node_free(root);
		return mk_parse_error(&p, p.pos, p.text[p.pos] == ')' ? "unbalanced ')'"
				      : "expected an operator (+ & -) or the end");
	}
	if ((ret = mk_expr_wrap(root, out)))
		return ret;
	/* keep the user's own words: they are what the papers write */
	free((*out)->text);
	(*out)->text = strdup(text);
	if (!(*out)->text) {
		mk_expr_free(*out);
		*out = NULL;
		return mk_error_set(MK_ENOMEM, "out of memory");
	}
	return MK_OK;
}

int mk_expr_file(const char *path, mk_expr **out)
{
	mk_node *x = mk_node_alloc(MK_NODE_FILE);
	*out = NULL;
	if (!x || !(x->path = strdup(path))) {
		free(x);
		return mk_error_set(MK_ENOMEM, "out of memory");
	}
	return mk_expr_wrap(x, out);
}

int mk_expr_join(int op, mk_expr *a, mk_expr *b, mk_expr **out)
{
	mk_node *ra = a ? a->root : NULL, *rb = b ? b->root : NULL, *x;
	int ret;
	*out = NULL;
	if (!a || a->bound || (b && b->bound) || (op != MK_OP_NOT && !b)) {
		mk_expr_free(a);
		mk_expr_free(b);
		return mk_error_set(MK_EINVAL, "mk_expr_join: bad operands");
	}
	a->root = NULL;
	if (b)
		b->root = NULL;
	mk_expr_free(a);
	mk_expr_free(b);
	if ((ret = mk_make_op(op, ra, rb, &x)))
		return ret;
	return mk_expr_wrap(x, out);
}

void mk_expr_free(mk_expr *e)
{
	if (!e)
		return;
	mk_node_free(e->root);
	free(e->text);
	free(e->params);
	free(e);
}

const char *mk_expr_text(const mk_expr *e)
{
	return e->text;
}

static size_t mk_expr_files_at(const mk_node *x, const char **paths, size_t cap, size_t k)
{
	if (!x)
		return k;
	if (x->kind == MK_NODE_FILE) {
		if (k < cap)
			paths[k] = x->path;
		return k + 1;
	}
	return mk_expr_files_at(x->b, paths, cap, mk_expr_files_at(x->a, paths, cap, k));
}

size_t mk_expr_files(const mk_expr *e, const char **paths, size_t cap)
{
	return mk_expr_files_at(e->root, paths, cap, 0);
}
