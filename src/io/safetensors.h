/* safetensors files (safetensors.c) and sharded checkpoints
 * (model.safetensors.index.json, safetensors_index.c); private to src/io,
 * used through the weights API (weights_open.c). */
#ifndef MK_SAFETENSORS_H
#define MK_SAFETENSORS_H

#include "internal.h"

#define MK_ST_MAX_RANK 8
#define MK_ST_MAX_HEADER (100u << 20) /* the reference implementation's cap too */

typedef enum mk_st_dtype {
	MK_ST_BOOL, MK_ST_U8, MK_ST_I8, MK_ST_F8_E5M2, MK_ST_F8_E4M3, MK_ST_I16, MK_ST_U16,
	MK_ST_F16, MK_ST_BF16, MK_ST_I32, MK_ST_U32, MK_ST_F32, MK_ST_F64, MK_ST_I64,
	MK_ST_U64, MK_ST_NDTYPES
} mk_st_dtype;

typedef struct mk_st_tensor {
	char *name;              /* as the header has it (no leading '/') */
	mk_st_dtype dtype;
	int rank;                /* 0 (a scalar) to MK_ST_MAX_RANK */
	int64_t dims[MK_ST_MAX_RANK];
	uint64_t begin, end;     /* absolute offsets in its shard's file */
	int shard;
} mk_st_tensor;

typedef struct mk_st_shard {
	char *path;
	int fd;
} mk_st_shard;

/* Every tensor checked against its file when opened: the header length,
 * dtype, shape and offsets, no two tensors sharing a byte. */
typedef struct mk_st {
	mk_st_shard *shards;
	int nshards;
	mk_st_tensor *t;         /* sorted by name, names unique */
	size_t count;
} mk_st;

/* One .safetensors file.  MK_EIO when it cannot be opened, MK_EFORMAT
 * (naming the file and the tensor) for anything wrong in it. */
int mk_st_open(const char *path, mk_st **out);
/* A sharded checkpoint: the index (model.safetensors.index.json) and the
 * shard files its "weight_map" names, plain file names in its directory.
 * Every name of the map must be a tensor of the shard it names. */
int mk_st_open_index(const char *index, mk_st **out);
void mk_st_free(mk_st *st); /* NULL-safe */

const mk_st_tensor *mk_st_find(const mk_st *st, const char *name);
const char *mk_st_dtype_name(mk_st_dtype d);
/* Elements of t (the product of its dims; checked when opened). */
uint64_t mk_st_count(const mk_st_tensor *t);
/* Reads all of t, converted, into dst (mk_st_count(t) doubles, or floats
 * when f32).  MK_EFORMAT for BOOL and 8-bit float tensors. */
int mk_st_read(const mk_st *st, const mk_st_tensor *t, bool f32, void *dst);

/* An IEEE half-precision value (also for .npy '<f2' in weights_st.c). */
double mk_st_half(uint16_t h);

/* Shared with safetensors_index.c: parses one file's header into shard
 * number `shard` of st (appending its tensors, unsorted). */
int mk_st_parse_file(mk_st *st, const char *path);
/* Sorts st's tensors by name; a name twice is an MK_EFORMAT error. */
int mk_st_sort(mk_st *st, const char *path);

#endif
