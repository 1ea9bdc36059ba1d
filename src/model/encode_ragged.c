/*
 * maskkit encode's layout without padding: /attn [layers, T], each layer's
 * row the samples' [heads, len_i, len_i] blocks one after another, indexed
 * by /offsets; and each layer's queries and keys [tokens, heads, dk].
 *
 * The encoder hands over one layer of a batch at a time, its samples'
 * blocks contiguous (encoder.c), so each layer's row is written as a
 * stream: what arrives is appended, every chunk it completes is packed and
 * written, and the rest waits (at most a chunk a stream) for the next
 * batch.  The layers are rows of their own so that no chunk spans two of
 * them: a chunk is complete as soon as its layer's data is, and nothing
 * else of a batch is held.  (Sample-major order, [layers, heads, len, len]
 * per sample, would hold a whole batch's every layer until its last layer
 * came.)  Readers of one block read one stretch of one row.
 */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "encode_ragged.h"
#include "h5util.h"
#include "internal.h"

/* Elements in a chunk of /attn: 128 KiB of float32, a few (sample, layer)
 * blocks of short sentences (12 heads x 33 x 33 cells: 13 068), under a
 * tenth of a long one's (12 x 128 x 128), and the size at which deflate's
 * 32 KiB window has seen enough; floats of q and k a chunk, about the same. */
#define ER_CHUNK 32768
#define ER_QK_CHUNK 32768

/* One dataset written as a stream of rows of `width` floats along axis
 * `axis`, in chunks of `rows` rows.  Rows that complete no chunk wait in
 * buf[cur]; a chunk completed there is written from it while the next
 * rows go to the other buffer. */
typedef struct er_stream {
	hid_t dset;
	int axis;            /* 1: /attn's row `lead`; 0: q or k */
	hsize_t lead;
	int64_t width, rows; /* floats a row, rows a chunk */
	int64_t chunk, have; /* the next chunk; rows waiting */
	float *buf[2];
	int cur;
} er_stream;

struct eh_ragged {
	int64_t layers, qk_layers;
	er_stream *attn, *q, *k; /* [layers] each; q, k with queries and keys */
	int64_t qk_samples;      /* samples whose queries and keys are written */
};

static void er_block(er_stream *st, const float *src, int64_t rstride, int64_t valid,
		     eh_block *b)
{
	*b = (eh_block){.src = src, .heads = 1, .dset = st->dset};
	if (st->width == 1) { /* one row of elements, contiguous */
		b->rows = b->rows_valid = 1;
		b->cols = st->rows;
		b->cols_valid = valid;
	} else {
		b->rows = st->rows;
		b->rows_valid = valid;
		b->cols = b->cols_valid = st->width;
		b->rstride = rstride;
	}
	b->at[0] = st->lead;
	b->at[st->axis] = (hsize_t)(st->chunk++ * st->rows);
}

/* Appends nrows rows (row r at src + r * rstride); a chunk completed goes
 * to blocks[*m]. */
static void er_add(er_stream *st, const float *src, int64_t nrows, int64_t rstride,
		   eh_block *blocks, int64_t *m)
{
	while (nrows > 0) {
		if (st->have == 0 && nrows >= st->rows) { /* a whole chunk in place */
			er_block(st, src, rstride, st->rows, &blocks[(*m)++]);
			src += st->rows * rstride;
			nrows -= st->rows;
			continue;
		}
		int64_t take = nrows < st->rows - st->have ? nrows : st->rows - st->have;
		float *to = st->buf[st->cur] + st->have * st->width;
		if (rstride == st->width)
			memcpy(to, src, (size_t)(take * st->width) * sizeof *to);
		else
			for (int64_t r = 0; r < take; r++)
				memcpy(to + r * st->width, src + r * rstride,
				       (size_t)st->width * sizeof *to);
		st->have += take;
		src += take * rstride;
		nrows -= take;
		if (st->have == st->rows) {
			er_block(st, st->buf[st->cur], st->width, st->rows, &blocks[(*m)++]);
			st->cur ^= 1;
			st->have = 0;
		}
	}
}

