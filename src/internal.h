/* Library-private declarations shared between src/ files. */
#ifndef MK_INTERNAL_H
#define MK_INTERNAL_H

#include <stdio.h>
#include "maskkit.h"

/* ---- random numbers (rng.c): splitmix64 seeding xoshiro256** ---- */
typedef struct mk_rng { uint64_t s[4]; } mk_rng;
uint64_t mk_splitmix64(uint64_t *state);
/* Seeds from (seed, tag, index) so that each row has its own stream. */
void mk_rng_seed(mk_rng *r, uint64_t seed, uint64_t tag, uint64_t index);
uint64_t mk_rng_next(mk_rng *r);
/* Uniform in [0, bound), unbiased (Lemire's multiply-and-reject), bound > 0. */
uint64_t mk_rng_below(mk_rng *r, uint64_t bound);

/* dst[k] |= (src shifted up by r bits)[k] for k in [k0, k1), 0 < r < 64,
 * carrying src[k-1]'s top bits into word k (bits.c, vectorised). */
void mk_bits_or_shl(uint64_t *dst, const uint64_t *src, size_t k0, size_t k1, unsigned r);

/* The first position >= from whose bit equals `set`, or nbits if none. */
int64_t mk_bits_next(const uint64_t *w, int64_t nbits, int64_t from, bool set);

/* ---- a source of rows for writers ---- */
typedef struct mk_rows {
	int64_t n;
	void (*row)(void *ctx, int64_t i, uint64_t *dst); /* fills mk_words(n) words */
	void *ctx;
	const char *expr;   /* the expression text, for metadata (may be NULL) */
	const char *params; /* bound parameters, for metadata (may be NULL) */
} mk_rows;

/* Writers (io_*.c) stream rows in order 0..n-1.  txt/json/png/npy/blocks
 * write to a stream; h5 needs a path (the temporary file). */
int mk_io_write_txt(const mk_rows *r, FILE *f, const mk_write_opts *o);
int mk_io_write_json(const mk_rows *r, FILE *f, const mk_write_opts *o);
int mk_io_write_png(const mk_rows *r, FILE *f, const mk_write_opts *o);
int mk_io_write_npy(const mk_rows *r, FILE *f, const mk_write_opts *o);
int mk_io_write_blocks(const mk_rows *r, FILE *f, const mk_write_opts *o);
int mk_io_write_h5(const mk_rows *r, const char *path, const mk_write_opts *o);

/* Readers: the whole mask, checked against max_memory. */
int mk_io_read_txt(const char *path, uint64_t max_memory, mk_mask **out);
int mk_io_read_json(const char *path, uint64_t max_memory, mk_mask **out);
int mk_io_read_h5(const char *path, uint64_t max_memory, mk_mask **out);
int mk_io_read_npy(const char *path, uint64_t max_memory, mk_mask **out);

/* Writes through a temporary file renamed over path on success. */
int mk_io_atomic(const char *path,
		 int (*write)(const char *tmp_path, void *arg), void *arg);

/* ---- heatmaps (heatmap.c) ---- */
/* Maps t in [0, 1] to an RGB colour of a perceptual (viridis-like) map. */
void mk_colormap_viridis(double t, uint8_t rgb[3]);

#endif
