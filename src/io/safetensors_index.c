/*
 * Sharded safetensors checkpoints: model.safetensors.index.json maps each
 * tensor name to the shard file that holds it ("weight_map"; "metadata" is
 * ignored).  Shard names must be plain file names in the index's
 * directory: an index must not make us open files elsewhere.  Each shard is
 * opened and checked once (safetensors.c); the tensors are those of the
 * map, each looked up in the shard the map names.
 */
#include "config.h"
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "safetensors.h"
#include "json_strict.h"

#define STI_MAX_BYTES (64u << 20) /* real indexes are tens of kilobytes */
#define STI_MAX_SHARDS 4096       /* each holds a file descriptor */

static bool sti_plain(const char *name)
{
	return *name && !strchr(name, '/') && !strchr(name, '\\') && strcmp(name, ".") &&
	       strcmp(name, "..");
}

/* The shard number of file `name`, opening it on first sight. */
static int sti_shard(mk_st *st, const char *index, const char *dir, const char *name, int *shard)
{
	char path[4096];
	size_t dlen = strlen(dir);

	for (int s = 0; s < st->nshards; s++)
		if (!strcmp(st->shards[s].path + dlen + 1, name)) {
			*shard = s;
			return MK_OK;
		}
	if (st->nshards >= STI_MAX_SHARDS)
		return mk_error_set(MK_EFORMAT, "'%s': more than %d shards", index, STI_MAX_SHARDS);
	if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
		return mk_error_set(MK_EINVAL, "'%s': shard path too long", index);
	*shard = st->nshards;
	return mk_st_parse_file(st, path);
}

/* Tensors sorted by (name, shard): the map's lookups. */
static int sti_cmp(const void *a, const void *b)
{
	const mk_st_tensor *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : (x->shard > y->shard) - (x->shard < y->shard);
}

/* Keeps, of every shard's tensors, those the map places there. */
static int sti_select(mk_st *st, const char *index, const cJSON *map)
{
	size_t n = (size_t)cJSON_GetArraySize(map), kept = 0;
	mk_st_tensor *sel = calloc(n ? n : 1, sizeof *sel), key;
	bool *used = calloc(st->count ? st->count : 1, sizeof *used);
	const cJSON *x;
	int ret = MK_OK;

	if (!sel || !used) {
		free(sel);
		free(used);
		return mk_error_set(MK_ENOMEM, "out of memory");
	}
	if (st->count)
		qsort(st->t, st->count, sizeof *st->t, sti_cmp);
	cJSON_ArrayForEach(x, map) {
		mk_st_tensor *t;
		key = (mk_st_tensor){.name = x->string, .shard = x->valueint};
		t = st->count ? bsearch(&key, st->t, st->count, sizeof *st->t, sti_cmp) : NULL;
		if (!t) {
			ret = mk_error_set(MK_EFORMAT, "'%s': the weight_map puts '%s' in '%s', which "
					   "has no such tensor", index, x->string, x->valuestring);
			break;
		}
		if (used[t - st->t]) {
			ret = mk_error_set(MK_EFORMAT, "'%s': '%s' is mapped twice", index, x->string);
			break;
		}
		used[t - st->t] = true;
		sel[kept++] = *t; /* the name moves with it */
	}
	for (size_t k = 0; k < st->count; k++)
		if (!used[k])
			free(st->t[k].name);
	free(used);
	free(st->t);
	st->t = sel;
	st->count = kept;
	return ret ? ret : mk_st_sort(st, index);
}

/* Each map entry's shard: its number, kept in valueint while selecting. */
static int sti_open_shards(mk_st *st, const char *index, const char *dir, cJSON *map)
{
	cJSON *x;
	int ret;

	if (!cJSON_IsObject(map))
		return mk_error_set(MK_EFORMAT, "'%s': no \"weight_map\" object", index);
	if (!map->child)
		return mk_error_set(MK_EFORMAT, "'%s': the weight_map is empty", index);
	cJSON_ArrayForEach(x, map) {
		int shard = 0;
		if (!cJSON_IsString(x))
			return mk_error_set(MK_EFORMAT, "'%s': the weight_map entry '%s' is not a file "
					    "name", index, x->string);
		if (!sti_plain(x->valuestring))
			return mk_error_set(MK_EFORMAT, "'%s': shard '%.200s' is not a plain file name "
					    "in the index's directory", index, x->valuestring);
		if ((ret = sti_shard(st, index, dir, x->valuestring, &shard)))
			return ret;
		x->valueint = shard;
	}
	return MK_OK;
}

int mk_st_open_index(const char *index, mk_st **out)
{
	mk_st *st = calloc(1, sizeof *st);
	const char *slash = strrchr(index, '/');
	char *text = NULL, *dir = slash ? strndup(index, (size_t)(slash - index)) : strdup(".");
	cJSON *j = NULL;
	size_t len;
	int ret;

	*out = NULL;
	if (!st || !dir) {
		ret = mk_error_set(MK_ENOMEM, "out of memory");
		goto cleanup;
	}
	if (slash == index) /* an index in / */
		dir[0] = '\0';
	if ((ret = mk_file_read(index, STI_MAX_BYTES, "a safetensors index", MK_FILE_TEXT, &text,
				&len)))
		goto cleanup;
	if ((ret = mk_json_parse_strict(index, text, len, &j)))
		goto cleanup;
	if (!cJSON_IsObject(j)) {
		ret = mk_error_set(MK_EFORMAT, "'%s': not a JSON object", index);
		goto cleanup;
	}
	ret = sti_open_shards(st, index, dir, cJSON_GetObjectItemCaseSensitive(j, "weight_map"));
	if (ret == MK_OK)
		ret = sti_select(st, index, cJSON_GetObjectItemCaseSensitive(j, "weight_map"));
cleanup:
	cJSON_Delete(j);
	free(text);
	free(dir);
	if (ret)
		mk_st_free(st);
	else
		*out = st;
	return ret;
}
