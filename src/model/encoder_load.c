/*
 * Loading a BERT-family encoder's weights by role.  Every dataset name of
 * the file is brought to one canonical spelling, HuggingFace PyTorch's
 * without its prefix ("encoder.layer.3.attention.self.query.weight"):
 * split at '/' and '.', ":0" suffixes dropped, "layer_._3" and "layer_3"
 * read as "layer.3", everything before the first "embeddings" or "encoder"
 * taken as the prefix, and the TF leaves renamed (kernel -> weight, gamma
 * -> weight, beta -> bias, ".../position_embeddings/embeddings" and a bare
 * ".../word_embeddings" -> "...embeddings.weight").  A role is then looked
 * up by its exact name, never by a substring: "query" cannot pick up
 * "query_proj", nor layer 1 layer 10.
 */
#include "config.h"
#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "weights.h"
#include "encoder_internal.h"

#define LOAD_TOKENS 24
#define LOAD_TOKEN 64

/* A layer's roles in the order of enc_layer's fields, by canonical name
 * after "encoder.layer.N.", with their shapes ([out, in] for weights). */
enum { DIM_H = 1, DIM_I };
typedef struct load_role {
	const char *name;
	int rows, cols; /* DIM_*; cols 0: a vector */
} load_role;

static const load_role load_layer_roles[] = {
	{"attention.self.query.weight", DIM_H, DIM_H}, {"attention.self.query.bias", DIM_H, 0},
	{"attention.self.key.weight", DIM_H, DIM_H},   {"attention.self.key.bias", DIM_H, 0},
	{"attention.self.value.weight", DIM_H, DIM_H}, {"attention.self.value.bias", DIM_H, 0},
	{"attention.output.dense.weight", DIM_H, DIM_H}, {"attention.output.dense.bias", DIM_H, 0},
	{"attention.output.LayerNorm.weight", DIM_H, 0}, {"attention.output.LayerNorm.bias", DIM_H, 0},
	{"intermediate.dense.weight", DIM_I, DIM_H},   {"intermediate.dense.bias", DIM_I, 0},
	{"output.dense.weight", DIM_H, DIM_I},         {"output.dense.bias", DIM_H, 0},
	{"output.LayerNorm.weight", DIM_H, 0},         {"output.LayerNorm.bias", DIM_H, 0},
};
#define LOAD_NROLES ((int)(sizeof load_layer_roles / sizeof *load_layer_roles))

enum { EMB_WORD, EMB_POS, EMB_TYPE, EMB_LN_G, EMB_LN_B, EMB_ROLES };
static const char *const load_emb_names[EMB_ROLES] = {
	"embeddings.word_embeddings.weight", "embeddings.position_embeddings.weight",
	"embeddings.token_type_embeddings.weight", "embeddings.LayerNorm.weight",
	"embeddings.LayerNorm.bias"};

/* The datasets that claimed a role: the first, and a second for the error. */
typedef struct load_hit {
	const char *path, *other;
	bool kernel; /* a TF kernel, [in, out] */
} load_hit;

typedef struct load_ctx {
	mk_weights *w;
	const mk_model_config *c;
	load_hit emb[EMB_ROLES];
	load_hit *lay; /* layers x LOAD_NROLES */
	char prefix[64];
	const char *prefix_path; /* the dataset that set the prefix */
	const char *beyond;      /* a dataset of a layer config.json does not have */
	uint64_t max_memory;
	bool tf;
} load_ctx;

/* ---- canonical names ------------------------------------------------------ */

typedef struct load_name {
	char tok[LOAD_TOKENS][LOAD_TOKEN];
	int n;
} load_name;

static bool load_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

static bool load_push(load_name *x, const char *s, size_t len)
{
	if (x->n == LOAD_TOKENS || len >= LOAD_TOKEN)
		return false;
	memcpy(x->tok[x->n], s, len);
	x->tok[x->n++][len] = '\0';
	return true;
}

