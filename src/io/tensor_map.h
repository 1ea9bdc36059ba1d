/* Mapped tensors (tensor_map.c), for tensor.c; private to the library. */
#ifndef MK_TENSOR_MAP_H
#define MK_TENSOR_MAP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "tensor.h"
#include "internal.h"

/* A float32 .npy in the host's byte order and C order whose header h was
 * read from the open file f, above 4 MiB and its data 64-byte aligned,
 * mapped into t (rank, dims and dtype from h) and checked for NaN and Inf:
 * *checked when none is there (else the caller's check names the first).
 * false: not mapped (smaller, misaligned, a file system without mmap, too
 * many mappings) and t zeroed: read it instead. */
bool mk_tensor_map_npy(FILE *f, const mk_npy *h, mk_tensor *t, bool *checked);
/* Unmaps a mapped tensor's data. */
void mk_tensor_unmap(mk_tensor *t);

#endif