static int er_stream_init(er_stream *st, hid_t dset, int axis, int64_t lead, int64_t width,
			  int64_t rows)
{
	*st = (er_stream){.dset = dset, .axis = axis, .lead = (hsize_t)lead, .width = width,
			  .rows = rows};
	for (int k = 0; k < 2; k++)
		if (!(st->buf[k] = malloc((size_t)(rows * width) * sizeof(float))))
			return mk_error_set(MK_ENOMEM, "out of memory for the chunks");
	return dset < 0 ? mk_error_set(MK_ESYS, "HDF5 cannot create a ragged dataset") : MK_OK;
}

/* The attributes a reader needs beside the shape. */
static int er_attrs(hid_t d, int64_t heads, int64_t n)
{
	int ret = mk_h5_attr_str(d, "layout", "ragged");

	if (ret == MK_OK)
		ret = mk_h5_attr(d, "heads", H5T_STD_I64LE, H5T_NATIVE_INT64, &heads);
	if (ret == MK_OK && n > 0)
		ret = mk_h5_attr(d, "n", H5T_STD_I64LE, H5T_NATIVE_INT64, &n);
	return ret;
}

static int er_create_attn(eh_ragged *r, const eh_packer *p, const eh_ragged_shape *s,
			  uint64_t cells)
{
	hsize_t dims[2] = {(hsize_t)s->layers, cells}, chunk[2] = {1, cells < ER_CHUNK ? cells
								  : ER_CHUNK};
	hid_t d = eh_create_floats(p, s->file, "attn", 2, dims, chunk);
	int ret = d < 0 ? mk_error_set(MK_ESYS, "HDF5 cannot create '/attn'")
			: er_attrs(d, s->heads, s->n);

	for (int64_t l = 0; ret == MK_OK && l < s->layers; l++) {
		/* each stream holds its own handle: mk_h5w_close closes them all */
		hid_t dl = l ? H5Dopen2(s->file, "attn", H5P_DEFAULT) : d;
		ret = er_stream_init(&r->attn[l], dl, 1, l, 1, (int64_t)chunk[1]);
	}
	return ret;
}

