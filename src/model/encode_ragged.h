/* maskkit encode's layout without padding (encode_ragged.c): the datasets,
 * and each layer of a batch written as it comes.  Library-private. */
#ifndef MK_ENCODE_RAGGED_H
#define MK_ENCODE_RAGGED_H

#include "model.h"
#include "encode_chunks.h"

typedef struct eh_ragged eh_ragged;

typedef struct eh_ragged_shape {
	hid_t file;
	int64_t samples, layers, heads, hidden, n;
	const int64_t *len;  /* [samples] */
	int64_t qk_samples;  /* the first qk_samples samples' queries and keys (0: none) */
} eh_ragged_shape;

/* Creates /offsets, /attn and, with qk_samples, /qk/layer_L/{q,k}. */
int eh_ragged_create(const eh_packer *p, const eh_ragged_shape *s, eh_ragged **out);
/* What the packer needs for batches of `batch` samples: elements in the
 * largest chunk, blocks written at once (the size of `blocks` below). */
void eh_ragged_needs(const eh_ragged_shape *s, int64_t batch, size_t *elements, int64_t *blocks);
/* Layer x of the batch whose first sample is `first`: the chunks it
 * completes written.  Then, after the last batch, the chunks left. */
int eh_ragged_layer(eh_ragged *r, eh_packer *p, eh_block *blocks, int64_t first,
		    const mk_encoder_layer *x);
int eh_ragged_finish(eh_ragged *r, eh_packer *p, eh_block *blocks);
void eh_ragged_free(eh_ragged *r);

#endif
