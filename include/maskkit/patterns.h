/*
 * maskkit patterns: the registered pattern families (local, bigbird, ...)
 * and their parameters, as `maskkit patterns` lists them.
 */
#ifndef MK_PATTERNS_H
#define MK_PATTERNS_H

#include "core.h"
#include "result.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- patterns ------------------------------------------------------------ */

/* What a pattern parameter holds: an integer, 0 or 1, or a list of
 * integers ("1,4,9"). */
typedef enum mk_param_kind { MK_PARAM_INT, MK_PARAM_BOOL, MK_PARAM_LIST } mk_param_kind;
/* "int", "bool", "list" ("?" outside the enum). */
const char *mk_param_kind_name(mk_param_kind k);

/* Read-only description of the registered patterns, for `maskkit patterns`. */
typedef struct mk_param_info {
	const char *name;
	mk_param_kind kind;
	const char *def;  /* default as text, NULL when required */
	const char *doc;
} mk_param_info;

typedef struct mk_pattern_info {
	const char *name;
	const char *summary;   /* one-line definition */
	const char *shorthand; /* parameter set by a numeric suffix (local2), or NULL */
	const mk_param_info *params;
	size_t nparams;
} mk_pattern_info;

size_t mk_pattern_count(void);
const mk_pattern_info *mk_pattern_get(size_t k);
const mk_pattern_info *mk_pattern_find(const char *name);

/* ---- the list, as `maskkit patterns` reports it -------------------------- */

/* One parameter of a pattern (mk_pattern_param_record: name, kind, default,
 * doc; text and tables also name the pattern). */
typedef struct mk_pattern_param_row {
	const char *pattern;
	const char *name, *kind; /* kind: mk_param_kind_name */
	const char *def;         /* "" when required */
	const char *doc;
} mk_pattern_param_row;

/* One pattern (mk_pattern_record: name, summary, shorthand when it has one,
 * params: a list of mk_pattern_param_record). */
typedef struct mk_pattern_row {
	const char *name, *summary, *shorthand;
	const mk_pattern_param_row *params; /* into the list's params */
	int64_t nparams;
} mk_pattern_row;

typedef struct mk_pattern_list {
	mk_pattern_row *patterns;     /* mk_pattern_count() of them, in order */
	size_t count;
	mk_pattern_param_row *params; /* every pattern's parameters, in order */
	size_t nparams;
} mk_pattern_list;

/* The registered patterns as rows for mk_emit (MK_ENOMEM). */
int mk_pattern_list_get(mk_pattern_list *out);
void mk_pattern_list_release(mk_pattern_list *l);
extern const struct mk_record mk_pattern_record;
extern const struct mk_record mk_pattern_param_record;

#ifdef __cplusplus
}
#endif
#endif /* MK_PATTERNS_H */
