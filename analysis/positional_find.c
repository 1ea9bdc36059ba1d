/*
 * Finding the weights of a layer by name.  Checkpoints name them in two
 * families: HuggingFace TF files (".../layer_._0/attention/self/query/
 * kernel:0", kernels stored in x out) and h5py dumps of PyTorch state dicts
 * ("bert.encoder.layer.0.attention.self.query.weight", stored out x in).
 * Paths are split into tokens at '/' and '.', so "query" matches both
 * without matching "query_proj"; the layer is the number after "layer" or
 * "layers" and separators.  Every role can be named explicitly instead.
 */
#include "config.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "positional_find.h"

int64_t mk_pos_layer_of(const char *path)
{
	for (const char *s = strstr(path, "layer"); s; s = strstr(s + 1, "layer")) {
		const char *p = s + 5;
		int64_t v = 0;
		if (*p == 's')
			p++;
		while (*p && strchr("._/-", *p))
			p++;
		if (!isdigit((unsigned char)*p))
			continue;
		while (isdigit((unsigned char)*p) && v < 1000000)
			v = v * 10 + (*p++ - '0');
		if (!isdigit((unsigned char)*p))
			return v;
	}
	return -1;
}

static bool pos_has_token(const char *path, const char *token)
{
	size_t len = strlen(token);
	for (const char *s = path; (s = strstr(s, token)); s++) {
		bool start = s == path || s[-1] == '/' || s[-1] == '.';
		char end = s[len];
		if (start && (end == '\0' || end == '/' || end == '.' || end == ':'))
			return true;
	}
	return false;
}

/* The last token of a path ("kernel:0", "weight"). */
static const char *pos_last_token(const char *path)
{
	const char *s = path + strlen(path);
	while (s > path && s[-1] != '/' && s[-1] != '.')
		s--;
	return s;
}

/* Lists candidates in a message: "a, b, c, ..." within cap bytes. */
static void pos_join(char **list, size_t count, char *buf, size_t cap)
{
	size_t len = 0, k;

	buf[0] = '\0';
	for (k = 0; k < count && len + strlen(list[k]) + 8 < cap; k++)
		len += (size_t)snprintf(buf + len, cap - len, "%s%s", k ? ", " : "", list[k]);
	if (k < count)
		snprintf(buf + len, cap - len, "%s...", k ? ", " : "");
}

/* list: the layer's matches when there are several, else every match. */
static int pos_layer_error(mk_weights *w, const char *token, int64_t layer, char **list,
			   size_t count)
{
	char msg[300];

	pos_join(list, count, msg, sizeof msg);
	if (count && mk_pos_layer_of(list[0]) == layer)
		return mk_error_set(MK_EFORMAT, "'%s': several '%s' weights for layer %lld: %s; "
				    "name one", mk_weights_file(w), token, (long long)layer, msg);
	if (count == 0)
		return mk_error_set(MK_EFORMAT, "'%s': no 2-D dataset named '%s' (as in "
				    ".../layer_._0/attention/self/%s/kernel:0); name it",
				    mk_weights_file(w), token, token);
	/* the layers are there, not this one: the layer is at fault */
	mk_error_set(MK_EFORMAT, "'%s': no '%s' weights for layer %lld (found: %s)",
		     mk_weights_file(w), token, (long long)layer, msg);
	return mk_error_param("layer");
}

/* The 2-D dataset with `token` in layer `layer`; tok and hit point into
 * the list (token matches, and those of the layer). */
