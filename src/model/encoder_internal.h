/* The encoder's insides, shared by its loader (encoder_load.c) and its
 * forward pass (encoder.c); library-private. */
#ifndef MK_ENCODER_INTERNAL_H
#define MK_ENCODER_INTERNAL_H

#include "model.h"
#include "internal.h"

/* One layer's weights, float32.  Every dense weight is stored [out, in]
 * (PyTorch's nn.Linear) whatever the checkpoint's layout, so that a TF
 * kernel and the same numbers under PyTorch names run the same sgemm and
 * give the same bits.  Query, key and value are stacked into one [3H, H]
 * matrix: one sgemm projects all three. */
typedef struct enc_layer {
	float *wqkv, *bqkv;  /* [3H, H], [3H] */
	float *wo, *bo;      /* attention output: [H, H], [H] */
	float *ln1_g, *ln1_b;
	float *wi, *bi;      /* intermediate: [I, H], [I] */
	float *wf, *bf;      /* output: [H, I], [H] */
	float *ln2_g, *ln2_b;
} enc_layer;

typedef enum enc_act { ENC_GELU, ENC_GELU_TANH, ENC_RELU } enc_act;

/* Buffers of one batch, grown to the largest batch seen. */
typedef struct enc_work {
	int64_t tokens, cells;  /* capacities: tokens, and probabilities */
	float *x, *qkv, *ctx, *tmp, *inter, *p;
	int64_t *off, *poff;    /* per sentence: first token, first probability */
	int64_t *boff;          /* per sentence, and one more: first block of enc_linear's rows */
	int64_t count;          /* capacity of off/poff */
	uint64_t max_memory;    /* bound on the buffers */
} enc_work;

struct mk_encoder {
	mk_model_config c;
	int64_t dk;           /* hidden / heads */
	int64_t pos_offset;   /* position of the first token (RoBERTa: pad_token_id + 1) */
	enc_act act;
	char naming[8];       /* "torch" or "tf" */
	char prefix[64];      /* "", "bert", "bert/tf_bert_model/bert", ... */
	float *word, *pos, *type0, *ln_g, *ln_b; /* type0: token type 0's row */
	enc_layer *layer;
	enc_work w;
	/* --mask: the expression's text and seed, and its mask at each length
	 * (materialised on first use; max_positions + 1 entries) */
	char *mask_spec;
	uint64_t mask_seed;
	mk_mask **masks;
	mk_encoder_times t;
};

/* x[i] = LayerNorm(x[i] + y[i]) for rows of h (y NULL: of x[i]), with
 * gain g and bias b; statistics in double.  (Not static: unit-tested.) */
void mk_enc_layernorm(float *x, const float *y, int64_t rows, int64_t h, const float *g,
		      const float *b, double eps);
/* The activation in place over count values. */
void mk_enc_activate(float *x, int64_t count, enc_act act);

/* Sizes, saturating at UINT64_MAX (which no memory bound allows). */
static inline uint64_t enc_mul(uint64_t a, uint64_t b)
{
	return a && b > UINT64_MAX / a ? UINT64_MAX : a * b;
}

static inline uint64_t enc_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

#endif
