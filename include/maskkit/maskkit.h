/*
 * maskkit: design and measure Transformer attention masks.
 *
 * A mask is an n x n boolean matrix; row i is query token i, column j is key
 * token j.  Masks are bit-packed: each row is ceil(n/64) 64-bit words, bit j
 * of a row lives in word j/64 at bit position j%64, and bits at or beyond n
 * are always zero.
 *
 * Every function that can fail returns MK_OK (0) or a negative MK_E* status
 * and leaves a one-line message for mk_error().  The library never prints
 * and never exits.
 */
#ifndef MASKKIT_H
#define MASKKIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status and errors --------------------------------------------------- */

enum {
	MK_OK = 0,
	MK_ENOMEM = -1,   /* allocation failed */
	MK_EINVAL = -2,   /* bad argument, parameter or expression (user error) */
	MK_EIO = -3,      /* a file cannot be opened or created: missing, no permission, bad path */
	MK_EFORMAT = -4,  /* a file's contents are malformed */
	MK_ERANGE = -5,   /* a size is too large or overflows (user error) */
	MK_EGPU = -6,     /* a GPU call failed */
	MK_EINTERNAL = -7, /* a bug */
	MK_ESYS = -8       /* the system failed: a write or read error, a full disk */
};

const char *mk_status_str(int status);
/* The last message set by mk_error_set() in this thread ("" if none). */
const char *mk_error(void);
/* Sets this thread's message and returns status, so error paths read
 * `return mk_error_set(MK_EINVAL, "n must be positive, got %lld", n);` */
