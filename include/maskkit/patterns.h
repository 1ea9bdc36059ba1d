/*
 * maskkit patterns: the registered pattern families (local, bigbird, ...)
 * and their parameters, as `maskkit patterns` lists them.
 */
#ifndef MK_PATTERNS_H
#define MK_PATTERNS_H

#include "core.h"

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

#ifdef __cplusplus
}
#endif
#endif /* MK_PATTERNS_H */