static int er_create_qk(eh_ragged *r, const eh_packer *p, const eh_ragged_shape *s,
			int64_t tokens)
{
	int64_t dk = s->hidden / s->heads, rows = ER_QK_CHUNK / s->hidden;
	char name[64];
	int ret = MK_OK;

	rows = rows < 1 ? 1 : rows > tokens ? tokens : rows;
	for (int64_t l = 0; ret == MK_OK && l < s->layers; l++) {
		hsize_t dims[3] = {(hsize_t)tokens, (hsize_t)s->heads, (hsize_t)dk};
		hsize_t chunk[3] = {(hsize_t)rows, (hsize_t)s->heads, (hsize_t)dk};
		hid_t g, dq = H5I_INVALID_HID, dkk = H5I_INVALID_HID;
		snprintf(name, sizeof name, "/qk/layer_%" PRId64, l);
		g = H5Gcreate2(s->file, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
		if (g >= 0) {
			dq = eh_create_floats(p, g, "q", 3, dims, chunk);
			dkk = eh_create_floats(p, g, "k", 3, dims, chunk);
			H5Gclose(g);
		}
		if (g < 0 || dq < 0 || dkk < 0)
			return mk_error_set(MK_ESYS, "HDF5 cannot create '%s'", name);
		if ((ret = er_attrs(dq, s->heads, 0)) == MK_OK && (ret = er_attrs(dkk, s->heads, 0)) ==
		    MK_OK && (ret = er_stream_init(&r->q[l], dq, 0, 0, s->hidden, rows)) == MK_OK)
			ret = er_stream_init(&r->k[l], dkk, 0, 0, s->hidden, rows);
	}
	return ret;
}

int eh_ragged_create(const eh_packer *p, const eh_ragged_shape *s, eh_ragged **out)
{
	eh_ragged *r = calloc(1, sizeof *r);
	int64_t *off = malloc((size_t)(s->samples + 1) * sizeof *off), tokens = 0;
	int ret;

	*out = r;
	if (!r || !off || !(r->attn = calloc((size_t)s->layers, sizeof *r->attn)) ||
	    (s->qk_samples && (!(r->q = calloc((size_t)s->layers, sizeof *r->q)) ||
			       !(r->k = calloc((size_t)s->layers, sizeof *r->k))))) {
		free(off);
		return mk_error_set(MK_ENOMEM, "out of memory");
	}
	r->layers = s->layers;
	r->qk_layers = s->qk_samples ? s->layers : 0;
	r->qk_samples = s->qk_samples;
	off[0] = 0;
	for (int64_t i = 0; i < s->samples; i++) {
		off[i + 1] = off[i] + s->heads * s->len[i] * s->len[i];
		tokens += i < s->qk_samples ? s->len[i] : 0;
	}
	ret = eh_write_small(s->file, "offsets", H5T_STD_I64LE, H5T_NATIVE_INT64, 1,
			     (hsize_t[]){(hsize_t)s->samples + 1}, off);
	if (ret == MK_OK)
		ret = er_create_attn(r, p, s, (uint64_t)off[s->samples]);
	if (ret == MK_OK && s->qk_samples)
		ret = er_create_qk(r, p, s, tokens);
	free(off);
	return ret;
}

void eh_ragged_needs(const eh_ragged_shape *s, int64_t batch, size_t *elements, int64_t *blocks)
{
	int64_t cells = batch * s->heads * s->n * s->n, tokens = batch * s->n;
	int64_t qrows = ER_QK_CHUNK / s->hidden < 1 ? 1 : ER_QK_CHUNK / s->hidden;

	*elements = ER_CHUNK > (size_t)(qrows * s->hidden) ? ER_CHUNK : (size_t)(qrows * s->hidden);
	*blocks = cells / ER_CHUNK + 2 + (s->qk_samples ? 2 * (tokens / qrows + 2) : 0);
	*blocks = *blocks > 3 * s->layers ? *blocks : 3 * s->layers; /* eh_ragged_finish's */
}

int eh_ragged_layer(eh_ragged *r, eh_packer *p, eh_block *blocks, int64_t first,
		    const mk_encoder_layer *x)
{
	int64_t last = x->count - 1, m = 0, qk_tokens = 0;

	/* the batch's blocks lie one after another from x->p (encoder.c) */
	er_add(&r->attn[x->layer], x->p, x->poff[last] + x->heads * x->len[last] * x->len[last],
	       1, blocks, &m);
	for (int64_t s = 0; s < x->count && first + s < r->qk_samples; s++)
		qk_tokens += x->len[s];
	for (int t = 0; t < 2 && qk_tokens; t++)
		er_add(t ? &r->k[x->layer] : &r->q[x->layer],
		       x->qkv + x->off[0] * 3 * x->hidden + t * x->hidden, qk_tokens,
		       3 * x->hidden, blocks, &m);
	return eh_write_blocks(p, blocks, m);
}

int eh_ragged_finish(eh_ragged *r, eh_packer *p, eh_block *blocks)
{
	int64_t m = 0;

	for (int64_t l = 0; l < r->layers; l++) {
		er_stream *st[3] = {&r->attn[l], l < r->qk_layers ? &r->q[l] : NULL,
				    l < r->qk_layers ? &r->k[l] : NULL};
		for (int t = 0; t < 3; t++)
			if (st[t] && st[t]->have)
				er_block(st[t], st[t]->buf[st[t]->cur], st[t]->width, st[t]->have,
					 &blocks[m++]);
	}
	return eh_write_blocks(p, blocks, m);
}

void eh_ragged_free(eh_ragged *r)
{
	if (!r)
		return;
	for (int64_t l = 0; l < r->layers; l++)
		for (int k = 0; k < 2; k++) {
			if (r->attn)
				free(r->attn[l].buf[k]);
			if (r->q)
				free(r->q[l].buf[k]);
			if (r->k)
				free(r->k[l].buf[k]);
		}
	free(r->attn);
	free(r->q);
	free(r->k);
	free(r);
}