/* path's tokens, ":N" dropped, layer numbers split off "layer_". */
static bool load_tokens(const char *path, load_name *x)
{
	load_name raw = {.n = 0};

	x->n = 0;
	for (const char *s = path; *s;) {
		size_t len = strcspn(s, "/.");
		size_t keep = strcspn(s, ":/.");
		if (keep && !load_push(&raw, s, keep < len ? keep : len))
			return false;
		s += len + (s[len] != '\0');
	}
	for (int k = 0; k < raw.n; k++) {
		const char *t = raw.tok[k];
		bool ok;
		if (!strcmp(t, "layer_") && k + 1 < raw.n && raw.tok[k + 1][0] == '_' &&
		    load_digits(raw.tok[k + 1] + 1)) /* "layer_._3" */
		{
			const char *num = raw.tok[++k] + 1;
			ok = load_push(x, "layer", 5) && load_push(x, num, strlen(num));
		}
		else if (!strncmp(t, "layer_", 6) && load_digits(t + 6)) /* "layer_3" */
			ok = load_push(x, "layer", 5) && load_push(x, t + 6, strlen(t + 6));
		else
			ok = load_push(x, t, strlen(t));
		if (!ok)
			return false;
	}
	return true;
}

static bool load_ends_with(const char *s, const char *tail)
{
	size_t a = strlen(s), b = strlen(tail);
	return a >= b && !strcmp(s + a - b, tail);
}

/* The canonical name of path into canon, its prefix into prefix; false
 * when it holds neither "embeddings" nor "encoder". */
static bool load_canon(const char *path, char *canon, size_t cap, char *prefix, size_t pcap,
		       bool *kernel)
{
	load_name x;
	int first = -1;
	char *last;
	size_t len = 0;

	*kernel = false;
	if (!load_tokens(path, &x))
		return false;
	for (int k = 0; k < x.n && first < 0; k++)
		if (!strcmp(x.tok[k], "embeddings") || !strcmp(x.tok[k], "encoder"))
			first = k;
	if (first < 0 || first == x.n - 1)
		return false;
	last = x.tok[x.n - 1];
	if (!strcmp(last, "kernel"))
		*kernel = true;
	if (*kernel || !strcmp(last, "gamma"))
		snprintf(last, LOAD_TOKEN, "weight");
	else if (!strcmp(last, "beta"))
		snprintf(last, LOAD_TOKEN, "bias");
	else if (!strcmp(last, "embeddings") && x.n - 2 > first &&
		 load_ends_with(x.tok[x.n - 2], "_embeddings"))
		snprintf(last, LOAD_TOKEN, "weight");
	else if (load_ends_with(last, "_embeddings") && !load_push(&x, "weight", 6))
		return false;
	prefix[0] = canon[0] = '\0';
	for (int k = 0; k < first; k++)
		len += (size_t)snprintf(prefix + len, len < pcap ? pcap - len : 0, "%s%s",
					k ? "/" : "", x.tok[k]);
	if (len >= pcap)
		return false;
	len = 0;
	for (int k = first; k < x.n; k++)
		len += (size_t)snprintf(canon + len, len < cap ? cap - len : 0, "%s%s",
					k > first ? "." : "", x.tok[k]);
	return len < cap;
}

/* ---- finding the roles ------------------------------------------------------ */

static void load_claim(load_hit *h, const char *path, bool kernel)
{
	if (!h->path) {
		h->path = path;
		h->kernel = kernel;
	} else if (!h->other) {
		h->other = path;
	}
}

