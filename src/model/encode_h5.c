/*
 * maskkit encode's output: the attention probabilities of every sample and
 * layer, written batch by batch, with /lengths, /ids and optionally each
 * layer's queries and keys.  Padded: /attn [samples, layers, heads, N, N]
 * in chunks of one (sample, layer) and a tile of B x B cells; ragged:
 * encode_ragged.c.  The chunks are packed on the threads (encode_chunks.c).
 */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "model.h"
#include "encode_chunks.h"
#include "encode_ragged.h"
#include "h5util.h"
#include "h5write.h"
#include "internal.h"

/* /attn is chunked by tiles of (sample, layer, every head, B query rows, B
 * keys), B = N / 4 rounded up to EH_TILE_ALIGN and at least EH_TILE_MIN: a
 * sample's cells past its length are zeros, and a tile of them is one chunk
 * compressed once per file and written again, so the padding around a short
 * sentence costs no deflate (200 sentences of mean length 33, N = 128:
 * writing 0.5 s instead of 1.15 s). */
#define EH_TILE_MIN 32
#define EH_TILE_ALIGN 8

typedef struct eh_job {
	mk_encoder *e;
	const mk_encode_ids *x;
	const mk_encode_opts *o;
	mk_encode_result *r;
	mk_h5w w;
	hid_t attn, *q, *k;  /* padded; q, k: per layer, with --qk */
	eh_ragged *ragged;   /* the ragged layout's streams, else NULL */
	eh_packer pk;
	int64_t qk_samples;  /* samples whose queries and keys are written */
	int64_t first;       /* the batch's first sample */
	int64_t tile, tiles; /* a chunk's rows and keys; tiles along each axis */
	eh_block *blocks;    /* what one layer of a batch writes */
	double t0;
} eh_job;

static double eh_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The layer callback of mk_encoder_forward. */
static int eh_layer(void *arg, const mk_encoder_layer *x)
{
	eh_job *j = arg;
	int64_t n = j->x->n, m = 0;

	if (j->ragged)
		return eh_ragged_layer(j->ragged, &j->pk, j->blocks, j->first, x);
	for (int64_t s = 0; s < x->count; s++) {
		int64_t len = x->len[s], at = j->first + s;
		for (int64_t b = 0; b < j->tiles * j->tiles; b++) {
			int64_t r0 = b / j->tiles * j->tile, c0 = b % j->tiles * j->tile;
			int64_t rv = len - r0, cv = len - c0;
			rv = rv < 0 ? 0 : rv > j->tile ? j->tile : rv;
			cv = cv < 0 ? 0 : cv > j->tile ? j->tile : cv;
			j->blocks[m++] = (eh_block){
				.src = rv && cv ? x->p + x->poff[s] + r0 * len + c0 : NULL,
				.heads = x->heads, .rows = j->tile, .cols = j->tile, .rows_valid = rv,
				.cols_valid = cv, .hstride = len * len, .rstride = len, .dset = j->attn,
				.at = {(hsize_t)at, (hsize_t)x->layer, 0, (hsize_t)r0, (hsize_t)c0}};
		}
		for (int t = 0; at < j->qk_samples && t < 2; t++)
			j->blocks[m++] = (eh_block){
				.src = x->qkv + x->off[s] * 3 * x->hidden + t * x->hidden,
				.heads = x->heads, .rows = n, .cols = x->dk, .rows_valid = len,
				.cols_valid = x->dk, .hstride = x->dk, .rstride = 3 * x->hidden,
				.dset = t ? j->k[x->layer] : j->q[x->layer], .at = {(hsize_t)at}};
	}
	return eh_write_blocks(&j->pk, j->blocks, m);
}

/* ---- the file ------------------------------------------------------------------ */

/* A fixed-length (NUL-padded) string attribute, which every reader takes. */
static int eh_attr_text(hid_t obj, const char *name, const char *s)
{
	hid_t t = H5Tcopy(H5T_C_S1);
	int ret;

	if (!s || !*s)
		s = "";
	if (t < 0 || H5Tset_size(t, strlen(s) ? strlen(s) : 1) < 0 ||
	    H5Tset_strpad(t, H5T_STR_NULLPAD) < 0 || H5Tset_cset(t, H5T_CSET_UTF8) < 0)
		ret = mk_error_set(MK_ESYS, "HDF5: cannot make a string type");
	else
		ret = mk_h5_attr(obj, name, t, t, s);
	if (t >= 0)
		H5Tclose(t);
	return ret;
}

