/* maskkit report: the synthetic BERT the report falls back to when no real
 * model is at hand (tools/fetch-model.sh fetches one).  Written here, in C,
 * as a HuggingFace directory (config.json, model.safetensors, vocab.txt), so
 * that the same commands run on it as on a real model and the report needs
 * no Python.  Its numbers mean nothing about trained models; the report
 * labels every figure made from it as synthetic.
 *
 * The position embeddings are shaped like trained ones: a few sinusoids of
 * position with random frequencies and phases, mixed into the hidden size,
 * plus noise that grows with position (late positions are trained less), so
 * P = E E^T is nearly Toeplitz near the start and less so further on.  The
 * vocabulary is letters and "##letters", digits and punctuation: any English
 * text tokenises, letter by letter. */
#include "config.h"
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <errno.h>
#include "maskkit.h"
#include "report.h"

static const double SY_PI = 3.14159265358979323846;
enum { SY_POS = 256, SY_HIDDEN = 64, SY_HEADS = 4, SY_LAYERS = 2, SY_INTER = 128, SY_WAVES = 6 };

typedef struct sy_tensor {
	char name[96];
	int64_t rows, cols; /* cols 0: a vector */
	float *data;
} sy_tensor;

typedef struct sy_model {
	sy_tensor t[64];
	int n;
	int64_t vocab;
	mk_rng g;
} sy_model;

static double sy_normal(mk_rng *g)
{
	double z[2];
	mk_rng_normal2(g, z);
	return z[0];
}

static double sy_uniform(mk_rng *g)
{
	return (double)(mk_rng_next(g) >> 11) * 0x1.0p-53;
}

static float *sy_add(sy_model *m, const char *name, int64_t rows, int64_t cols)
{
	sy_tensor *t = &m->t[m->n++];
	snprintf(t->name, sizeof t->name, "%s", name);
	t->rows = rows;
	t->cols = cols;
	t->data = calloc((size_t)(rows * (cols ? cols : 1)), sizeof(float));
	return t->data;
}

/* scale * N(0, 1) entries, plus `shift`. */
static void sy_fill(sy_model *m, float *x, int64_t count, double scale, double shift)
{
	for (int64_t k = 0; x && k < count; k++)
		x[k] = (float)(shift + scale * sy_normal(&m->g));
}

static void sy_positions(sy_model *m)
{
	float *e = sy_add(m, "embeddings.position_embeddings.weight", SY_POS, SY_HIDDEN);
	double freq[SY_WAVES], phase[SY_WAVES], mix[SY_WAVES][SY_HIDDEN];

	for (int w = 0; w < SY_WAVES; w++) {
		freq[w] = 2 * SY_PI / (4 + 60 * sy_uniform(&m->g));
		phase[w] = 2 * SY_PI * sy_uniform(&m->g);
		for (int c = 0; c < SY_HIDDEN; c++)
			mix[w][c] = sy_normal(&m->g) / sqrt(SY_WAVES);
	}
	for (int64_t i = 0; e && i < SY_POS; i++)
		for (int c = 0; c < SY_HIDDEN; c++) {
			double v = 0;
			for (int w = 0; w < SY_WAVES; w++)
				v += mix[w][c] * sin(freq[w] * (double)i + phase[w]);
			e[i * SY_HIDDEN + c] = (float)(v + (0.05 + 0.4 * i / SY_POS) * sy_normal(&m->g));
		}
}

static void sy_layer(sy_model *m, int l)
{
	static const struct { const char *name; int out, in; } lin[] = {
		{"attention.self.query", SY_HIDDEN, SY_HIDDEN}, {"attention.self.key", SY_HIDDEN, SY_HIDDEN},
		{"attention.self.value", SY_HIDDEN, SY_HIDDEN},
		{"attention.output.dense", SY_HIDDEN, SY_HIDDEN},
		{"intermediate.dense", SY_INTER, SY_HIDDEN}, {"output.dense", SY_HIDDEN, SY_INTER}};
	static const char *const norms[] = {"attention.output.LayerNorm", "output.LayerNorm"};
	char name[96];

	for (size_t k = 0; k < sizeof lin / sizeof *lin; k++) {
		snprintf(name, sizeof name, "encoder.layer.%d.%s.weight", l, lin[k].name);
		sy_fill(m, sy_add(m, name, lin[k].out, lin[k].in), (int64_t)lin[k].out * lin[k].in,
			1 / sqrt(lin[k].in), 0);
		snprintf(name, sizeof name, "encoder.layer.%d.%s.bias", l, lin[k].name);
		sy_fill(m, sy_add(m, name, lin[k].out, 0), lin[k].out, 0.05, 0);
	}
	for (int k = 0; k < 2; k++) {
		snprintf(name, sizeof name, "encoder.layer.%d.%s.weight", l, norms[k]);
		sy_fill(m, sy_add(m, name, SY_HIDDEN, 0), SY_HIDDEN, 0.05, 1);
		snprintf(name, sizeof name, "encoder.layer.%d.%s.bias", l, norms[k]);
		sy_fill(m, sy_add(m, name, SY_HIDDEN, 0), SY_HIDDEN, 0.05, 0);
	}
}

/* The vocabulary: specials, then each of the characters as a word and as
 * a "##" continuation. */
static const char SY_CHARS[] = "abcdefghijklmnopqrstuvwxyz0123456789.,;:!?'\"()-/";