/* The role of one canonical name, if it is one. */
static int load_match(load_ctx *x, const char *path, const char *canon, const char *prefix,
		      bool kernel)
{
	const char *rest = NULL;
	char *end;
	long long layer = -1;

	for (int r = 0; r < EMB_ROLES; r++)
		if (!strcmp(canon, load_emb_names[r]))
			goto found;
	if (strncmp(canon, "encoder.layer.", 14) || !isdigit((unsigned char)canon[14]))
		return MK_OK;
	layer = strtoll(canon + 14, &end, 10);
	if (*end != '.')
		return MK_OK;
	rest = end + 1;
	for (int r = 0; r < LOAD_NROLES; r++)
		if (!strcmp(rest, load_layer_roles[r].name))
			goto found;
	return MK_OK;
found:
	if (!x->prefix_path) {
		snprintf(x->prefix, sizeof x->prefix, "%s", prefix);
		x->prefix_path = path;
	} else if (strcmp(prefix, x->prefix)) {
		return mk_error_set(MK_EFORMAT, "'%s': encoder weights under two prefixes: '%s' and "
				    "'%s' (one model per file)", mk_weights_file(x->w), x->prefix_path,
				    path);
	}
	if (!strncmp(canon, "embeddings.", 11)) {
		for (int r = 0; r < EMB_ROLES; r++)
			if (!strcmp(canon, load_emb_names[r]))
				load_claim(&x->emb[r], path, kernel);
		return MK_OK;
	}
	if (layer >= x->c->layers) {
		x->beyond = path;
		return MK_OK;
	}
	for (int r = 0; r < LOAD_NROLES; r++)
		if (!strcmp(rest, load_layer_roles[r].name))
			load_claim(&x->lay[layer * LOAD_NROLES + r], path, kernel);
	return MK_OK;
}

/* "encoder.layer.3.output.dense.weight" for an error. */
static void load_role_name(int64_t layer, int r, char *buf, size_t cap)
{
	if (layer < 0)
		snprintf(buf, cap, "%s", load_emb_names[r]);
	else
		snprintf(buf, cap, "encoder.layer.%" PRId64 ".%s", layer, load_layer_roles[r].name);
}

static int load_check_hit(const load_ctx *x, const load_hit *h, int64_t layer, int r)
{
	char role[128];

	load_role_name(layer, r, role, sizeof role);
	if (!h->path)
		return mk_error_set(MK_EFORMAT, "'%s': no dataset for %s%s%s", mk_weights_file(x->w),
				    x->prefix[0] ? x->prefix : "", x->prefix[0] ? "/" : "", role);
	if (h->other)
		return mk_error_set(MK_EFORMAT, "'%s': two datasets for %s: '%s' and '%s'",
				    mk_weights_file(x->w), role, h->path, h->other);
	return MK_OK;
}

static int load_find(load_ctx *x, char **names, size_t count)
{
	char canon[LOAD_TOKENS * LOAD_TOKEN], prefix[64];
	bool kernel;
	int ret;

	for (size_t k = 0; k < count; k++) {
		if (!load_canon(names[k], canon, sizeof canon, prefix, sizeof prefix, &kernel))
			continue;
		if ((ret = load_match(x, names[k], canon, prefix, kernel)))
			return ret;
	}
	for (int r = 0; r < EMB_ROLES; r++)
		if ((ret = load_check_hit(x, &x->emb[r], -1, r)))
			return ret;
	for (int64_t l = 0; l < x->c->layers; l++)
		for (int r = 0; r < LOAD_NROLES; r++)
			if ((ret = load_check_hit(x, &x->lay[l * LOAD_NROLES + r], l, r)))
				return ret;
	if (x->beyond)
		return mk_error_set(MK_EFORMAT, "'%s': '%s' is beyond config.json's "
				    "num_hidden_layers %" PRId64, mk_weights_file(x->w), x->beyond,
				    x->c->layers);
	return MK_OK;
}

/* ---- reading ------------------------------------------------------------------ */

/* Reads h into a new float array of rows x cols ([out, in]; cols 0: a
 * vector of rows), transposing a TF kernel; rows 0 with got_rows: any row
 * count (token types when config.json gives none), returned there. */
