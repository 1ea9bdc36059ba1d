/*
 * maskkit encode's output: the attention probabilities of every sample and
 * layer, written batch by batch into /attn [samples, layers, heads, N, N]
 * (chunks of one (sample, layer) and a tile of B x B cells), with /lengths,
 * /ids and optionally each layer's queries and keys.
 *
 * The chunks are compressed here, not by libhdf5: its filter pipeline runs
 * on the one thread that calls H5Dwrite, and deflating the maps took about
 * as long as computing them.  So each chunk is padded, shuffled and
 * deflated exactly as the dataset's own filters (shuffle, then deflate at
 * level 1) would do it, by the OpenMP threads at once, and handed to
 * H5Dwrite_chunk from this thread, which alone calls libhdf5.  Readers see
 * an ordinary shuffle + deflate dataset.
 */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "model.h"
#include "h5util.h"
#include "h5write.h"
#include "internal.h"

#define EH_LEVEL 1 /* deflate level: the maps are mostly zeros or near it */
/* /attn is chunked by tiles of (sample, layer, every head, B query rows, B
 * keys), B = N / 4 rounded up to EH_TILE_ALIGN and at least EH_TILE_MIN: a
 * sample's cells past its length are zeros, and a tile of them is one chunk
 * compressed once per file and written again, so the padding around a short
 * sentence costs no deflate (200 sentences of mean length 33, N = 128:
 * writing 0.5 s instead of 1.15 s). */
#define EH_TILE_MIN 32
#define EH_TILE_ALIGN 8

/* One chunk of floats to write: heads blocks of rows x cols, of which the
 * top-left rows_valid x cols_valid come from src (row i of block h at src +
 * h * hstride + i * rstride), zeros elsewhere. */
typedef struct eh_block {
	const float *src;
	int64_t heads, rows, cols, rows_valid, cols_valid, hstride, rstride;
	hid_t dset;
	hsize_t at[5]; /* the chunk's first element */
} eh_block;

/* A thread's scratch: the shuffled bytes, their deflated form and the
 * deflate stream (raw deflate: the zlib header and checksum are added here). */
typedef struct eh_buf {
	uint8_t *raw, *z;
	size_t zcap;
	z_stream zs;
	bool zs_ready;
} eh_buf;

/* A chunk ready for H5Dwrite_chunk: its bytes (malloc'd, NULL when zlib
 * or malloc failed: err says which). */
typedef struct eh_out {
	uint8_t *data;
	size_t len;
	int err;
} eh_out;

typedef struct eh_job {
	mk_encoder *e;
	const mk_encode_ids *x;
	const mk_encode_opts *o;
	mk_encode_result *r;
	mk_h5w w;
	hid_t attn, *q, *k; /* q, k: per layer, with --qk */
	bool deflate;
	int64_t first;      /* the batch's first sample */
	int64_t tile, tiles; /* a chunk's rows and keys; tiles along each axis */
	eh_out zero;        /* an /attn chunk of zeros as stored */
	eh_block *blocks;   /* one layer of a batch: count x (tiles^2 + 2 with --qk) */
	eh_out *outs;       /* as many */
	eh_buf *bufs;       /* one per thread */
	int nbufs;
	size_t chunk_bytes; /* the largest chunk, uncompressed */
	double t0;
} eh_job;

static double eh_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ---- chunks --------------------------------------------------------------------- */

/* The bytes of b as HDF5's shuffle filter lays them out for 4-byte
 * elements: byte k of every element (little-endian, the file's order) in
 * plane k. */
static void eh_shuffle(const eh_block *b, uint8_t *out)
{
	size_t count = (size_t)(b->heads * b->rows * b->cols);

	memset(out, 0, 4 * count);
	for (int64_t h = 0; h < b->heads; h++)
		for (int64_t i = 0; i < b->rows_valid; i++) {
			const float *s = b->src + h * b->hstride + i * b->rstride;
			size_t e = (size_t)((h * b->rows + i) * b->cols);
			for (int64_t j = 0; j < b->cols_valid; j++) {
				uint32_t u;
				memcpy(&u, &s[j], 4);
				out[e + (size_t)j] = (uint8_t)u;
				out[count + e + (size_t)j] = (uint8_t)(u >> 8);
				out[2 * count + e + (size_t)j] = (uint8_t)(u >> 16);
				out[3 * count + e + (size_t)j] = (uint8_t)(u >> 24);
			}
		}
}

