/* The expression tree, shared by the parser (expr.c) and evaluator (expr_eval.c). */
#ifndef MK_EXPR_INTERNAL_H
#define MK_EXPR_INTERNAL_H

#include <stdarg.h>
#include "internal.h"
#include "mask.h"
#include "expr.h"
#include "pattern.h"

enum { MK_NODE_PATTERN = 1, MK_NODE_FILE, MK_NODE_OP };

typedef struct mk_node {
	int kind;
	int op;                /* MK_OP_* for MK_NODE_OP */
	struct mk_node *a, *b; /* b is NULL for MK_OP_NOT */
	mk_term term;          /* MK_NODE_PATTERN */
	char *path;            /* MK_NODE_FILE */
	mk_mask *mask, *maskT;
	size_t slot;           /* offset of this node's scratch in a cursor (words) */
} mk_node;

struct mk_expr {
	mk_node *root;
	char *text;
	char *params;
	int64_t n;     /* rows: queries (q_len) */
	int64_t kv;    /* columns: keys (kv_len); n when square */
	int64_t grid;  /* max(n, kv): patterns are laid out on grid x grid and a
			* rectangular mask is its n x kv corner named by align */
	mk_align align;
	uint64_t max_memory;
	size_t scratch_words;
	bool bound, cols;
};

void mk_node_free(mk_node *x);
/* Appends the node as an expression, with all parameters when `full`. */
void mk_node_print(const mk_node *x, mk_sb *b, bool full, int parent_prec);

/* Sets an MK_EINVAL message naming the 1-based column of text[pos]. */
int mk_expr_error(const char *text, size_t pos, const char *what);
/* Parses one term's argument list "(...)" starting at s[*pos] == '('. */
int mk_expr_parse_args(const char *text, size_t *pos, mk_term *t);
/* Closest registered pattern name to `name` within a small edit distance, or NULL. */
const char *mk_expr_suggest(const char *name);

#endif
