/*
 * maskkit encode's chunks.  They are compressed here, not by libhdf5: its
 * filter pipeline runs on the one thread that calls H5Dwrite, and
 * deflating the maps took about as long as computing them.  So each chunk
 * is padded, shuffled and deflated exactly as the dataset's own filters
 * (shuffle, then deflate at level 1) would do it, by the OpenMP threads at
 * once, and handed to H5Dwrite_chunk from this thread, which alone calls
 * libhdf5.  Readers see an ordinary shuffle + deflate dataset, of float32
 * or of IEEE float16 (converted here too).
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "encode_chunks.h"
#include "h5write.h"
#include "internal.h"

/* The element's bits as stored: float32's own, or float16's. */
static inline uint32_t eh_bits(float f, int esize)
{
	uint32_t u;

	if (esize == 2)
		return mk_half_from_float(f);
	memcpy(&u, &f, 4);
	return u;
}

/* The bytes of b as HDF5's shuffle filter lays them out: byte k of every
 * element (little-endian, the file's order) in plane k. */
static void eh_shuffle(const eh_block *b, int esize, uint8_t *out)
{
	size_t count = (size_t)(b->heads * b->rows * b->cols);

	memset(out, 0, (size_t)esize * count);
	for (int64_t h = 0; h < b->heads; h++)
		for (int64_t i = 0; i < b->rows_valid; i++) {
			const float *s = b->src + h * b->hstride + i * b->rstride;
			size_t e = (size_t)((h * b->rows + i) * b->cols);
			for (int64_t j = 0; j < b->cols_valid; j++) {
				uint32_t u = eh_bits(s[j], esize);
				for (int k = 0; k < esize; k++)
					out[k * count + e + (size_t)j] = (uint8_t)(u >> (8 * k));
			}
		}
}

/* Without the deflate filter: the plain bytes, little-endian. */
static void eh_plain(const eh_block *b, int esize, uint8_t *out)
{
	size_t count = (size_t)(b->heads * b->rows * b->cols);

	memset(out, 0, (size_t)esize * count);
	for (int64_t h = 0; h < b->heads; h++)
		for (int64_t i = 0; i < b->rows_valid; i++) {
			const float *s = b->src + h * b->hstride + i * b->rstride;
			uint8_t *d = out + (size_t)esize * (size_t)((h * b->rows + i) * b->cols);
			for (int64_t j = 0; j < b->cols_valid; j++) {
				uint32_t u = eh_bits(s[j], esize);
				for (int k = 0; k < esize; k++)
					d[esize * j + k] = (uint8_t)(u >> (8 * k));
			}
		}
}

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

/* The chunk's bytes as the dataset's filters would store them. */
static void eh_pack(const eh_block *b, eh_buf *f, const eh_packer *p, eh_out *out)
{
	size_t bytes = (size_t)p->esize * (size_t)(b->heads * b->rows * b->cols);

	out->err = Z_OK;
	if (b->src == NULL) { /* a chunk of zeros: p->zero */
		out->data = NULL;
		return;
	}
	out->len = bytes;
	if (p->deflate) {
		eh_shuffle(b, p->esize, f->raw);
		out->err = eh_deflate(f, bytes, &out->len);
	} else {
		eh_plain(b, p->esize, f->z);
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
int eh_write_blocks(eh_packer *p, const eh_block *blocks, int64_t count)
{
	int ret = MK_OK;

	if (count > p->nouts)
		return mk_error_set(MK_EINTERNAL, "%lld chunks at once, room for %lld",
				    (long long)count, (long long)p->nouts);
#pragma omp parallel for schedule(dynamic) num_threads(p->nbufs) if (count > 1)
	for (int64_t k = 0; k < count; k++) {
#ifdef _OPENMP
		eh_buf *f = &p->bufs[omp_get_thread_num()];
#else
		eh_buf *f = &p->bufs[0];
#endif
		eh_pack(&blocks[k], f, p, &p->outs[k]);
	}
	for (int64_t k = 0; k < count; k++) {
		const eh_out *o = blocks[k].src ? &p->outs[k] : &p->zero;
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

int eh_packer_init(eh_packer *p, bool deflate, int esize, size_t elements, int64_t blocks,
		   int64_t heads, int64_t tile)
{
	size_t bytes = (size_t)esize * elements;

	p->deflate = deflate;
	p->esize = esize;
#ifdef _OPENMP
	p->nbufs = omp_get_max_threads();
#else
	p->nbufs = 1;
#endif
	p->nouts = blocks;
	if (!(p->outs = calloc((size_t)blocks, sizeof *p->outs)) ||
	    !(p->bufs = calloc((size_t)p->nbufs, sizeof *p->bufs)))
		return mk_error_set(MK_ENOMEM, "out of memory");
	for (int k = 0; k < p->nbufs; k++) {
		eh_buf *f = &p->bufs[k];
		f->zcap = deflate ? (size_t)compressBound((uLong)bytes) + 16 : bytes;
		if ((deflate && !(f->raw = malloc(bytes))) || !(f->z = malloc(f->zcap)))
			return mk_error_set(MK_ENOMEM, "out of memory for the chunks");
	}
	if (tile < 1)
		return MK_OK;
	/* the chunk of padding: a block with no valid row, packed as any other */
	static const float none[1];
	eh_pack(&(eh_block){.src = none, .heads = heads, .rows = tile, .cols = tile}, &p->bufs[0],
		p, &p->zero);
	if (p->zero.err != Z_OK)
		return mk_error_set(MK_ENOMEM, "cannot compress the chunk of padding (zlib status %d)",
				    p->zero.err);
	return MK_OK;
}

void eh_packer_release(eh_packer *p)
{
	for (int k = 0; p->bufs && k < p->nbufs; k++) {
		if (p->bufs[k].zs_ready)
			deflateEnd(&p->bufs[k].zs);
		free(p->bufs[k].raw);
		free(p->bufs[k].z);
	}
	free(p->bufs);
	free(p->outs);
	free(p->zero.data);
	memset(p, 0, sizeof *p);
}

hid_t eh_create_floats(const eh_packer *p, hid_t where, const char *name, int rank,
		       const hsize_t *dims, const hsize_t *chunk)
{
	hid_t space = H5Screate_simple(rank, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
	hid_t type = p->esize == 2 ? mk_h5_type_f16() : H5Tcopy(H5T_IEEE_F32LE);
	hid_t d = H5I_INVALID_HID;

	if (space >= 0 && dcpl >= 0 && type >= 0 && H5Pset_chunk(dcpl, rank, chunk) >= 0 &&
	    H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) >= 0 &&
	    (!p->deflate || (H5Pset_shuffle(dcpl) >= 0 && H5Pset_deflate(dcpl, EH_LEVEL) >= 0)))
		d = H5Dcreate2(where, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
	if (type >= 0)
		H5Tclose(type);
	if (dcpl >= 0)
		H5Pclose(dcpl);
	if (space >= 0)
		H5Sclose(space);
	return d;
}

int eh_write_small(hid_t file, const char *name, hid_t ftype, hid_t mtype, int rank,
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
