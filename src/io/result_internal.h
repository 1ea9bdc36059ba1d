/* What the emitter's two files share (result.c: text, tables, CSV;
 * result_json.c: JSON): reading a described field out of its record. */
#ifndef MK_RESULT_INTERNAL_H
#define MK_RESULT_INTERNAL_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "result.h"

static inline const void *res_at(const void *rec, size_t offset)
{
	return (const char *)rec + offset;
}

static inline int64_t res_count(const void *rec, const mk_field *f)
{
	int64_t n;
	memcpy(&n, res_at(rec, f->count_offset), sizeof n);
	return n > 0 ? n : 0;
}

static inline const void *res_ptr(const void *rec, const mk_field *f)
{
	const void *p;
	memcpy(&p, res_at(rec, f->offset), sizeof p);
	return p;
}

static inline double res_real(const void *rec, const mk_field *f)
{
	double v;
	memcpy(&v, res_at(rec, f->offset), sizeof v);
	return v;
}

/* Absent fields print as null, '-' or an empty cell. */
static inline bool res_present(const void *rec, const mk_field *f)
{
	if (f->present && !f->present(rec))
		return false;
	switch (f->type) {
	case MK_FT_REAL:
		return isfinite(res_real(rec, f));
	case MK_FT_STR:
	case MK_FT_PTR:
		return res_ptr(rec, f) != NULL;
	default:
		return true;
	}
}

#endif