static int sy_vocab(void *file, void *arg)
{
	FILE *f = file;
	(void)arg;
	fputs("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n", f);
	for (const char *c = SY_CHARS; *c; c++)
		fprintf(f, "%c\n##%c\n", *c, *c);
	return ferror(f) ? mk_error_set(MK_EIO, "write failed") : MK_OK;
}

static int sy_config(void *file, void *arg)
{
	FILE *f = file;
	const sy_model *m = arg;
	fprintf(f, "{\n  \"model_type\": \"bert\",\n  \"hidden_size\": %d,\n"
		"  \"num_attention_heads\": %d,\n  \"num_hidden_layers\": %d,\n"
		"  \"intermediate_size\": %d,\n  \"max_position_embeddings\": %d,\n"
		"  \"vocab_size\": %lld,\n  \"type_vocab_size\": 2,\n  \"hidden_act\": \"gelu\",\n"
		"  \"layer_norm_eps\": 1e-12,\n  \"pad_token_id\": 0,\n"
		"  \"_maskkit\": \"synthetic: random weights written by maskkit report\"\n}\n",
		SY_HIDDEN, SY_HEADS, SY_LAYERS, SY_INTER, SY_POS, (long long)m->vocab);
	return ferror(f) ? mk_error_set(MK_EIO, "write failed") : MK_OK;
}

/* safetensors: the header's length (8 bytes, little-endian), the JSON
 * header padded with spaces to 8 bytes, the float32 data. */
static int sy_safetensors(void *file, void *arg)
{
	FILE *f = file;
	const sy_model *m = arg;
	cJSON *h = cJSON_CreateObject();
	uint64_t off = 0, hlen;
	char *text = NULL;

	for (int k = 0; h && k < m->n; k++) {
		const sy_tensor *t = &m->t[k];
		uint64_t bytes = (uint64_t)t->rows * (uint64_t)(t->cols ? t->cols : 1) * 4;
		cJSON *x = cJSON_AddObjectToObject(h, t->name), *shape, *offs;
		cJSON_AddStringToObject(x, "dtype", "F32");
		shape = cJSON_AddArrayToObject(x, "shape");
		cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)t->rows));
		if (t->cols)
			cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)t->cols));
		offs = cJSON_AddArrayToObject(x, "data_offsets");
		cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)off));
		cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)(off + bytes)));
		off += bytes;
	}
	if (!h || !(text = cJSON_PrintUnformatted(h))) {
		cJSON_Delete(h);
		return mk_error_set(MK_ENOMEM, "out of memory");
	}
	hlen = (strlen(text) + 7) / 8 * 8;
	for (int b = 0; b < 8; b++)
		fputc((int)((hlen >> (8 * b)) & 0xff), f);
	fprintf(f, "%-*s", (int)hlen, text);
	free(text);
	cJSON_Delete(h);
	for (int k = 0; k < m->n; k++) /* x86 and every host we build for are little-endian */
		fwrite(m->t[k].data, 4, (size_t)(m->t[k].rows * (m->t[k].cols ? m->t[k].cols : 1)), f);
	return ferror(f) ? mk_error_set(MK_EIO, "write failed") : MK_OK;
}

static void sy_build(sy_model *m, uint64_t seed)
{
	mk_rng_seed(&m->g, seed, 0x73796e42ULL /* "synB" */, 0);
	m->vocab = 5 + 2 * (int64_t)strlen(SY_CHARS);
	sy_fill(m, sy_add(m, "embeddings.word_embeddings.weight", m->vocab, SY_HIDDEN),
		m->vocab * SY_HIDDEN, 1, 0.1);
	sy_positions(m);
	sy_fill(m, sy_add(m, "embeddings.token_type_embeddings.weight", 2, SY_HIDDEN),
		2 * SY_HIDDEN, 0.1, 0);
	sy_fill(m, sy_add(m, "embeddings.LayerNorm.weight", SY_HIDDEN, 0), SY_HIDDEN, 0.05, 1);
	sy_fill(m, sy_add(m, "embeddings.LayerNorm.bias", SY_HIDDEN, 0), SY_HIDDEN, 0.05, 0);
	for (int l = 0; l < SY_LAYERS; l++)
		sy_layer(m, l);
}

int rp_synthetic_bert(const char *dir, uint64_t seed, char *reason, size_t size)
{
	sy_model *m = calloc(1, sizeof *m);
	char path[4096 + 32];
	int ret = MK_OK;

	if (!m)
		return snprintf(reason, size, "out of memory"), MK_ENOMEM;
	sy_build(m, seed);
	for (int k = 0; k < m->n; k++)
		if (!m->t[k].data)
			ret = MK_ENOMEM;
	if (ret == MK_OK && mkdir(dir, 0777) != 0 && errno != EEXIST)
		ret = mk_error_errno(errno, "'%s'", dir);
	if (ret == MK_OK) {
		snprintf(path, sizeof path, "%s/config.json", dir);
		ret = mk_write_atomic(path, sy_config, m);
	}
	if (ret == MK_OK) {
		snprintf(path, sizeof path, "%s/vocab.txt", dir);
		ret = mk_write_atomic(path, sy_vocab, m);
	}
	if (ret == MK_OK) {
		snprintf(path, sizeof path, "%s/model.safetensors", dir);
		ret = mk_write_atomic(path, sy_safetensors, m);
	}
	if (ret)
		snprintf(reason, size, "writing the synthetic model in %s: %s", dir,
			 ret == MK_ENOMEM ? "out of memory" : mk_error());
	for (int k = 0; k < m->n; k++)
		free(m->t[k].data);
	free(m);
	return ret;
}
