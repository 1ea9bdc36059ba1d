/*
 * maskkit expressions: the mask language (patterns, files and set
 * operations), binding an expression to a size, and cursors that generate
 * its rows and columns.
 */
#ifndef MK_EXPR_H
#define MK_EXPR_H

#include "core.h"
#include "mask.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- expressions: the mask language -------------------------------------- */

/*
 *   expr   := prod { ('+' | '-') prod }        left to right
 *   prod   := term { '&' term }                '&' binds tighter, like a product
 *   term   := NAME [ '(' args ')' ] | FILE | '(' expr ')' | '~' term
 *   NAME   := pattern name, optionally with a numeric suffix (local2)
 *   args   := [ value { ',' value } ] | key '=' value { ',' value } { ',' key '=' ... }
 *   FILE   := path ending in .json .h5 .npy .txt
 * '+' is OR, '&' is AND, '-' is AND-NOT, '~' is NOT.
 */
typedef struct mk_expr mk_expr;

enum { MK_OP_OR = 1, MK_OP_AND, MK_OP_ANDNOT, MK_OP_NOT };

/* Parses text; unknown names and bad parameters are reported with the
 * column (1-based) of the offending character. */
int mk_expr_parse(const char *text, mk_expr **out);
/* A leaf that reads a mask file (format from its extension). */
int mk_expr_file(const char *path, mk_expr **out);
/* The mask files e reads, in the order they appear: the first cap of them
 * into paths (owned by e); returns how many there are. */
size_t mk_expr_files(const mk_expr *e, const char **paths, size_t cap);
/* An operand as the commands take it: an existing regular file (its name
 * with a '/' or a mask file's extension; FILE.h5:/PATH its dataset) is read
 * as a mask (mk_expr_file), anything else is parsed as an expression, so a
 * file named like a pattern ("causal") does not shadow the pattern. */
int mk_expr_operand(const char *arg, mk_expr **out);
/* Joins a and b under op (takes ownership of both; frees them on failure). */
int mk_expr_join(int op, mk_expr *a, mk_expr *b, mk_expr **out);
void mk_expr_free(mk_expr *e);
/* The expression as text, in a canonical form. */
const char *mk_expr_text(const mk_expr *e);

/* Where a rectangular mask's queries sit among its keys.  Bottom-right:
 * query i is key position i + kv_len - n, the queries the last n positions
 * of the keys' sequence (a KV cache; flash-attn's causal, SDPA's
 * causal_lower_right).  Top-left: query i is key position i (SDPA's
 * is_causal, attention-gym's causal_mask).  Square masks are the same
 * either way. */
typedef enum mk_align { MK_ALIGN_BOTTOM_RIGHT = 0, MK_ALIGN_TOP_LEFT = 1 } mk_align;

typedef struct mk_bind_opts {
	int64_t n;           /* size, or queries (q_len) of a rectangular mask; 0 = take
			      * it (and kv_len) from the mask files in the expression */
	int64_t kv_len;      /* keys; 0 = n (square).  A rectangular mask is the n x
			      * kv_len corner (see align) of the patterns laid out on
			      * max(n, kv_len) positions */
	mk_align align;      /* which corner: bottom-right (0, the default) or top-left.
			      * A mask file has its own cells: align does not move
			      * them, it only says where measure puts each query's
			      * own key (the diagonal and the causal check).  Here,
			      * after kv_len, as python/maskkit/_lib.py has it */
	uint64_t seed;       /* seed for random terms that give none */
	uint64_t max_memory; /* cap for materialised data; 0 = default */
	bool need_cols;      /* prepare column access (mk_cursor_col) */
} mk_bind_opts;

/* Resolves n, loads files, validates parameters against n and precomputes
 * what the row generators need.  Must be called once before cursors. */
int mk_expr_bind(mk_expr *e, const mk_bind_opts *o);
/* Rows (queries); mk_expr_kv_len: columns (keys), equal to n when square. */
int64_t mk_expr_n(const mk_expr *e);
int64_t mk_expr_kv_len(const mk_expr *e);
/* The alignment it was bound with (bottom-right when square). */
mk_align mk_expr_align(const mk_expr *e);
/* "bottom-right" or "top-left" (NULL for a value that is neither). */
const char *mk_align_name(mk_align a);
/* mk_expr_operand bound at n queries and kv keys (bind's n and kv_len are
 * not used): a mask whose files fix another size is an MK_EINVAL error
 * ("the mask 'm.npy' has n = 8 but the tensors need n = 4"). */
int mk_expr_operand_bound(const char *spec, const mk_bind_opts *bind, int64_t n, int64_t kv,
			  mk_expr **e);
/* A canonical description of the bound leaves and their parameters, as
 * text like "local(w=2,block=1) + random(size=1,seed=0)". */
const char *mk_expr_params(const mk_expr *e);
/* True when the expression was bound with need_cols. */
bool mk_expr_has_cols(const mk_expr *e);
/* True when every leaf is symmetric by construction (sound, not complete). */
bool mk_expr_known_symmetric(const mk_expr *e);

/* A cursor generates rows (and columns) of a bound expression.  Cursors are
 * not shared between threads; make one per thread. */
typedef struct mk_cursor mk_cursor;
int mk_cursor_new(const mk_expr *e, mk_cursor **out);
void mk_cursor_free(mk_cursor *c);
/* Fills dst with row i (mk_words(kv_len) words) / column j (mk_words(n)
 * words); every word is written.
 * Columns need the expression bound with need_cols, else MK_EINVAL. */
void mk_cursor_row(mk_cursor *c, int64_t i, uint64_t *dst);
int mk_cursor_col(mk_cursor *c, int64_t j, uint64_t *dst);

/* Materialises a bound expression (checked against its max_memory). */
int mk_expr_to_mask(const mk_expr *e, mk_mask **out);

#ifdef __cplusplus
}
#endif
#endif /* MK_EXPR_H */