/* Without the deflate filter: the plain bytes, little-endian. */
static void eh_plain(const eh_block *b, uint8_t *out)
{
	size_t count = (size_t)(b->heads * b->rows * b->cols);

	memset(out, 0, 4 * count);
	for (int64_t h = 0; h < b->heads; h++)
		for (int64_t i = 0; i < b->rows_valid; i++) {
			const float *s = b->src + h * b->hstride + i * b->rstride;
			uint8_t *d = out + 4 * (size_t)((h * b->rows + i) * b->cols);
			for (int64_t j = 0; j < b->cols_valid; j++) {
				uint32_t u;
				memcpy(&u, &s[j], 4);
				for (int k = 0; k < 4; k++)
					d[4 * j + k] = (uint8_t)(u >> (8 * k));
			}
		}
}

/* The chunk's bytes as the dataset's filters would store them, into a
 * buffer of their size. */
/* zlib's format (RFC 1950) around a raw deflate stream: what HDF5's
 * deflate filter inflates.  The stream is made with the run-length
 * strategy, which on these chunks (mostly zero padding, and byte planes of
 * probabilities) was 1.3 to 3 times faster than the default at level 1 and
 * a few per cent smaller; the checksum is taken over the whole buffer at
 * once, faster than zlib's own as it reads.  Any deflate stream is a valid
 * one for the filter: readers see no difference.  (Encoding the long runs
 * of padding as deflate blocks of our own, to skip zlib's scan of them,
 * gained nothing: each run needs a flush, and zlib builds its Huffman
 * tables again after every flush.) */
static int eh_deflate(eh_buf *f, size_t bytes, size_t *len)
{
	uLong sum = adler32(adler32(0L, Z_NULL, 0), f->raw, (uInt)bytes);
	int ret;

	if (!f->zs_ready) {
		memset(&f->zs, 0, sizeof f->zs);
		if ((ret = deflateInit2(&f->zs, EH_LEVEL, Z_DEFLATED, -15, 8, Z_RLE)) != Z_OK)
			return ret;
		f->zs_ready = true;
	} else if ((ret = deflateReset(&f->zs)) != Z_OK) {
		return ret;
	}
	f->z[0] = 0x78; /* deflate, 32 KiB window */
	f->z[1] = 0x01; /* fastest; (0x78 << 8 | 0x01) is a multiple of 31 */
	f->zs.next_in = f->raw;
	f->zs.avail_in = (uInt)bytes;
	f->zs.next_out = f->z + 2;
	f->zs.avail_out = (uInt)(f->zcap - 6);
	if ((ret = deflate(&f->zs, Z_FINISH)) != Z_STREAM_END)
		return ret == Z_OK ? Z_BUF_ERROR : ret;
	*len = 2 + (size_t)f->zs.total_out;
	for (int k = 0; k < 4; k++)
		f->z[(*len)++] = (uint8_t)(sum >> (24 - 8 * k));
	return Z_OK;
}

static void eh_pack(const eh_block *b, eh_buf *f, bool deflate, eh_out *out)
{
	size_t bytes = 4 * (size_t)(b->heads * b->rows * b->cols);

	out->err = Z_OK;
	if (b->src == NULL) { /* a tile of padding: j->zero */
		out->data = NULL;
		return;
	}
	out->len = bytes;
	if (deflate) {
		eh_shuffle(b, f->raw);
		out->err = eh_deflate(f, bytes, &out->len);
	} else {
		eh_plain(b, f->z);
	}
	out->data = out->err == Z_OK ? malloc(out->len) : NULL;
	if (out->data)
		memcpy(out->data, f->z, out->len);
	else if (out->err == Z_OK)
		out->err = Z_MEM_ERROR;
}

/* Packs every block on the threads at once (one fork and join: on a busy
 * machine each join waits for the slowest thread), then writes them from
 * this thread, the only one that calls libhdf5. */