static int load_read(load_ctx *x, const load_hit *h, int64_t rows, int64_t cols,
		     const char *what, float **out, int64_t *got_rows)
{
	int64_t want_r = cols && h->kernel ? cols : rows, want_c = cols && h->kernel ? rows : cols;
	int64_t dims[4];
	float *t = NULL;
	int rank = 0, ret = mk_weights_read_f32(x->w, h->path, x->max_memory, out, &rank, dims);

	if (ret)
		return ret;
	if (got_rows && want_r == 0)
		want_r = dims[0];
	if (rank != (cols ? 2 : 1) || dims[0] != (cols ? want_r : rows) ||
	    (cols && dims[1] != want_c)) {
		char shape[64];
		if (rank == 1)
			snprintf(shape, sizeof shape, "[%" PRId64 "]", dims[0]);
		else
			snprintf(shape, sizeof shape, "[%" PRId64 ", %" PRId64 "%s]", dims[0], dims[1],
				 rank > 2 ? ", ..." : "");
		ret = cols ? mk_error_set(MK_EFORMAT, "'%s': '%s' is %s, expected [%" PRId64 ", %"
					  PRId64 "] (%s)", mk_weights_file(x->w), h->path, shape,
					  want_r, want_c, what)
			   : mk_error_set(MK_EFORMAT, "'%s': '%s' is %s, expected [%" PRId64 "] (%s)",
					  mk_weights_file(x->w), h->path, shape, rows, what);
		goto cleanup;
	}
	if (got_rows)
		*got_rows = dims[0];
	if (cols && h->kernel) {
		if (!(t = malloc((size_t)(rows * cols) * sizeof *t))) {
			ret = mk_error_set(MK_ENOMEM, "out of memory for '%s'", h->path);
			goto cleanup;
		}
		for (int64_t i = 0; i < cols; i++)
			for (int64_t j = 0; j < rows; j++)
				t[j * cols + i] = (*out)[i * rows + j];
		free(*out);
		*out = t;
	}
cleanup:
	if (ret) {
		free(*out);
		*out = NULL;
	}
	return ret;
}

static int load_embeddings(load_ctx *x, mk_encoder *e)
{
	const mk_model_config *c = x->c;
	float *type = NULL;
	int64_t types = c->type_vocab;
	int ret;

	if ((ret = load_read(x, &x->emb[EMB_WORD], c->vocab, c->hidden,
			     "vocab_size x hidden_size", &e->word, NULL)) ||
	    (ret = load_read(x, &x->emb[EMB_POS], c->max_positions, c->hidden,
			     "max_position_embeddings x hidden_size", &e->pos, NULL)) ||
	    (ret = load_read(x, &x->emb[EMB_TYPE], types, c->hidden,
			     "type_vocab_size x hidden_size", &type, types ? NULL : &types)) ||
	    (ret = load_read(x, &x->emb[EMB_LN_G], c->hidden, 0, "hidden_size", &e->ln_g, NULL)) ||
	    (ret = load_read(x, &x->emb[EMB_LN_B], c->hidden, 0, "hidden_size", &e->ln_b, NULL)))
		goto cleanup;
	/* every token is of type 0: only that row is kept */
	if (!(e->type0 = malloc((size_t)c->hidden * sizeof *e->type0)))
		ret = mk_error_set(MK_ENOMEM, "out of memory for the token type embedding");
	else
		memcpy(e->type0, type, (size_t)c->hidden * sizeof *e->type0);
cleanup:
	free(type);
	return ret;
}

