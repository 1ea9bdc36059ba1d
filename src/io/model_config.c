/*
 * config.json of a HuggingFace model directory: the few sizes maskkit needs
 * (heads, layers, hidden and embedding sizes, positions, vocabulary) and the
 * encoder's activation and LayerNorm epsilon.  Keys we do not use are
 * ignored; a key we use with a wrong type is an error rather than a guess.
 */
#include "config.h"
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "internal.h"
#include "core.h"
#include "model.h"
#include "json_strict.h"

#define MC_MAX_BYTES (4u << 20) /* real configs are a few kilobytes */

/* A non-negative integer key: absent leaves *v; present must be an integer
 * in [lo, 2^40]. */
static int mc_int(const cJSON *root, const char *path, const char *key, int64_t lo, int64_t *v)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(root, key);
	double d;

	if (!x || cJSON_IsNull(x))
		return MK_OK;
	d = cJSON_IsNumber(x) ? x->valuedouble : NAN;
	if (!(d >= (double)lo && d <= 1099511627776.0 && d == floor(d)))
		return mk_error_set(MK_EFORMAT, "'%s': \"%s\" must be an integer >= %" PRId64,
				    path, key, lo);
	*v = (int64_t)d;
	return MK_OK;
}

static int mc_string(const cJSON *root, const char *path, const char *key, char *buf, size_t cap)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(root, key);

	if (!x || cJSON_IsNull(x))
		return MK_OK;
	if (!cJSON_IsString(x) || strlen(x->valuestring) >= cap)
		return mk_error_set(MK_EFORMAT, "'%s': \"%s\" must be a string of at most %zu "
				    "characters", path, key, cap - 1);
	memcpy(buf, x->valuestring, strlen(x->valuestring) + 1);
	return MK_OK;
}

static int mc_parse(const cJSON *j, const char *path, mk_model_config *c)
{
	const cJSON *eps = cJSON_GetObjectItemCaseSensitive(j, "layer_norm_eps");
	int ret;

	if (!cJSON_IsObject(j))
		return mk_error_set(MK_EFORMAT, "'%s': not a JSON object", path);
	if ((ret = mc_string(j, path, "model_type", c->model_type, sizeof c->model_type)) ||
	    (ret = mc_string(j, path, "hidden_act", c->hidden_act, sizeof c->hidden_act)) ||
	    (ret = mc_string(j, path, "position_embedding_type", c->position_embedding_type,
			     sizeof c->position_embedding_type)) ||
	    (ret = mc_int(j, path, "num_attention_heads", 1, &c->heads)) ||
	    (ret = mc_int(j, path, "num_hidden_layers", 1, &c->layers)) ||
	    (ret = mc_int(j, path, "hidden_size", 1, &c->hidden)) ||
	    (ret = mc_int(j, path, "embedding_size", 1, &c->embedding_size)) ||
	    (ret = mc_int(j, path, "intermediate_size", 1, &c->intermediate)) ||
	    (ret = mc_int(j, path, "max_position_embeddings", 1, &c->max_positions)) ||
	    (ret = mc_int(j, path, "vocab_size", 1, &c->vocab)) ||
	    (ret = mc_int(j, path, "type_vocab_size", 0, &c->type_vocab)) ||
	    (ret = mc_int(j, path, "pad_token_id", 0, &c->pad_token_id)))
		return ret;
	if (eps && !cJSON_IsNull(eps)) {
		if (!cJSON_IsNumber(eps) || !(eps->valuedouble > 0 && eps->valuedouble < 1))
			return mk_error_set(MK_EFORMAT, "'%s': \"layer_norm_eps\" must be a number in "
					    "(0, 1)", path);
		c->layer_norm_eps = eps->valuedouble;
	}
	if (c->heads && c->hidden && c->hidden % c->heads)
		return mk_error_set(MK_EFORMAT, "'%s': %" PRId64 " heads do not divide "
				    "hidden_size %" PRId64, path, c->heads, c->hidden);
	return MK_OK;
}

int mk_model_config_read(const char *path, mk_model_config *out)
{
	char file[4096];
	struct stat st;
	cJSON *j = NULL;
	char *text = NULL;
	size_t len;
	int ret;

	*out = (mk_model_config){.pad_token_id = -1, .layer_norm_eps = 1e-12};
	snprintf(out->hidden_act, sizeof out->hidden_act, "gelu");
	snprintf(out->position_embedding_type, sizeof out->position_embedding_type, "absolute");
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		if (snprintf(file, sizeof file, "%s/config.json", path) >= (int)sizeof file)
			return mk_error_set(MK_EINVAL, "'%s': path too long", path);
	} else if (snprintf(file, sizeof file, "%s", path) >= (int)sizeof file) {
		return mk_error_set(MK_EINVAL, "'%s': path too long", path);
	}
	if ((ret = mk_file_read(file, MC_MAX_BYTES, "a config.json", MK_FILE_TEXT, &text, &len)))
		return ret;
	snprintf(out->path, sizeof out->path, "%s", file);
	if (!(ret = mk_json_parse_strict(file, text, len, &j)))
		ret = mc_parse(j, file, out);
	cJSON_Delete(j);
	free(text);
	return ret;
}
