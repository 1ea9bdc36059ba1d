/* A tiny random BERT for check_encoder.c: its numbers drawn from a fixed
 * seed (rounded to float32, so that every file holds the same floats), and
 * written as an HDF5 checkpoint under PyTorch's, TF1's or HF TF2's names. */
#ifndef MK_TINYBERT_H
#define MK_TINYBERT_H

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "encoder_internal.h"
#include "h5testutil.h"
#include "scratchutil.h"

enum { H = 8, HEADS = 2, DK = 4, IN = 16, LAYERS = 2, VOCAB = 20, POS = 16, TYPES = 2 };
enum { NAMES_TORCH, NAMES_TF1, NAMES_TF2 };

/* The model's numbers, [out, in] as PyTorch stores them. */
typedef struct tiny {
	double word[VOCAB * H], pos[POS * H], type[TYPES * H], ln_g[H], ln_b[H];
	struct {
		double w[6][H * IN]; /* q, k, v, o [H, H]; i [IN, H]; f [H, IN] */
		double b[6][IN];     /* their biases */
		double g1[H], b1[H], g2[H], b2[H];
	} l[LAYERS];
} tiny;

static const char *const tiny_dense[6] = {"attention.self.query", "attention.self.key",
					  "attention.self.value", "attention.output.dense",
					  "intermediate.dense", "output.dense"};

static uint64_t tiny_seed;
/* Uniform in [-a, a), rounded to float32 so that every file holds the same floats. */
static double tiny_rand(double a)
{
	tiny_seed = tiny_seed * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(float)(a * (2.0 * (double)(tiny_seed >> 11) / 9007199254740992.0 - 1.0));
}

static void tiny_fill(double *v, int n, double a, double base)
{
	for (int k = 0; k < n; k++)
		v[k] = base + tiny_rand(a);
}

static void tiny_make(tiny *m, uint64_t seed)
{
	tiny_seed = seed;
	tiny_fill(m->word, VOCAB * H, 1, 0);
	tiny_fill(m->pos, POS * H, 0.5, 0);
	tiny_fill(m->type, TYPES * H, 0.2, 0);
	tiny_fill(m->ln_g, H, 0.1, 1);
	tiny_fill(m->ln_b, H, 0.1, 0);
	for (int l = 0; l < LAYERS; l++) {
		for (int k = 0; k < 6; k++) {
			tiny_fill(m->l[l].w[k], H * (k >= 4 ? IN : H), 0.6, 0);
			tiny_fill(m->l[l].b[k], k == 4 ? IN : H, 0.1, 0);
		}
		tiny_fill(m->l[l].g1, H, 0.1, 1);
		tiny_fill(m->l[l].b1, H, 0.1, 0);
		tiny_fill(m->l[l].g2, H, 0.1, 1);
		tiny_fill(m->l[l].b2, H, 0.1, 0);
	}
}

/* The name of a role under the given naming: torch is "bert." + the
 * canonical name; TF1 "bert/encoder/layer_0/.../kernel", a bare
 * ".../word_embeddings"; HF TF2 "bert/tf_bert_model/bert/encoder/layer_._0/
 * .../kernel:0", ".../position_embeddings/embeddings:0". */
static void tiny_name(int naming, const char *canon, char *buf, size_t cap)
{
	char tok[16][64], out[256] = "";
	int n = 0;

	if (naming == NAMES_TORCH) {
		snprintf(buf, cap, "bert.%s", canon);
		return;
	}
	for (const char *s = canon; *s; n++) {
		size_t len = strcspn(s, ".");
		snprintf(tok[n], sizeof tok[n], "%.*s", (int)len, s);
		s += len + (s[len] == '.');
	}
	for (int k = 0; k < n; k++) {
		const char *t = tok[k], *prev = k ? tok[k - 1] : "";
		char piece[1024];
		if (!strcmp(t, "layer")) {
			snprintf(piece, sizeof piece, "layer_%s%s", naming == NAMES_TF1 ? "" : "._",
				 tok[++k]);
		} else if (k == n - 1 && strstr(prev, "_embeddings")) {
			if (naming == NAMES_TF1)
				continue;
			snprintf(piece, sizeof piece, "%s", strstr(prev, "word") ? "weight" : "embeddings");
		} else if (k == n - 1 && !strcmp(prev, "LayerNorm")) {
			snprintf(piece, sizeof piece, "%s", strcmp(t, "weight") ? "beta" : "gamma");
		} else if (k == n - 1 && !strcmp(t, "weight")) {
			snprintf(piece, sizeof piece, "kernel");
		} else {
			snprintf(piece, sizeof piece, "%s", t);
		}
		{
			size_t used = strlen(out), plen = strlen(piece);
			ck_assert(used + plen + 2 < sizeof out);
			if (used)
				out[used++] = '/';
			memcpy(out + used, piece, plen + 1);
		}
	}
	snprintf(buf, cap, naming == NAMES_TF1 ? "bert/%s" : "bert/tf_bert_model/bert/%s:0", out);
}