static int load_layer(load_ctx *x, mk_encoder *e, int64_t l)
{
	const load_hit *h = x->lay + l * LOAD_NROLES;
	int64_t hd = x->c->hidden, sz[3] = {0, hd, x->c->intermediate};
	enc_layer *y = &e->layer[l];
	float *part[LOAD_NROLES] = {NULL};
	float **dst[LOAD_NROLES] = {NULL, NULL, NULL, NULL, NULL, NULL, &y->wo, &y->bo, &y->ln1_g,
				    &y->ln1_b, &y->wi, &y->bi, &y->wf, &y->bf, &y->ln2_g, &y->ln2_b};
	int ret = MK_OK;

	for (int r = 0; r < LOAD_NROLES && ret == MK_OK; r++) {
		const load_role *role = &load_layer_roles[r];
		ret = load_read(x, &h[r], sz[role->rows], sz[role->cols],
				role->rows == DIM_I || role->cols == DIM_I ?
					"from hidden_size and intermediate_size" : "from hidden_size",
				dst[r] ? dst[r] : &part[r], NULL);
		x->tf |= h[r].kernel;
	}
	/* query, key and value stacked: one projection for the three */
	if (ret == MK_OK && (!(y->wqkv = malloc((size_t)(3 * hd * hd) * sizeof *y->wqkv)) ||
			     !(y->bqkv = malloc((size_t)(3 * hd) * sizeof *y->bqkv))))
		ret = mk_error_set(MK_ENOMEM, "out of memory for the weights");
	for (int k = 0; k < 3 && ret == MK_OK; k++) {
		memcpy(y->wqkv + k * hd * hd, part[2 * k], (size_t)(hd * hd) * sizeof *y->wqkv);
		memcpy(y->bqkv + k * hd, part[2 * k + 1], (size_t)hd * sizeof *y->bqkv);
	}
	for (int r = 0; r < 6; r++)
		free(part[r]);
	return ret;
}

/* ---- the model ------------------------------------------------------------- */

static bool load_is(const char *type, const char *const *list)
{
	for (int k = 0; list[k]; k++)
		if (!strcmp(type, list[k]))
			return true;
	return false;
}

/* What the forward pass can run, from config.json alone. */
static int load_check_config(const mk_model_config *c, mk_encoder *e)
{
	static const char *const bert[] = {"bert", NULL};
	static const char *const roberta[] = {"roberta", "xlm-roberta", "camembert", NULL};
	/* a config built in memory has no file to name */
	const char *where = c->path[0] ? c->path : "config.json";
	int64_t left;

	if (!c->model_type[0])
		return mk_error_set(MK_EFORMAT, "'%s': no model_type (maskkit encode runs bert and "
				    "roberta encoders)", where);
	if (!load_is(c->model_type, bert) && !load_is(c->model_type, roberta))
		return mk_error_set(MK_EFORMAT, "'%s': model_type '%s' is not supported: maskkit "
				    "encode runs bert, roberta, xlm-roberta and camembert encoders%s",
				    where, c->model_type, !strcmp(c->model_type, "albert") ?
				    " (ALBERT shares its layers and projects its embeddings)" : "");
	if (!c->hidden || !c->heads || !c->layers || !c->intermediate || !c->max_positions ||
	    !c->vocab)
		return mk_error_set(MK_EFORMAT, "'%s' lacks one of hidden_size, "
				    "num_attention_heads, num_hidden_layers, intermediate_size, "
				    "max_position_embeddings, vocab_size", where);
	if (c->embedding_size && c->embedding_size != c->hidden)
		return mk_error_set(MK_EFORMAT, "'%s': embedding_size %" PRId64 " differs from "
				    "hidden_size %" PRId64 ": projected embeddings are not supported",
				    where, c->embedding_size, c->hidden);
	if (strcmp(c->position_embedding_type, "absolute"))
		return mk_error_set(MK_EFORMAT, "'%s': position_embedding_type '%s' is not "
				    "supported (absolute only)", where, c->position_embedding_type);
	if (!strcmp(c->hidden_act, "gelu"))
		e->act = ENC_GELU;
	else if (!strcmp(c->hidden_act, "gelu_new") || !strcmp(c->hidden_act, "gelu_pytorch_tanh"))
		e->act = ENC_GELU_TANH;
	else if (!strcmp(c->hidden_act, "relu"))
		e->act = ENC_RELU;
	else
		return mk_error_set(MK_EFORMAT, "'%s': hidden_act '%s' is not supported (gelu, "
				    "gelu_new, gelu_pytorch_tanh, relu)", where, c->hidden_act);
	/* RoBERTa numbers positions from pad_token_id + 1 */
	e->pos_offset = load_is(c->model_type, roberta) ? (c->pad_token_id >= 0 ?
							     c->pad_token_id : 1) + 1 : 0;
	/* a sample is at least [CLS] [SEP] */
	left = c->max_positions > e->pos_offset ? c->max_positions - e->pos_offset : 0;
	if (left < 2 && e->pos_offset)
		return mk_error_set(MK_EFORMAT, "'%s': max_position_embeddings %" PRId64 " leaves "
				    "%" PRId64 " position%s after RoBERTa's offset (pad_token_id + 1 "
				    "= %" PRId64 "); a sample needs 2 ([CLS] and [SEP])", where,
				    c->max_positions, left, left == 1 ? "" : "s", e->pos_offset);
	if (left < 2)
		return mk_error_set(MK_EFORMAT, "'%s': max_position_embeddings %" PRId64 "; a "
				    "sample needs 2 ([CLS] and [SEP])", where, c->max_positions);
	return MK_OK;
}