static int pos_find_layer(mk_weights *w, const char *token, int64_t layer, char **out)
{
	const char *needles[] = {token, NULL};
	char **all = NULL, **tok = NULL, **hit = NULL;
	size_t count = 0, ntok = 0, nhit = 0;
	int ret = mk_weights_list(w, 2, needles, &all, &count);

	if (ret)
		return ret;
	tok = calloc(count + 1, sizeof *tok);
	hit = calloc(count + 1, sizeof *hit);
	if (!tok || !hit) {
		ret = mk_error_set(MK_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t k = 0; k < count; k++)
		if (pos_has_token(all[k], token)) {
			tok[ntok++] = all[k];
			if (mk_pos_layer_of(all[k]) == layer)
				hit[nhit++] = all[k];
		}
	if (nhit == 1 && !(*out = strdup(hit[0])))
		ret = mk_error_set(MK_ENOMEM, "out of memory");
	else if (nhit != 1)
		ret = pos_layer_error(w, token, layer, nhit ? hit : tok, nhit ? nhit : ntok);
out:
	free(tok);
	free(hit);
	mk_weights_list_free(all);
	return ret;
}

/* Layers with query weights: distinct layer numbers. */
static int pos_count_layers(mk_weights *w, int64_t *layers)
{
	const char *needles[] = {"query", NULL};
	char **all = NULL;
	size_t count = 0;
	int64_t top = -1;
	int ret = mk_weights_list(w, 2, needles, &all, &count);

	if (ret)
		return ret;
	for (size_t k = 0; k < count; k++) {
		int64_t l = pos_has_token(all[k], "query") ? mk_pos_layer_of(all[k]) : -1;
		if (l > top)
			top = l;
	}
	*layers = top + 1;
	mk_weights_list_free(all);
	return MK_OK;
}

/* The bias beside a weight: ".../kernel:0" -> ".../bias:0", "x.weight" ->
 * "x.bias"; NULL in *out when the file has none. */
static int pos_bias_of(mk_weights *w, const char *weight, char **out)
{
	const char *last = pos_last_token(weight), *suffix = strchr(last, ':');
	size_t stem = (size_t)(last - weight), cap = stem + 8 + (suffix ? strlen(suffix) : 0);
	char *name = malloc(cap), **list = NULL;
	const char *needles[2] = {NULL, NULL};
	size_t count = 0;
	int ret;

	*out = NULL;
	/* only where the checkpoint names them so: a "bias" beside a weight named
	 * otherwise may belong to anything */
	if (strncmp(last, "kernel", 6) && strncmp(last, "weight", 6)) {
		free(name);
		return MK_OK;
	}
	if (!name)
		return mk_error_set(MK_ENOMEM, "out of memory");
	snprintf(name, cap, "%.*sbias%s", (int)stem, weight, suffix ? suffix : "");
	needles[0] = name;
	ret = mk_weights_list(w, 1, needles, &list, &count);
	for (size_t k = 0; ret == MK_OK && k < count; k++)
		if (!strcmp(list[k], name)) {
			*out = name;
			name = NULL;
			break;
		}
	mk_weights_list_free(list);
	free(name);
	return ret;
}

static int pos_find_optional(mk_weights *w, const char *needle, char **out)
{
	const char *needles[] = {needle, NULL};
	char **list = NULL;
	size_t count = 0;
	int ret = mk_weights_list(w, 2, needles, &list, &count);

	*out = NULL;
	if (ret == MK_OK && count > 1)
		ret = mk_error_set(MK_EFORMAT, "'%s': several datasets match '%s' (%s, %s%s); name "
				   "one", mk_weights_file(w), needle, list[0], list[1],
				   count > 2 ? ", ..." : "");
	else if (ret == MK_OK && count == 1 && !(*out = strdup(list[0])))
		ret = mk_error_set(MK_ENOMEM, "out of memory");
	mk_weights_list_free(list);
	return ret;
}

static int pos_search_role(mk_weights *w, const mk_positional_opts *o, mk_positional *p,
			   int role);

/* A dataset not found, or found several times, is the user's to name: the
 * error says which parameter (o->dataset[role]) names it. */
static int pos_find_role(mk_weights *w, const mk_positional_opts *o, mk_positional *p,
			 int role)
{
	static const char *const params[MK_POS_NROLES] = {
		[MK_POS_POSITION] = "position", [MK_POS_WORD] = "word", [MK_POS_QUERY] = "query",
		[MK_POS_KEY] = "key", [MK_POS_QUERY_BIAS] = "query_bias",
		[MK_POS_KEY_BIAS] = "key_bias", [MK_POS_PROJ] = "projection",
		[MK_POS_PROJ_BIAS] = "projection_bias",
	};
	int ret = pos_search_role(w, o, p, role);

	if (ret == MK_EFORMAT && !o->dataset[role] && !mk_error_get()->param)
		ret = mk_error_param(params[role]);
	return ret;
}

static int pos_search_role(mk_weights *w, const mk_positional_opts *o, mk_positional *p,
			   int role)
{
	char **dst = &p->used[role];

	if (o->dataset[role]) {
		size_t len = strlen(o->dataset[role]) + 2;
		if (!(*dst = malloc(len)))
			return mk_error_set(MK_ENOMEM, "out of memory");
		snprintf(*dst, len, "%s%s", o->dataset[role][0] == '/' ? "" : "/", o->dataset[role]);
		return MK_OK;
	}
	switch (role) {
	case MK_POS_POSITION:
		return mk_weights_find(w, "position_embeddings", "the position embeddings", dst);
	case MK_POS_WORD:
		return mk_weights_find(w, "word_embeddings", "the word embeddings", dst);
	case MK_POS_QUERY:
		return pos_find_layer(w, "query", o->layer, dst);
	case MK_POS_KEY:
		return pos_find_layer(w, "key", o->layer, dst);
	case MK_POS_QUERY_BIAS:
		return o->no_bias ? MK_OK : pos_bias_of(w, p->used[MK_POS_QUERY], dst);
	case MK_POS_KEY_BIAS:
		return o->no_bias ? MK_OK : pos_bias_of(w, p->used[MK_POS_KEY], dst);
	case MK_POS_PROJ:
		return pos_find_optional(w, "embedding_hidden_mapping_in", dst);
	default:
		return p->used[MK_POS_PROJ] ? pos_bias_of(w, p->used[MK_POS_PROJ], dst) : MK_OK;
	}
}

static int pos_check_opts(const mk_positional_opts *o)
{
	if (o->no_bias && (o->dataset[MK_POS_QUERY_BIAS] || o->dataset[MK_POS_KEY_BIAS])) {
		mk_error_set(MK_EINVAL, "a query or key bias was named but biases are left out");
		return mk_error_param("no_bias");
	}
	return MK_OK;
}

int mk_pos_find_all(mk_weights *w, const mk_positional_opts *o, mk_positional *out)
{
	int ret = pos_check_opts(o);
	for (int role = 0; role < MK_POS_NROLES && ret == MK_OK; role++)
		ret = pos_find_role(w, o, out, role);
	if (ret == MK_OK && out->used[MK_POS_PROJ_BIAS] && !out->used[MK_POS_PROJ])
		ret = mk_error_set(MK_EINVAL, "a projection bias was named but the file has no "
				   "embedding projection (name it too)");
	if (ret == MK_OK)
		ret = pos_count_layers(w, &out->layers);
	return ret;
}

/* in x out or out x in: the option, else the name, else the shape (the
 * input size is known: it must match exactly one side). */
static int pos_layout(mk_weights *w, const mk_positional_opts *o, const char *path,
		      const mk_matrix *m, int64_t in, mk_layout *out)
{
	const char *last = pos_last_token(path);

	*out = o->layout;
	if (*out != MK_LAYOUT_AUTO)
		return MK_OK;
	if (m->rows != in && m->cols != in)
		return mk_error_set(MK_EFORMAT, "'%s': '%s' is %lld x %lld, but its inputs have size "
				    "%lld", mk_weights_file(w), path, (long long)m->rows,
				    (long long)m->cols, (long long)in);
	if (!strncmp(last, "kernel", 6))
		*out = MK_LAYOUT_IN_OUT;
	else if (!strncmp(last, "weight", 6))
		*out = MK_LAYOUT_OUT_IN;
	else if (m->rows == in && m->cols != in)
		*out = MK_LAYOUT_IN_OUT;
	else if (m->cols == in && m->rows != in)
		*out = MK_LAYOUT_OUT_IN;
	else {
		mk_error_set(MK_EINVAL, "'%s': cannot tell whether '%s' (%lld x %lld) is stored in x "
			     "out or out x in: give the layout", mk_weights_file(w), path,
			     (long long)m->rows, (long long)m->cols);
		return mk_error_param("layout");
	}
	return MK_OK;
}

int mk_pos_read_all(mk_weights *w, const mk_positional_opts *o, const mk_positional *p,
		    mk_matrix *m, mk_layout *layout)
{
	int64_t in;
	int ret = MK_OK;

	for (int role = 0; role < MK_POS_NROLES && ret == MK_OK; role++) {
		bool bias = role == MK_POS_QUERY_BIAS || role == MK_POS_KEY_BIAS ||
			    role == MK_POS_PROJ_BIAS;
		if (p->used[role])
			ret = mk_weights_read(w, p->used[role], bias ? 1 : 2, o->max_memory, &m[role]);
	}
	if (ret)
		return ret;
	in = m[MK_POS_POSITION].cols;
	if (m[MK_POS_PROJ].data) {
		ret = pos_layout(w, o, p->used[MK_POS_PROJ], &m[MK_POS_PROJ], in,
				 &layout[MK_POS_PROJ]);
		if (ret)
			return ret;
		in = layout[MK_POS_PROJ] == MK_LAYOUT_IN_OUT ? m[MK_POS_PROJ].cols
							     : m[MK_POS_PROJ].rows;
	}
	ret = pos_layout(w, o, p->used[MK_POS_QUERY], &m[MK_POS_QUERY], in, &layout[MK_POS_QUERY]);
	if (ret == MK_OK)
		ret = pos_layout(w, o, p->used[MK_POS_KEY], &m[MK_POS_KEY], in, &layout[MK_POS_KEY]);
	return ret;
}