static void tiny_put(hid_t f, int naming, const char *canon, int rows, int cols, const double *v)
{
	char name[256];
	double *t = NULL;

	tiny_name(naming, canon, name, sizeof name);
	if (cols == 0) {
		h5t_write1(f, name, (hsize_t)rows, v);
		return;
	}
	if (naming != NAMES_TORCH && !strstr(canon, "embeddings")) { /* kernels are [in, out] */
		t = malloc((size_t)(rows * cols) * sizeof *t);
		for (int i = 0; i < rows; i++)
			for (int j = 0; j < cols; j++)
				t[j * rows + i] = v[i * cols + j];
		h5t_write2(f, name, (hsize_t)cols, (hsize_t)rows, t);
		free(t);
		return;
	}
	h5t_write2(f, name, (hsize_t)rows, (hsize_t)cols, v);
}

/* Writes m under a naming; skip (may be NULL) names a role left out. */
static const char *tiny_write(const tiny *m, int naming, const char *file, const char *skip)
{
	const char *p = path(file);
	hid_t f = h5t_create(p);
	char canon[128];

#define PUT(c, r, k, v) if (!skip || strcmp(skip, c)) tiny_put(f, naming, c, r, k, v)
	PUT("embeddings.word_embeddings.weight", VOCAB, H, m->word);
	PUT("embeddings.position_embeddings.weight", POS, H, m->pos);
	PUT("embeddings.token_type_embeddings.weight", TYPES, H, m->type);
	PUT("embeddings.LayerNorm.weight", H, 0, m->ln_g);
	PUT("embeddings.LayerNorm.bias", H, 0, m->ln_b);
	for (int l = 0; l < LAYERS; l++) {
		for (int k = 0; k < 6; k++) {
			snprintf(canon, sizeof canon, "encoder.layer.%d.%s.weight", l, tiny_dense[k]);
			PUT(canon, k == 4 ? IN : H, k == 5 ? IN : H, m->l[l].w[k]);
			snprintf(canon, sizeof canon, "encoder.layer.%d.%s.bias", l, tiny_dense[k]);
			PUT(canon, k == 4 ? IN : H, 0, m->l[l].b[k]);
		}
		snprintf(canon, sizeof canon, "encoder.layer.%d.attention.output.LayerNorm.weight", l);
		PUT(canon, H, 0, m->l[l].g1);
		snprintf(canon, sizeof canon, "encoder.layer.%d.attention.output.LayerNorm.bias", l);
		PUT(canon, H, 0, m->l[l].b1);
		snprintf(canon, sizeof canon, "encoder.layer.%d.output.LayerNorm.weight", l);
		PUT(canon, H, 0, m->l[l].g2);
		snprintf(canon, sizeof canon, "encoder.layer.%d.output.LayerNorm.bias", l);
		PUT(canon, H, 0, m->l[l].b2);
	}
#undef PUT
	H5Fclose(f);
	return p;
}

static mk_model_config tiny_config(void)
{
	mk_model_config c = {.model_type = "bert", .hidden_act = "gelu",
			     .position_embedding_type = "absolute", .heads = HEADS,
			     .layers = LAYERS, .hidden = H, .intermediate = IN, .max_positions = POS,
			     .vocab = VOCAB, .type_vocab = TYPES, .pad_token_id = 0,
			     .layer_norm_eps = 1e-12};
	return c;
}

static int tiny_load(const char *file, const mk_model_config *c, mk_encoder **e)
{
	mk_weights *w = NULL;
	int ret = mk_weights_open(file, &w);
	if (ret == MK_OK)
		ret = mk_encoder_load(w, c, 0, e);
	mk_weights_close(w);
	return ret;
}

#endif