/* Bytes of float32 weights held, saturating. */
static uint64_t load_bytes(const mk_model_config *c)
{
	uint64_t h = (uint64_t)c->hidden, i = (uint64_t)c->intermediate;
	uint64_t per = enc_mul(h, 4 * h + 2 * i), rows = (uint64_t)c->vocab +
			(uint64_t)c->max_positions + 8;
	uint64_t all = enc_add(enc_mul(per, (uint64_t)c->layers), enc_mul(rows, h));
	return enc_mul(all, 4);
}

int mk_encoder_load(mk_weights *w, const mk_model_config *c, uint64_t max_memory,
		    mk_encoder **out)
{
	load_ctx x = {.w = w, .c = c, .max_memory = max_memory};
	mk_encoder *e = calloc(1, sizeof *e);
	char **names = NULL, need[32], lim[32];
	size_t count = 0;
	int ret;

	*out = NULL;
	if (!e)
		return mk_error_set(MK_ENOMEM, "out of memory");
	e->c = *c;
	if (!max_memory)
		max_memory = MK_DEFAULT_MAX_MEMORY;
	if ((ret = load_check_config(c, e)))
		goto cleanup;
	e->dk = c->hidden / c->heads;
	if (load_bytes(c) > max_memory) {
		mk_format_bytes(load_bytes(c), need, sizeof need);
		mk_format_bytes(max_memory, lim, sizeof lim);
		mk_error_set(MK_ERANGE, "the weights take %s, more than the memory limit of %s",
			     need, lim);
		ret = mk_error_param("max_memory");
		goto cleanup;
	}
	e->w.max_memory = max_memory;
	if (!(x.lay = calloc((size_t)c->layers * LOAD_NROLES, sizeof *x.lay)) ||
	    !(e->layer = calloc((size_t)c->layers, sizeof *e->layer))) {
		ret = mk_error_set(MK_ENOMEM, "out of memory");
		goto cleanup;
	}
	if ((ret = mk_weights_list(w, 0, NULL, &names, &count)) ||
	    (ret = load_find(&x, names, count)) || (ret = load_embeddings(&x, e)))
		goto cleanup;
	for (int64_t l = 0; l < c->layers && ret == MK_OK; l++)
		ret = load_layer(&x, e, l);
	snprintf(e->naming, sizeof e->naming, "%s", x.tf ? "tf" : "torch");
	snprintf(e->prefix, sizeof e->prefix, "%s", x.prefix);
cleanup:
	mk_weights_list_free(names);
	free(x.lay);
	if (ret)
		mk_encoder_free(e);
	else
		*out = e;
	return ret;
}

const mk_model_config *mk_encoder_config(const mk_encoder *e)
{
	return &e->c;
}

int64_t mk_encoder_max_len(const mk_encoder *e)
{
	return e->c.max_positions - e->pos_offset;
}

const char *mk_encoder_naming(const mk_encoder *e)
{
	return e->naming;
}