static int eh_write_blocks(eh_job *j, const eh_block *blocks, int64_t count)
{
	int ret = MK_OK;

#pragma omp parallel for schedule(dynamic) num_threads(j->nbufs) if (count > 1)
	for (int64_t k = 0; k < count; k++) {
#ifdef _OPENMP
		eh_buf *f = &j->bufs[omp_get_thread_num()];
#else
		eh_buf *f = &j->bufs[0];
#endif
		eh_pack(&blocks[k], f, j->deflate, &j->outs[k]);
	}
	for (int64_t k = 0; k < count; k++) {
		const eh_out *o = blocks[k].src ? &j->outs[k] : &j->zero;
		if (ret == MK_OK && o->err != Z_OK)
			ret = mk_error_set(o->err == Z_MEM_ERROR ? MK_ENOMEM : MK_EINTERNAL,
					   "cannot compress a chunk (zlib status %d)", o->err);
		if (ret == MK_OK &&
		    H5Dwrite_chunk(blocks[k].dset, H5P_DEFAULT, 0, blocks[k].at, o->len, o->data) < 0)
			ret = mk_error_set(MK_ESYS, "HDF5 cannot write a chunk");
		if (blocks[k].src)
			free(o->data);
	}
	return ret;
}

/* The layer callback of mk_encoder_forward. */
static int eh_layer(void *arg, const mk_encoder_layer *x)
{
	eh_job *j = arg;
	int64_t n = j->x->n, m = 0;

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
		for (int t = 0; j->o->qk && t < 2; t++)
			j->blocks[m++] = (eh_block){
				.src = x->qkv + x->off[s] * 3 * x->hidden + t * x->hidden,
				.heads = x->heads, .rows = n, .cols = x->dk, .rows_valid = len,
				.cols_valid = x->dk, .hstride = x->dk, .rstride = 3 * x->hidden,
				.dset = t ? j->k[x->layer] : j->q[x->layer], .at = {(hsize_t)at}};
	}
	return eh_write_blocks(j, j->blocks, m);
}

/* ---- the file ------------------------------------------------------------------ */

/* A float32 dataset chunked by one sample (and layer), with the filters
 * whose work eh_pack does. */
