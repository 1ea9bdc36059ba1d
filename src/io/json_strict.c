/*
 * Every JSON file maskkit reads as data (tokenizer.json, config.json, the
 * safetensors index and header, mask files) is parsed here, so that they
 * all refuse the same things: a duplicated key, which cJSON reads as its
 * first value where Python and transformers take the last (a model would
 * be built from another config than its users see), and anything after
 * the value, which a truncated concatenation leaves.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "core.h"
#include "json_strict.h"

static int js_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The first key that one object of x holds twice, or NULL (*ret set on
 * running out of memory). */
static const char *js_duplicate(const cJSON *x, int *ret)
{
	const cJSON *c;
	const char *dup = NULL;
	int n = 0;

	cJSON_ArrayForEach(c, x) {
		if ((dup = js_duplicate(c, ret)) || *ret)
			return dup;
		n++;
	}
	if (cJSON_IsObject(x) && n > 1) {
		const char **keys = malloc((size_t)n * sizeof *keys);
		int k = 0;
		if (!keys) {
			*ret = mk_error_set(MK_ENOMEM, "out of memory");
			return NULL;
		}
		cJSON_ArrayForEach(c, x)
			keys[k++] = c->string;
		qsort(keys, (size_t)n, sizeof *keys, js_cmp);
		for (k = 1; k < n && !dup; k++)
			if (!strcmp(keys[k - 1], keys[k]))
				dup = keys[k];
		free(keys);
	}
	return dup;
}

int mk_json_parse_strict(const char *file, const char *text, size_t len, cJSON **out)
{
	const char *end = NULL, *dup;
	cJSON *j;
	int ret = MK_OK;

	*out = NULL;
	if (strlen(text) != len)
		return mk_error_set(MK_EFORMAT, "'%s': not valid JSON (a NUL byte at byte %zu)", file,
				    strlen(text) + 1);
	j = cJSON_ParseWithOpts(text, &end, 1);
	if (!j) {
		/* the value itself, or what follows it? */
		cJSON *v = cJSON_ParseWithOpts(text, &end, 0);
		size_t at = end ? (size_t)(end - text) + 1 : 0;
		cJSON_Delete(v);
		if (v)
			return mk_error_set(MK_EFORMAT, "'%s': text after the JSON value (byte %zu)",
					    file, at);
		return mk_error_set(MK_EFORMAT, "'%s': not valid JSON (at byte %zu)", file,
				    (size_t)(cJSON_GetErrorPtr() ? cJSON_GetErrorPtr() - text + 1 : 0));
	}
	dup = js_duplicate(j, &ret);
	if (!ret && dup)
		ret = mk_error_set(MK_EFORMAT, "'%s': the key \"%.80s\" appears twice in one object "
				   "(JSON readers disagree on which one counts)", file, dup);
	if (ret) {
		cJSON_Delete(j);
		return ret;
	}
	*out = j;
	return MK_OK;
}
