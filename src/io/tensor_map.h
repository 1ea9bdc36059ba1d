/* Mapped tensors (tensor_map.c), for tensor.c; private to the library. */
#ifndef MK_TENSOR_MAP_H
#define MK_TENSOR_MAP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "tensor.h"

/* Maps t's float32 data, which lies at offset in the open file f (path) and
 * takes the size t's dims give (checked against the file's size already),
 * and checks it for NaN and Inf (*bad).  false: the file could not be
 * mapped (a file system without mmap, too many mappings) and t is as it
 * was: read it instead. */
bool mk_tensor_map_npy(FILE *f, const char *path, uint64_t offset, mk_tensor *t, bool *bad);
/* Unmaps a mapped tensor's data. */
void mk_tensor_unmap(mk_tensor *t);

#endif