int mk_error_set(int status, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* True for statuses caused by user input (exit code 2 in the CLI). */
bool mk_status_is_user(int status);
/* The status for an OS error number: MK_ESYS when the machine failed (a full
 * disk or quota, a file too large for a limit, an I/O error, no memory or no
 * file handles or processes left, a stale or timed-out network file: exit
 * 1), MK_EIO when the path given is wrong (missing,
 * not permitted, a directory, read-only: exit 2). */
int mk_status_from_errno(int err);
/* mk_error_set(mk_status_from_errno(err), "<fmt>: <strerror(err)>"). */
int mk_error_errno(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Removes the temporary files of writes in progress (so that an interrupted
 * write leaves the old file and nothing else) and sends sig to the programs
 * the library runs (gnuplot).  Async-signal-safe: for a handler of SIGINT,
 * SIGTERM or SIGHUP that then restores the default action and raises the
 * signal again. */
void mk_cleanup_run(int sig);

/* How many OpenBLAS threads fit under the address-space limit (ulimit -v)
 * next to the program itself: at most want, at least 1 (want when there is
 * no limit).  Each takes a work buffer of about 128 MiB, and OpenBLAS
 * retries for ever when it cannot get it. */
int mk_blas_threads_fit(int want);

/* ---- sizes --------------------------------------------------------------- */

#define MK_N_MAX ((int64_t)1 << 20)             /* largest n anywhere */
#define MK_DEFAULT_MAX_MEMORY ((uint64_t)4 << 30) /* 4 GiB */

/* Words in one packed row of n bits. */
static inline size_t mk_words(int64_t n) { return (size_t)((n + 63) / 64); }
/* Checks 0 < n <= MK_N_MAX, with a message naming `what`. */
int mk_check_n(int64_t n, const char *what);
/* *out = a * b, or MK_ERANGE on overflow. */
int mk_mul_u64(uint64_t a, uint64_t b, uint64_t *out);
/* MK_ERANGE with a clear message when `bytes` exceeds `limit` (0 = no limit). */
int mk_check_memory(uint64_t bytes, uint64_t limit, const char *what);
/* Parses "4G", "512M", "1024" (bytes); K/M/G/T are powers of 1024. */
int mk_parse_size(const char *s, uint64_t *out);

/* ---- packed rows --------------------------------------------------------- */

static inline void mk_bit_set(uint64_t *w, int64_t j)
{
	w[j >> 6] |= (uint64_t)1 << (j & 63);
}
static inline bool mk_bit_test(const uint64_t *w, int64_t j)
{
	return (w[j >> 6] >> (j & 63)) & 1;
}
/* Sets bits [lo, hi) (clipped to [0, n) by the caller). */
void mk_bits_set_range(uint64_t *w, int64_t lo, int64_t hi);
/* True if any bit in [lo, hi) is set / all bits in [lo, hi) are set. */
bool mk_bits_any_range(const uint64_t *w, int64_t lo, int64_t hi);
bool mk_bits_all_range(const uint64_t *w, int64_t lo, int64_t hi);
uint64_t mk_bits_count(const uint64_t *w, size_t nwords);
void mk_bits_zero(uint64_t *w, size_t nwords);
void mk_bits_or(uint64_t *dst, const uint64_t *src, size_t nwords);
void mk_bits_and(uint64_t *dst, const uint64_t *src, size_t nwords);
void mk_bits_andnot(uint64_t *dst, const uint64_t *src, size_t nwords);
/* dst &= src; returns non-zero iff any bit of dst is still set. */
uint64_t mk_bits_and_any(uint64_t *dst, const uint64_t *src, size_t nwords);
/* Complements n bits and keeps the tail beyond n zero. */
void mk_bits_not(uint64_t *w, int64_t n);
/* Calls fn(j, arg) for each set bit j in increasing order; stops early and
 * returns fn's value if it is non-zero. */
int mk_bits_foreach(const uint64_t *w, size_t nwords,
		    int (*fn)(int64_t j, void *arg), void *arg);

/* ---- materialised masks -------------------------------------------------- */

typedef struct mk_mask mk_mask;

/* An all-zero n x n mask; fails with MK_ERANGE if n*n/8 bytes would exceed
 * max_memory (0 = MK_DEFAULT_MAX_MEMORY). */
int mk_mask_new(int64_t n, uint64_t max_memory, mk_mask **out);
void mk_mask_free(mk_mask *m);
int mk_mask_clone(const mk_mask *m, mk_mask **out);
int64_t mk_mask_n(const mk_mask *m);
size_t mk_mask_stride(const mk_mask *m); /* words per row */
uint64_t *mk_mask_row(mk_mask *m, int64_t i);
const uint64_t *mk_mask_crow(const mk_mask *m, int64_t i);
void mk_mask_set(mk_mask *m, int64_t i, int64_t j, bool v);
bool mk_mask_test(const mk_mask *m, int64_t i, int64_t j);
/* dst = dst OP src; MK_EINVAL when sizes differ. */
int mk_mask_or(mk_mask *dst, const mk_mask *src);
int mk_mask_and(mk_mask *dst, const mk_mask *src);
int mk_mask_andnot(mk_mask *dst, const mk_mask *src);
void mk_mask_not(mk_mask *m);
int mk_mask_transpose(const mk_mask *m, mk_mask **out);
uint64_t mk_mask_count(const mk_mask *m);
bool mk_mask_equal(const mk_mask *a, const mk_mask *b);
/* counts[i] = number of set bits in row i (caller supplies n entries). */
void mk_mask_row_counts(const mk_mask *m, int64_t *counts);

/* ---- tile (block) layouts ------------------------------------------------ */

enum { MK_TILE_EMPTY = 0, MK_TILE_PARTIAL = 1, MK_TILE_FULL = 2 };

/* The mask reduced to nb x nb tiles of block x block cells.  When block does
 * not divide n the last row and column of tiles are cut short; such a tile is
 * never FULL, as in FlexAttention and block-sparse kernels, which pad it with
 * masked-out cells. */
typedef struct mk_tiles {
	int64_t n, block, nb;
	uint8_t *state; /* nb*nb entries, row-major, MK_TILE_* */
} mk_tiles;

int mk_mask_tiles(const mk_mask *m, int64_t block, mk_tiles **out);
void mk_tiles_free(mk_tiles *t);
/* Number of cells of tile (bi, bj) that exist (clipped at n). */
uint64_t mk_tiles_area(const mk_tiles *t, int64_t bi, int64_t bj);

/* ---- patterns ------------------------------------------------------------ */

/* Read-only description of the registered patterns, for `maskkit patterns`. */
typedef struct mk_param_info {
	const char *name;
	const char *kind; /* "int", "list" or "bool" */
	const char *def;  /* default as text, NULL when required */
	const char *doc;
} mk_param_info;

typedef struct mk_pattern_info {
	const char *name;
	const char *summary;   /* one-line definition */
	const char *shorthand; /* parameter set by a numeric suffix (local2), or NULL */
	const mk_param_info *params;
	size_t nparams;
} mk_pattern_info;

size_t mk_pattern_count(void);
const mk_pattern_info *mk_pattern_get(size_t k);
const mk_pattern_info *mk_pattern_find(const char *name);

/* ---- expressions: the mask language -------------------------------------- */

/*
 *   expr   := prod { ('+' | '-') prod }        left to right
 *   prod   := term { '&' term }                '&' binds tighter, like a product
 *   term   := NAME [ '(' args ')' ] | FILE | '(' expr ')' | '~' term
 *   NAME   := pattern name, optionally with a numeric suffix (local2)
 *   args   := [ value { ',' value } ] | key '=' value { ',' value } { ',' key '=' ... }
 *   FILE   := path ending in .json .h5 .npy .txt
 * '+' is OR, '&' is AND, '-' is AND-NOT, '~' is NOT.
 */
typedef struct mk_expr mk_expr;

enum { MK_OP_OR = 1, MK_OP_AND, MK_OP_ANDNOT, MK_OP_NOT };

/* Parses text; unknown names and bad parameters are reported with the
 * column (1-based) of the offending character. */
int mk_expr_parse(const char *text, mk_expr **out);
/* A leaf that reads a mask file (format from its extension). */
int mk_expr_file(const char *path, mk_expr **out);
/* The mask files e reads, in the order they appear: the first cap of them
 * into paths (owned by e); returns how many there are. */
size_t mk_expr_files(const mk_expr *e, const char **paths, size_t cap);
/* Joins a and b under op (takes ownership of both; frees them on failure). */
int mk_expr_join(int op, mk_expr *a, mk_expr *b, mk_expr **out);
void mk_expr_free(mk_expr *e);
/* The expression as text, in a canonical form. */
const char *mk_expr_text(const mk_expr *e);

typedef struct mk_bind_opts {
	int64_t n;           /* size; 0 = take it from the mask files in the expression */
	uint64_t seed;       /* seed for random terms that give none */
	uint64_t max_memory; /* cap for materialised data; 0 = default */
	bool need_cols;      /* prepare column access (mk_cursor_col) */
} mk_bind_opts;

/* Resolves n, loads files, validates parameters against n and precomputes
 * what the row generators need.  Must be called once before cursors. */
int mk_expr_bind(mk_expr *e, const mk_bind_opts *o);
int64_t mk_expr_n(const mk_expr *e);
/* A canonical description of the bound leaves and their parameters, as
 * text like "local(w=2,block=1) + random(size=1,seed=0)". */
const char *mk_expr_params(const mk_expr *e);
/* True when the expression was bound with need_cols. */
bool mk_expr_has_cols(const mk_expr *e);
/* True when every leaf is symmetric by construction (sound, not complete). */
bool mk_expr_known_symmetric(const mk_expr *e);

/* A cursor generates rows (and columns) of a bound expression.  Cursors are
 * not shared between threads; make one per thread. */
typedef struct mk_cursor mk_cursor;
int mk_cursor_new(const mk_expr *e, mk_cursor **out);
void mk_cursor_free(mk_cursor *c);
/* Fills dst (mk_words(n) words) with row i / column j; every word is written.
 * Columns need the expression bound with need_cols, else MK_EINVAL. */
void mk_cursor_row(mk_cursor *c, int64_t i, uint64_t *dst);
int mk_cursor_col(mk_cursor *c, int64_t j, uint64_t *dst);

/* Materialises a bound expression (checked against its max_memory). */
int mk_expr_to_mask(const mk_expr *e, mk_mask **out);

/* ---- measuring ----------------------------------------------------------- */

#define MK_MEASURE_MAX_TILES 8

typedef struct mk_tile_stats {
	int64_t block;
	uint64_t tiles, nonempty, full;
	uint64_t cells_in_nonempty; /* exact cell area of the non-empty tiles */
	double density;             /* nonempty / tiles */
	double effective_sparsity;  /* 1 - cells_in_nonempty / n^2 */
} mk_tile_stats;

typedef struct mk_measure {
	int64_t n;
	uint64_t count;        /* |M| */
	uint64_t diag;         /* set cells on the main diagonal */
	double sparsity;       /* 1 - |M| / n^2 */
	double sparsity_nodiag;/* 1 - |M \ I| / n^2: the mask without its diagonal */
	int64_t row_min, row_max;
	double row_mean;
	int64_t empty_rows, first_empty_row; /* -1 when none */
	bool symmetric, causal, toeplitz;
	bool symmetric_known;  /* false when bound without need_cols and not symmetric by construction */
	size_t ntiles;
	mk_tile_stats tiles[MK_MEASURE_MAX_TILES];
} mk_measure;

typedef void (*mk_progress_fn)(int64_t rows_done, int64_t n, void *arg);

/* Streams the rows of a bound expression and fills *out (symmetry is
 * checked only when it was bound with need_cols or is symmetric by
 * construction: see symmetric_known), in O(n) memory per thread.  blocks lists
 * ntiles tile sizes.  progress (may be NULL) is called from one thread. */
int mk_measure_expr(const mk_expr *e, const int64_t *blocks, size_t ntiles,
		    mk_progress_fn progress, void *parg, mk_measure *out);

/* ---- files --------------------------------------------------------------- */

typedef enum mk_format {
	MK_FMT_NONE = 0,
	MK_FMT_TXT,
	MK_FMT_JSON,
	MK_FMT_PNG,
	MK_FMT_H5,
	MK_FMT_NPY,
	MK_FMT_BLOCKS
} mk_format;

/* From a name ("txt", "json", ...) or a path's extension (.txt, .json, .png,
 * .h5/.hdf5, .npy; blocks have no extension of their own). */
mk_format mk_format_from_name(const char *name);
mk_format mk_format_from_path(const char *path);
const char *mk_format_name(mk_format f);

typedef struct mk_write_opts {
	mk_format format;
	int64_t block;       /* for MK_FMT_BLOCKS; 0 = 128 */
	uint64_t seed;       /* recorded in metadata */
	uint64_t max_memory; /* cap for dense outputs (txt, npy, h5) and JSON */
	int64_t png_max_px;  /* PNG side limit before downsampling; 0 = 1024 */
} mk_write_opts;

/* Opens an input file for reading ("rb"; *file is a FILE *): MK_EIO naming
 * path and the OS's reason when it cannot be opened, is a directory or is
 * not a regular file (a FIFO or a device: their size is unknown, a FIFO with
 * no writer blocks for ever and /dev/zero never ends). */
int mk_input_open(const char *path, void **file);
/* The same check without keeping the file open (for libraries that open
 * by name, such as libhdf5). */
int mk_input_check(const char *path);

/* Writes the rows of a bound expression to path, atomically: the data goes
 * to a temporary file in the same directory that is renamed over path only
 * on success, so a failure never truncates an existing file. */
int mk_write_expr(const mk_expr *e, const char *path, const mk_write_opts *o);
/* Any output, atomically: write(file, arg) gets a FILE * on a temporary file
 * beside path that is renamed over path only when it returns MK_OK. */
int mk_write_atomic(const char *path, int (*write)(void *file, void *arg), void *arg);
/* The same, to an already-open stream (no atomicity; txt, json, blocks). */
int mk_write_expr_stream(const mk_expr *e, void *file, const mk_write_opts *o);

/* Reads a mask file; the format comes from the extension. */
int mk_mask_load(const char *path, uint64_t max_memory, mk_mask **out);

#include "maskkit_weights.h"
#include "maskkit_attn.h"
#include "maskkit_data.h"
#include "maskkit_par.h"

/* ---- version -------------------------------------------------------------- */
const char *mk_version(void);

#ifdef __cplusplus
}
#endif
#endif /* MASKKIT_H */
