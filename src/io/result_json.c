/*
 * Described results as JSON (result.h; the other outputs are result.c's).
 * JSON goes through cJSON's tree and printer, so its bytes are those the
 * commands' own cJSON code used to write for the same keys in the same
 * order (tests/check_result.c compares them with trees built by hand).
 */
#include "config.h"
#include <cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "result.h"
#include "result_internal.h"

static cJSON *res_json_obj(const mk_record *r, const void *rec);

static cJSON *res_json_numbers(const void *rec, const mk_field *f)
{
	cJSON *a = cJSON_CreateArray();
	const void *v = res_ptr(rec, f);
	int64_t n = v ? res_count(rec, f) : 0;

	for (int64_t k = 0; a && k < n; k++) {
		double x = f->type == MK_FT_REALS ? ((const double *)v)[k]
						  : (double)((const int64_t *)v)[k];
		if (!cJSON_AddItemToArray(a, isfinite(x) ? cJSON_CreateNumber(x) : cJSON_CreateNull()))
			break;
	}
	return a;
}

static cJSON *res_json_value(const void *rec, const mk_field *f);

/* An array of objects; MK_FF_BARE: of the elements' first fields' values;
 * MK_FF_KEYED: an object of the elements' second fields named by their
 * first. */
static cJSON *res_json_list(const void *rec, const mk_field *f)
{
	bool keyed = f->flags & MK_FF_KEYED;
	cJSON *a = keyed ? cJSON_CreateObject() : cJSON_CreateArray();
	const char *base = res_ptr(rec, f);
	int64_t n = base ? res_count(rec, f) : 0;

	for (int64_t k = 0; a && k < n; k++) {
		const void *el = base + k * f->sub->size;
		cJSON *v = keyed ? res_json_value(el, &f->sub->fields[1])
		     : (f->flags & MK_FF_BARE) ? res_json_value(el, &f->sub->fields[0])
					      : res_json_obj(f->sub, el);
		bool ok = keyed ? cJSON_AddItemToObject(a, res_ptr(el, &f->sub->fields[0]), v)
				: cJSON_AddItemToArray(a, v);
		if (!v || !ok) {
			cJSON_Delete(v);
			break;
		}
	}
	return a;
}

static cJSON *res_json_strings(const void *rec, const mk_field *f)
{
	cJSON *a = cJSON_CreateArray();
	const char *const *v = res_ptr(rec, f);
	int64_t n = v ? res_count(rec, f) : 0;

	for (int64_t k = 0; a && k < n; k++)
		if (!cJSON_AddItemToArray(a, cJSON_CreateString(v[k])))
			break;
	return a;
}

static cJSON *res_json_value(const void *rec, const mk_field *f)
{
	char buf[32];

	if (!res_present(rec, f))
		return cJSON_CreateNull();
	switch (f->type) {
	case MK_FT_I64:
		return cJSON_CreateNumber((double)*(const int64_t *)res_at(rec, f->offset));
	case MK_FT_U64: {
		uint64_t v = *(const uint64_t *)res_at(rec, f->offset);
		if (f->flags & MK_FF_EXACT) {
			snprintf(buf, sizeof buf, "%" PRIu64, v);
			return cJSON_CreateRaw(buf);
		}
		return cJSON_CreateNumber((double)v);
	}
	case MK_FT_INT:
		return cJSON_CreateNumber((double)*(const int *)res_at(rec, f->offset));
	case MK_FT_REAL:
		return cJSON_CreateNumber(res_real(rec, f));
	case MK_FT_STR:
		return cJSON_CreateString(res_ptr(rec, f));
	case MK_FT_BOOL:
		return cJSON_CreateBool(*(const bool *)res_at(rec, f->offset));
	case MK_FT_OBJ:
		return res_json_obj(f->sub, res_at(rec, f->offset));
	case MK_FT_PTR:
		return res_json_obj(f->sub, res_ptr(rec, f));
	case MK_FT_LIST:
		return res_json_list(rec, f);
	case MK_FT_REALS:
	case MK_FT_I64S:
		return res_json_numbers(rec, f);
	case MK_FT_CHARS:
		return cJSON_CreateString(res_at(rec, f->offset));
	case MK_FT_STRS:
		return res_json_strings(rec, f);
	}
	return NULL;
}

static cJSON *res_json_obj(const mk_record *r, const void *rec)
{
	cJSON *o = cJSON_CreateObject();

	for (size_t k = 0; o && k < r->count; k++) {
		const mk_field *f = &r->fields[k];
		cJSON *v;
		if (f->flags & (MK_FF_TEXT | MK_FF_NOJSON))
			continue;
		if ((f->flags & MK_FF_OMIT) && !res_present(rec, f) &&
		    (!(f->flags & MK_FF_KEEP_NULL) || (f->present && !f->present(rec))))
			continue;
		v = res_json_value(rec, f);
		if (!v || !cJSON_AddItemToObject(o, f->name, v)) {
			cJSON_Delete(v);
			cJSON_Delete(o);
			return NULL;
		}
	}
	return o;
}

/* MK_EMIT_COMPACT: each record unindented on its line, inside "[" and "]"
 * lines for an array. */
static char *res_json_compact(const mk_record *r, const void *rows, size_t count, unsigned flags)
{
	bool array = count != 1 || (flags & MK_EMIT_ARRAY);
	size_t len = 0, cap = 64;
	char *s = malloc(cap);

	if (s && array)
		len = (size_t)snprintf(s, cap, "[\n");
	for (size_t k = 0; s && k < count; k++) {
		cJSON *o = res_json_obj(r, (const char *)rows + k * r->size);
		char *t = o ? cJSON_PrintUnformatted(o) : NULL;
		size_t need = len + (t ? strlen(t) : 0) + 8;
		char *grown = t && need > cap ? realloc(s, cap = 2 * need) : s;
		cJSON_Delete(o);
		if (!t || !grown) {
			free(t);
			free(grown ? grown : s);
			return NULL;
		}
		s = grown;
		len += (size_t)snprintf(s + len, cap - len, "%s%s", k ? ",\n" : "", t);
		free(t);
	}
	if (s && array)
		snprintf(s + len, cap - len, "%s]", count ? "\n" : "");
	return s;
}

char *mk_emit_json_text(const mk_record *r, const void *rows, size_t count, unsigned flags)
{
	cJSON *x = NULL;
	char *s = NULL;

	if (flags & MK_EMIT_COMPACT)
		return res_json_compact(r, rows, count, flags);
	if (count == 1 && !(flags & MK_EMIT_ARRAY)) {
		x = res_json_obj(r, rows);
	} else if ((x = cJSON_CreateArray())) {
		for (size_t k = 0; k < count; k++) {
			cJSON *o = res_json_obj(r, (const char *)rows + k * r->size);
			if (!o || !cJSON_AddItemToArray(x, o)) {
				cJSON_Delete(o);
				cJSON_Delete(x);
				return NULL;
			}
		}
	}
	if (x)
		s = cJSON_Print(x);
	cJSON_Delete(x);
	return s;
}