static int eh_attrs(eh_job *j)
{
	const mk_model_config *c = mk_encoder_config(j->e);
	int64_t v[4] = {c->layers, c->heads, j->o->max_len, j->x->truncated};
	static const char *const names[4] = {"layers", "heads", "max_len", "truncated"};
	hid_t root = j->w.file;
	int ret = MK_OK;

	for (int k = 0; k < 4 && ret == MK_OK; k++)
		ret = mk_h5_attr(root, names[k], H5T_STD_I64LE, H5T_NATIVE_INT64, &v[k]);
	if (ret == MK_OK)
		ret = eh_attr_text(root, "model", j->o->model);
	if (ret == MK_OK)
		ret = eh_attr_text(root, "model_type", c->model_type);
	if (ret == MK_OK)
		ret = eh_attr_text(root, "text", j->o->text);
	return ret;
}

/* The groups /qk and, padded, /qk/layer_L with q and k [samples, heads, N, dk]. */
static int eh_create_qk(eh_job *j)
{
	const mk_model_config *c = mk_encoder_config(j->e);
	int64_t n = j->x->n, dk = c->hidden / c->heads;
	hsize_t qd[4] = {(hsize_t)j->qk_samples, (hsize_t)c->heads, (hsize_t)n, (hsize_t)dk};
	hsize_t qc[4] = {1, (hsize_t)c->heads, (hsize_t)n, (hsize_t)dk};
	char name[64];
	hid_t g = H5Gcreate2(j->w.file, "qk", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);

	if (g < 0)
		return mk_error_set(MK_ESYS, "HDF5 cannot create '/qk'");
	H5Gclose(g);
	for (int64_t l = 0; j->o->layout == MK_ENCODE_PADDED && l < c->layers; l++) {
		snprintf(name, sizeof name, "/qk/layer_%" PRId64, l);
		g = H5Gcreate2(j->w.file, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
		if (g >= 0) {
			j->q[l] = eh_create_floats(&j->pk, g, "q", 4, qd, qc);
			j->k[l] = eh_create_floats(&j->pk, g, "k", 4, qd, qc);
			H5Gclose(g);
		}
		if (g < 0 || j->q[l] < 0 || j->k[l] < 0)
			return mk_error_set(MK_ESYS, "HDF5 cannot create '%s'", name);
	}
	return MK_OK;
}

static int eh_create(eh_job *j)
{
	const mk_model_config *c = mk_encoder_config(j->e);
	int64_t s = j->x->samples, n = j->x->n;
	hsize_t dims[5] = {(hsize_t)s, (hsize_t)c->layers, (hsize_t)c->heads, (hsize_t)n, (hsize_t)n};
	hsize_t chunk[5] = {1, 1, (hsize_t)c->heads, (hsize_t)j->tile, (hsize_t)j->tile};
	int ret;

	if ((ret = eh_write_small(j->w.file, "lengths", H5T_STD_I64LE, H5T_NATIVE_INT64, 1, dims,
				  j->x->len)) ||
	    (ret = eh_write_small(j->w.file, "ids", H5T_STD_I32LE, H5T_NATIVE_INT32, 2,
				  (hsize_t[]){(hsize_t)s, (hsize_t)n}, j->x->ids)) ||
	    (ret = eh_attrs(j)) || (j->qk_samples && (ret = eh_create_qk(j))))
		return ret;
	if (j->o->layout == MK_ENCODE_RAGGED)
		return eh_ragged_create(&j->pk, &(eh_ragged_shape){
			.file = j->w.file, .samples = s, .layers = c->layers, .heads = c->heads,
			.hidden = c->hidden, .n = n, .len = j->x->len, .qk_samples = j->qk_samples},
			&j->ragged);
	if ((j->attn = eh_create_floats(&j->pk, j->w.file, "attn", 5, dims, chunk)) < 0)
		return mk_error_set(MK_ESYS, "HDF5 cannot create '/attn'");
	return MK_OK;
}

/* ---- the run ----------------------------------------------------------------------- */

/* The packer's scratch: one chunk's bytes per thread (padded: heads x N x N
 * floats at most, a few MiB, N being at most the model's positions), and
 * the blocks of one layer of a batch. */
static int eh_buffers(eh_job *j)
{
	const mk_model_config *c = mk_encoder_config(j->e);
	int64_t n = j->x->n, per = j->tiles * j->tiles + 2, blocks = j->o->batch * per;
	int64_t dk = c->hidden / c->heads, cells = j->tile * j->tile;
	size_t elements = (size_t)(c->heads * (cells > n * dk ? cells : n * dk));
	int esize = j->o->dtype == MK_DTYPE_F16 ? 2 : 4;
	eh_ragged_shape rs = {.samples = j->x->samples, .layers = c->layers, .heads = c->heads,
			      .hidden = c->hidden, .n = n, .qk_samples = j->qk_samples};

	if (j->o->layout == MK_ENCODE_RAGGED)
		eh_ragged_needs(&rs, j->o->batch, &elements, &blocks);
	if (!(j->blocks = calloc((size_t)blocks, sizeof *j->blocks)))
		return mk_error_set(MK_ENOMEM, "out of memory");
	return eh_packer_init(&j->pk, mk_h5_have_deflate(), esize, elements, blocks, c->heads,
			      j->o->layout == MK_ENCODE_RAGGED ? 0 : j->tile);
}

static void eh_release(eh_job *j)
{
	eh_packer_release(&j->pk);
	eh_ragged_free(j->ragged);
	free(j->blocks);
	free(j->q);
	free(j->k);
}

/* Every batch through the encoder, its layers written as they come. */
static int eh_run(eh_job *j)
{
	const mk_encode_ids *x = j->x;
	int ret = MK_OK;

	for (int64_t s = 0; s < x->samples && ret == MK_OK; s += j->o->batch) {
		int64_t count = x->samples - s < j->o->batch ? x->samples - s : j->o->batch;
		j->first = s;
		ret = mk_encoder_forward(j->e, &(mk_encoder_batch){
			.count = count, .ids = x->ids + s * x->n, .stride = x->n, .len = x->len + s,
			.layer = eh_layer, .arg = j});
		if (ret == MK_OK && j->o->progress)
			j->o->progress(s + count, x->samples, eh_now() - j->t0, j->o->progress_arg);
	}
	if (ret == MK_OK && j->ragged)
		ret = eh_ragged_finish(j->ragged, &j->pk, j->blocks);
	return ret;
}

static int eh_write_tmp(const char *tmp, void *arg)
{
	eh_job *j = arg;
	int64_t layers = mk_encoder_config(j->e)->layers;
	int ret;

	if (!(j->q = malloc((size_t)layers * sizeof *j->q)) ||
	    !(j->k = malloc((size_t)layers * sizeof *j->k)))
		return mk_error_set(MK_ENOMEM, "out of memory");
	for (int64_t l = 0; l < layers; l++)
		j->q[l] = j->k[l] = H5I_INVALID_HID;
	if ((ret = mk_h5w_create(&j->w, tmp)))
		return ret;
	/* the packer first: creating a dataset asks it for the filters */
	if ((ret = eh_buffers(j)) == MK_OK && (ret = eh_create(j)) == MK_OK)
		ret = eh_run(j);
	/* closes the datasets too */
	return mk_h5w_close(&j->w, ret);
}

const char *mk_encode_layout_name(mk_encode_layout l)
{
	return l == MK_ENCODE_PADDED ? "padded" : l == MK_ENCODE_RAGGED ? "ragged" : "?";
}

int mk_encode_write(mk_encoder *e, const mk_encode_ids *x, const mk_encode_opts *o,
		    const char *path, mk_encode_result *r)
{
	eh_job j = {.e = e, .x = x, .o = o, .r = r, .attn = H5I_INVALID_HID};
	mk_encoder_times t0, t1;
	int ret;

	memset(r, 0, sizeof *r);
	if (x->samples < 1 || x->n < 1 || o->batch < 1)
		return mk_error_set(MK_EINVAL, "nothing to encode");
	if (o->dtype != MK_DTYPE_NONE && o->dtype != MK_DTYPE_F32 && o->dtype != MK_DTYPE_F16) {
		mk_error_set(MK_EINVAL, "encode stores float32 or float16, not %s",
			     mk_dtype_name(o->dtype));
		return mk_error_param("dtype");
	}
	if (o->layout != MK_ENCODE_PADDED && o->layout != MK_ENCODE_RAGGED) {
		mk_error_set(MK_EINVAL, "no layout %d: padded or ragged", (int)o->layout);
		return mk_error_param("layout");
	}
	j.qk_samples = !o->qk ? 0 : o->qk_limit > 0 && o->qk_limit < x->samples ? o->qk_limit
										: x->samples;
	r->qk_samples = j.qk_samples;
	if ((ret = mk_h5_silence()))
		return ret;
	j.tile = ((x->n + 3) / 4 + EH_TILE_ALIGN - 1) / EH_TILE_ALIGN * EH_TILE_ALIGN;
	j.tile = j.tile < EH_TILE_MIN ? EH_TILE_MIN : j.tile;
	j.tile = j.tile > x->n ? x->n : j.tile;
	j.tiles = (x->n + j.tile - 1) / j.tile;
	mk_encoder_get_times(e, &t0);
	j.t0 = eh_now();
	ret = mk_io_atomic(path, eh_write_tmp, &j);
	r->seconds = eh_now() - j.t0;
	mk_encoder_get_times(e, &t1);
	r->times = (mk_encoder_times){.embed = t1.embed - t0.embed, .linear = t1.linear - t0.linear,
				      .attention = t1.attention - t0.attention,
				      .norm = t1.norm - t0.norm, .callback = t1.callback - t0.callback};
	r->write_seconds = r->times.callback;
	eh_release(&j);
	return ret;
}
