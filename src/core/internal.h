/* Library-private declarations shared between src/ files. */
#ifndef MK_INTERNAL_H
#define MK_INTERNAL_H

#include <stdarg.h>
#include <stdio.h>
#include <sys/types.h>
#include "mask.h"
#include "io.h"
#include "data.h"

/* Marks a hot loop: compiled for AVX2 and POPCNT as well as the baseline, and
 * the loader picks the best the CPU has (GCC's target_clones). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define MK_HOT __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "popcnt", "default"), \
					     optimize("O3")))
#else
#define MK_HOT
#endif

/* IEEE half-precision bits of f, rounded to nearest even, and a half's
 * value (exact: every half is a float) (dtype.c). */
uint16_t mk_half_from_float(float f);
float mk_half_to_float(uint16_t h);
/* Whether any of count floats is NaN or infinite (dtype.c); callers find
 * which, if they need to, by a plain loop. */
bool mk_floats_nonfinite(const float *x, size_t count);
/* The same over every thread, in pieces, where count is large and no
 * parallel region runs yet. */
bool mk_floats_nonfinite_all(const float *x, size_t count);

/* "1.5 GiB" and the like into buf (error.c). */
void mk_format_bytes(uint64_t b, char *buf, size_t len);

/* ---- OpenBLAS (blas.c) ---- */
/* Address space one OpenBLAS thread's work buffer takes (128 MiB and a
 * margin); OpenBLAS allocates it on a thread's first call and retries for
 * ever when it cannot. */
#define MK_BLAS_BUFFER ((uint64_t)136 << 20)
/* MK_ENOMEM when an address-space limit leaves too little room for the work
 * buffers of `callers` threads calling BLAS at once; call before BLAS. */
int mk_blas_room(int callers);
/* Loads OpenBLAS when libmaskkit does not link it (blas_lazy.c): MK_OK, or
 * MK_ESYS with one line naming what could not be loaded.  mk_blas_room
 * calls it; so does the first BLAS call. */
int mk_blas_load(void);

/* ---- large buffers (hugealloc.c) ---- */
/* bytes of memory, zeroed if zero, on transparent huge pages where it is
 * 2 MiB or more; free() releases it.  NULL when out of memory. */
void *mk_huge_alloc(size_t bytes, bool zero);
/* A buffer of at least bytes (not zeroed; *got its size), the one last
 * given back when it is large enough, and back with mk_huge_give (kept
 * while it is the largest given back, else freed): for scratch that every
 * call of a kernel fills anew.  Safe from several threads. */
void *mk_huge_take(size_t bytes, size_t *got);
void mk_huge_give(void *p, size_t bytes);

/* ---- cleanup after a signal (cleanup.c) ---- */
/* Registers a temporary file, an (emptied) temporary folder or a child
 * process for mk_cleanup_run; returns a token for mk_cleanup_pop, or -1
 * when the table is full (then nothing is cleaned up for it). */
int mk_cleanup_push_file(const char *path);
int mk_cleanup_push_dir(const char *path);
void mk_cleanup_pop(int token);
/* (mk_cleanup_push_child and mk_cleanup_wait_child are public: core.h) */

/* ---- random numbers (rng.c): splitmix64 seeding xoshiro256** ---- */
/* (mk_rng and its functions are public: core.h) */
uint64_t mk_splitmix64(uint64_t *state);

/* dst[k] |= (src shifted up by r bits)[k] for k in [k0, k1), 0 < r < 64,
 * carrying src[k-1]'s top bits into word k (bits.c, vectorised). */
void mk_bits_or_shl(uint64_t *dst, const uint64_t *src, size_t k0, size_t k1, unsigned r);

/* dst = bits [lo, lo + len) of src (src readable one word past the range). */
void mk_bits_extract(uint64_t *dst, const uint64_t *src, int64_t lo, int64_t len);

/* The first position >= from whose bit equals `set`, or nbits if none. */
int64_t mk_bits_next(const uint64_t *w, int64_t nbits, int64_t from, bool set);

/* ---- a source of rows for writers ---- */
/* A growable string (strbuf.c): appends after a failure do nothing, and
 * mk_sb_take then gives NULL. */