static hid_t eh_create_floats(eh_job *j, hid_t where, const char *name, int rank,
			      const hsize_t *dims, const hsize_t *chunk)
{
	hid_t space = H5Screate_simple(rank, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
	hid_t d = H5I_INVALID_HID;

	if (space >= 0 && dcpl >= 0 && H5Pset_chunk(dcpl, rank, chunk) >= 0 &&
	    H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) >= 0 &&
	    (!j->deflate || (H5Pset_shuffle(dcpl) >= 0 && H5Pset_deflate(dcpl, EH_LEVEL) >= 0)))
		d = H5Dcreate2(where, name, H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
	if (dcpl >= 0)
		H5Pclose(dcpl);
	if (space >= 0)
		H5Sclose(space);
	return d;
}

/* A whole small dataset at once. */
static int eh_write_small(hid_t file, const char *name, hid_t ftype, hid_t mtype, int rank,
			  const hsize_t *dims, const void *data)
{
	hid_t space = H5Screate_simple(rank, dims, NULL), d = H5I_INVALID_HID;
	int ret = MK_OK;

	if (space >= 0)
		d = H5Dcreate2(file, name, ftype, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	if (d < 0 || H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
		ret = mk_error_set(MK_ESYS, "HDF5 cannot write '%s'", name);
	if (d >= 0)
		H5Dclose(d);
	if (space >= 0)
		H5Sclose(space);
	return ret;
}

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

static int eh_create(eh_job *j)
{
	const mk_model_config *c = mk_encoder_config(j->e);
	int64_t s = j->x->samples, n = j->x->n, dk = c->hidden / c->heads;
	hsize_t dims[5] = {(hsize_t)s, (hsize_t)c->layers, (hsize_t)c->heads, (hsize_t)n, (hsize_t)n};
	hsize_t chunk[5] = {1, 1, (hsize_t)c->heads, (hsize_t)j->tile, (hsize_t)j->tile};
	hsize_t qd[4] = {(hsize_t)s, (hsize_t)c->heads, (hsize_t)n, (hsize_t)dk};
	hsize_t qc[4] = {1, (hsize_t)c->heads, (hsize_t)n, (hsize_t)dk};
	char name[64];
	int ret;

	if ((ret = eh_write_small(j->w.file, "lengths", H5T_STD_I64LE, H5T_NATIVE_INT64, 1, dims,
				  j->x->len)) ||
	    (ret = eh_write_small(j->w.file, "ids", H5T_STD_I32LE, H5T_NATIVE_INT32, 2,
				  (hsize_t[]){(hsize_t)s, (hsize_t)n}, j->x->ids)) ||
	    (ret = eh_attrs(j)))
		return ret;
	if ((j->attn = eh_create_floats(j, j->w.file, "attn", 5, dims, chunk)) < 0)
		return mk_error_set(MK_ESYS, "HDF5 cannot create '/attn'");
	for (int64_t l = 0; j->o->qk && l < c->layers; l++) {
		hid_t g;
		snprintf(name, sizeof name, "/qk/layer_%" PRId64, l);
		if (l == 0 && (g = H5Gcreate2(j->w.file, "qk", H5P_DEFAULT, H5P_DEFAULT,
					      H5P_DEFAULT)) >= 0)
			H5Gclose(g);
		g = H5Gcreate2(j->w.file, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
		if (g >= 0) {
			j->q[l] = eh_create_floats(j, g, "q", 4, qd, qc);
			j->k[l] = eh_create_floats(j, g, "k", 4, qd, qc);
			H5Gclose(g);
		}
		if (g < 0 || j->q[l] < 0 || j->k[l] < 0)
			return mk_error_set(MK_ESYS, "HDF5 cannot create '%s'", name);
	}
	return MK_OK;
}

/* ---- the run ----------------------------------------------------------------------- */

/* Buffers: a layer's blocks for a batch, one chunk's bytes per thread
 * (heads x N x N floats: a few MiB at most, N being at most the model's
 * positions). */
static int eh_buffers(eh_job *j)
{
	const mk_model_config *c = mk_encoder_config(j->e);
	int64_t n = j->x->n, per = j->tiles * j->tiles + (j->o->qk ? 2 : 0);
	int64_t dk = c->hidden / c->heads, cells = j->tile * j->tile;
	/* the largest chunk: a tile of /attn, or a sample's queries */
	size_t bytes = 4 * (size_t)(c->heads * (cells > n * dk ? cells : n * dk));

#ifdef _OPENMP
	j->nbufs = omp_get_max_threads();
#else
	j->nbufs = 1;
#endif
	if (!(j->blocks = calloc((size_t)(j->o->batch * per), sizeof *j->blocks)) ||
	    !(j->outs = calloc((size_t)(j->o->batch * per), sizeof *j->outs)) ||
	    !(j->bufs = calloc((size_t)j->nbufs, sizeof *j->bufs)))
		return mk_error_set(MK_ENOMEM, "out of memory");
	for (int k = 0; k < j->nbufs; k++) {
		eh_buf *f = &j->bufs[k];
		f->zcap = j->deflate ? (size_t)compressBound((uLong)bytes) + 16 : bytes;
		if ((j->deflate && !(f->raw = malloc(bytes))) || !(f->z = malloc(f->zcap)))
			return mk_error_set(MK_ENOMEM, "out of memory for the chunks");
	}
	/* the chunk of padding: a block with no valid row, packed as any other */
	static const float none[1];
	eh_pack(&(eh_block){.src = none, .heads = c->heads, .rows = j->tile, .cols = j->tile},
		&j->bufs[0], j->deflate, &j->zero);
	if (j->zero.err != Z_OK)
		return mk_error_set(MK_ENOMEM, "cannot compress the chunk of padding (zlib status %d)",
				    j->zero.err);
	return MK_OK;
}

static void eh_release(eh_job *j)
{
	for (int k = 0; j->bufs && k < j->nbufs; k++) {
		if (j->bufs[k].zs_ready)
			deflateEnd(&j->bufs[k].zs);
		free(j->bufs[k].raw);
		free(j->bufs[k].z);
	}
	free(j->bufs);
	free(j->blocks);
	free(j->outs);
	free(j->zero.data);
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
	if ((ret = eh_create(j)) == MK_OK && (ret = eh_buffers(j)) == MK_OK)
		ret = eh_run(j);
	/* closes the datasets too */
	return mk_h5w_close(&j->w, ret);
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
	mk_h5_silence();
	j.deflate = mk_h5_have_deflate();
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
