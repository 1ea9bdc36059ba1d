/*
 * maskkit files: mask formats (txt, json, png, h5, npy, blocks, flex), reading
 * masks, writing expressions and stacks of masks, atomic outputs.
 */
#ifndef MK_IO_H
#define MK_IO_H

#include "core.h"
#include "mask.h"
#include "expr.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- formats ------------------------------------------------------------- */

typedef enum mk_format {
	MK_FMT_NONE = 0,
	MK_FMT_TXT,
	MK_FMT_JSON,
	MK_FMT_PNG,
	MK_FMT_H5,
	MK_FMT_NPY,
	MK_FMT_BLOCKS,
	MK_FMT_FLEX,   /* FlexAttention's block layout as a NumPy .npz */
	MK_FMT_FLEX_PY /* FlexAttention's mask_mod as Python source (.py; written only) */
} mk_format;

/* From a name ("txt", "json", ...; "npz" is flex) or a path's extension
 * (.txt, .json, .png, .h5/.hdf5, .npy, .npz; blocks have no extension of
 * their own). */
mk_format mk_format_from_name(const char *name);
mk_format mk_format_from_path(const char *path);
const char *mk_format_name(mk_format f);

typedef struct mk_write_opts {
	mk_format format;
	int64_t block;       /* for MK_FMT_BLOCKS and MK_FMT_FLEX; 0 = 128 */
	uint64_t seed;       /* recorded in metadata */
	uint64_t max_memory; /* cap for dense outputs (txt, npy, h5) and JSON */
	int64_t png_max_px;  /* PNG side limit before downsampling; 0 = 1024 */
} mk_write_opts;

/* ---- masks in files --------------------------------------------------------- */

/* Opens an input file for reading ("rb"; *file is a FILE *): MK_EIO naming
 * path and the OS's reason when it cannot be opened, is a directory or is
 * not a regular file (a FIFO or a device: their size is unknown, a FIFO with
 * no writer blocks for ever and /dev/zero never ends). */
int mk_input_open(const char *path, void **file);

/* mk_file_read's flags. */
enum {
	MK_FILE_TEXT = 1u << 0 /* a NUL byte is refused (MK_EFORMAT, naming its offset) */
};
/* The one reader of whole files: path (mk_input_open's checks: MK_EIO for a
 * file missing, a directory, a FIFO or a device) into *buf, malloc'd and
 * NUL-terminated, *len bytes before the terminator.  A file larger than
 * max_bytes is refused before anything is allocated: MK_ERANGE, "'FILE': N
 * bytes is too large for WHAT (at most MAX)" (what: a noun with its article,
 * "a heads file"), *len then holding the file's size for a caller whose
 * limit is not in bytes; a read that fails or comes up short is MK_ESYS.
 * Every error names path (mk_error_get()->file). */
int mk_file_read(const char *path, uint64_t max_bytes, const char *what, unsigned flags,
		 char **buf, size_t *len);

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

/* ---- FlexAttention (src/expr/expr_flex.c) ------------------------------------ */

/* The bound expression's mask_mod as a standalone Python source file (torch
 * only): index arithmetic on q_idx and kv_idx composed with | & ~, lookup
 * tables (O(n r), base64) for random keys, chosen tokens and documents.  It
 * defines EXPR, PARAMS, Q_LEN, KV_LEN, ALIGN, make_mask_mod(device=None),
 * mask_mod and block_mask(block_size=128, device=None).  A mask file in the
 * expression is MK_EINVAL (its cells have no arithmetic).  *text is
 * malloc'd: free it with mk_free. */
int mk_expr_flex_py(const mk_expr *e, char **text);

/* FlexAttention's BlockMask arrays of one mask (B = H = 1), as
 * create_block_mask makes them and the .npz of the flex format holds them:
 * per query block the partial key blocks (kv_*) and the full ones
 * (full_kv_*), each row's listed blocks ascending, then the others
 * ascending.  A block cut by the end of either axis is never full. */
typedef struct mk_flex_blocks {
	int64_t q_len, kv_len, block, nb_q, nb_kv;
	int32_t *kv_num_blocks;      /* [nb_q] */
	int32_t *kv_indices;         /* [nb_q, nb_kv] */
	int32_t *full_kv_num_blocks; /* [nb_q] */
	int32_t *full_kv_indices;    /* [nb_q, nb_kv] */
} mk_flex_blocks;

/* The rows of a bound expression streamed into *out (block 0: 128), checked
 * against its max_memory; free it with mk_flex_blocks_free. */
int mk_expr_flex_blocks(const mk_expr *e, int64_t block, mk_flex_blocks **out);
void mk_flex_blocks_free(mk_flex_blocks *b); /* NULL-safe */

/* ---- stacks of masks: one HDF5 dataset (io_h5_stack.c), one .npz (io_flex.c) */

/* Masks [layers, heads, n, n] (layers 0: [heads, n, n]) written as the uint8
 * dataset "mask" with attributes like mk_write_expr's; row(ctx, k, i, dst)
 * fills row i of mask k = layer * heads + head (mk_words(n) words). */
typedef struct mk_stack {
	int64_t layers, heads, n;
	void (*row)(void *ctx, int64_t k, int64_t i, uint64_t *dst);
	void *ctx;
	const char *expr; /* "expr" attribute: what the masks are (may be NULL) */
} mk_stack;

/* Writes the stack atomically (a failure leaves an existing file as it was). */
int mk_write_stack_h5(const char *path, const mk_stack *s);
/* The block layout of each head as one FlexAttention .npz (H = heads; one
 * layer at most), atomically; o gives the block size and the memory cap. */
int mk_write_stack_flex(const char *path, const mk_stack *s, const mk_write_opts *o);

/* ---- per-head masks (src/expr/expr_heads.c) --------------------------------- */

/* Reads a heads file: a JSON list of expressions, one per head, or a list
 * of such lists, one per layer, all of one length.  *layers is 0 for a flat
 * list; *exprs holds max(layers, 1) * heads malloc'd strings (layer-major),
 * freed with mk_heads_file_free.  Errors name the file and the offending
 * entry (MK_EIO, MK_EFORMAT). */
int mk_heads_file_read(const char *path, char ***exprs, int64_t *layers, int64_t *heads);
void mk_heads_file_free(char **exprs, size_t count);

/* One mask per (layer, head), bound. */
typedef struct mk_heads {
	char *path;          /* the heads file */
	char **texts;        /* its expressions, count of them */
	int64_t layers, heads, count; /* layers 0: a flat list */
	uint64_t seed;       /* head k's is seed + k */
	mk_expr **e;         /* head k's mask, bound */
	mk_cursor **cur;
} mk_heads;

/* Head k's mask is expression k joined with the nargs operands args
 * (mk_expr_operand) under op, bound with bind (its seed + k, so that random
 * terms without seed= differ between heads and mask k is expression k's
 * with seed S + k); square, of one n.  Errors name the file and the head. */
int mk_heads_open(const char *path, int op, const char *const *args, int nargs,
		  const mk_bind_opts *bind, mk_heads **out);
void mk_heads_free(mk_heads *h); /* NULL-safe */
/* Writes the masks as one stack, atomically: an HDF5 dataset [layers,]
 * heads x n x n (mk_write_stack_h5), or with format MK_FMT_FLEX (or a .npz
 * name) their FlexAttention block layouts; o->block and o->max_memory for
 * the latter.  The "expr" attribute lists the heads' expressions, shaped
 * like the heads file. */
int mk_heads_write(const mk_heads *h, const char *path, const mk_write_opts *o);

#ifdef __cplusplus
}
#endif
#endif /* MK_IO_H */