typedef struct mk_sb {
	char *s;
	size_t len, cap;
	int err;
} mk_sb;
void mk_sb_printf(mk_sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void mk_sb_vprintf(mk_sb *b, const char *fmt, va_list ap);
char *mk_sb_take(mk_sb *b); /* NULL if any append failed */

typedef struct mk_rows {
	int64_t n;    /* rows (queries) */
	int64_t cols; /* columns (keys): n for a square mask */
	void (*row)(void *ctx, int64_t i, uint64_t *dst); /* fills mk_words(cols) words */
	void *ctx;
	const char *expr;   /* the expression text, for metadata (may be NULL) */
	const char *params; /* bound parameters, for metadata (may be NULL) */
} mk_rows;

/* Mask k of a stack as a row source (io_h5_stack.c): row = mk_stack_row,
 * ctx = a struct mk_stack_rows. */
struct mk_stack_rows {
	const mk_stack *s;
	int64_t k;
};
void mk_stack_row(void *ctx, int64_t i, uint64_t *dst);

/* Writers (io_*.c) stream rows in order 0..n-1.  txt/json/png/npy/blocks/
 * flex write to a stream; h5 needs a path (the temporary file). */
int mk_io_write_txt(const mk_rows *r, FILE *f, const mk_write_opts *o);
int mk_io_write_json(const mk_rows *r, FILE *f, const mk_write_opts *o);
int mk_io_write_png(const mk_rows *r, FILE *f, const mk_write_opts *o);
int mk_io_write_npy(const mk_rows *r, FILE *f, const mk_write_opts *o);
int mk_io_write_blocks(const mk_rows *r, FILE *f, const mk_write_opts *o);
int mk_io_write_flex(const mk_rows *r, FILE *f, const mk_write_opts *o);
/* The BlockMask arrays of r's rows (io_flex.c; mk_expr_flex_blocks's work). */
int mk_io_flex_blocks(const mk_rows *r, int64_t block, uint64_t max_memory,
		      mk_flex_blocks **out);
int mk_io_write_h5(const mk_rows *r, const char *path, const mk_write_opts *o);
/* io.c: rows written to path (atomically) or to an open stream in a format,
 * for the expression writer above io (src/expr/expr_write.c); and an error
 * given the file's name unless it names it already. */
int mk_io_write_rows(const mk_rows *rows, const char *path, mk_format format,
		     const mk_write_opts *o);
int mk_io_write_rows_stream(const mk_rows *rows, FILE *f, const mk_write_opts *o);
int mk_io_name_error(int ret, const char *path);

/* Readers: the whole mask, checked against max_memory. */
int mk_io_read_txt(const char *path, uint64_t max_memory, mk_mask **out);
int mk_io_read_json(const char *path, uint64_t max_memory, mk_mask **out);
int mk_io_read_h5(const char *path, uint64_t max_memory, mk_mask **out);
int mk_io_read_npy(const char *path, uint64_t max_memory, mk_mask **out);
int mk_io_read_flex(const char *path, uint64_t max_memory, mk_mask **out);

/* mk_input_open's check without keeping the file open (for libraries that
 * open by name, such as libhdf5). */
int mk_input_check(const char *path);

/* Writes through a temporary file renamed over path on success. */
int mk_io_atomic(const char *path,
		 int (*write)(const char *tmp_path, void *arg), void *arg);
/* The same, its errors not prefixed with path: for a writer whose failure
 * may be another's (mk_tensor_write_parts: the producer of the data). */
int mk_io_atomic_raw(const char *path,
		     int (*write)(const char *tmp_path, void *arg), void *arg);
/* Drops from the page cache the clean pages of the file at path (through
 * links), which an atomic write through the temporary file tmp_fd is about
 * to replace: the rename frees them otherwise, in the writer's last step
 * (at 8 MiB, 0.75 of the rename's 2.7 ms on ext4, measured).  Called before
 * the new data is made, so that its memory gets the pages freed (the
 * parts writer, tensor_write.c); nothing for a file that is not a regular one,
 * has another link or is on another device than tmp_fd.  Its contents are
 * untouched: a reader reads them from the disk. */
void mk_io_uncache_replaced(const char *path, int tmp_fd);

/* ---- .npy headers (io_npy.c), shared by masks and tensors (tensor.c) ---- */
#define MK_NPY_MAX_DIMS 4
typedef struct mk_npy {
	const char *path;
	char *text;      /* the header text, owned: free() it */
	const char *s;   /* = text, while parsing */
	size_t pos, len;
	uint64_t offset; /* of the first data byte */
	char descr[16];
	bool have_descr, have_order, have_shape, fortran;
	int ndim;        /* all of them; shape[] holds the first MK_NPY_MAX_DIMS */
	int64_t shape[MK_NPY_MAX_DIMS];
	/* from descr, for masks */
	size_t itemsize;
	bool is_float;
	int sign_byte; /* byte holding a float's sign bit */
} mk_npy;

/* Reads the preamble and the header dictionary (versions 1.0 to 3.0) into
 * *h, leaving f at the first data byte; descr is left uninterpreted.  Frees
 * nothing: the caller frees h->text, on failure too. */
int mk_npy_read_header(FILE *f, const char *path, mk_npy *h);
/* MK_EFORMAT unless the file holds exactly `bytes` of data after the
 * header; `what` ("a 8 x 8 '|b1' array") completes the message. */
int mk_npy_check_size(const mk_npy *h, FILE *f, uint64_t bytes, const char *what);
/* Builds a version 1.0 preamble and header for a C-order array; returns its
 * length (a multiple of 64), or 0 when it does not fit in cap. */
size_t mk_npy_header(const char *descr, int ndim, const int64_t *shape, char *buf, size_t cap);

/* ---- tensor names (tensor.c), shared with the writer (tensor_write.c) ---- */
/* "FILE.npy", "FILE.h5" or "FILE.h5:/path" split into a malloc'd *file and
 * the path after ':' (NULL when none; it points into spec). */
int mk_tensor_spec(const char *spec, char **file, const char **dataset, mk_format *fmt);

/* ---- data sets (analysis/dataset_measure.c) ---- */
/* Cells kept in row p[0..len) (probabilities); scratch holds len floats. */
int64_t mk_keep_count(const mk_keep *k, const float *p, int64_t len, float *scratch);

/* ---- heatmaps (heatmap.c) ---- */
/* Maps t in [0, 1] to an RGB colour of a perceptual (viridis-like) map. */
void mk_colormap_viridis(double t, uint8_t rgb[3]);

#endif
