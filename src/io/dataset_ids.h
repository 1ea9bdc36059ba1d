/* The token ids and the model beside a data set that `maskkit encode`
 * wrote (/ids, the root attribute `model`): for the analyses that name
 * tokens (analysis/head_roles_run.c).  Library-private. */
#ifndef MK_DATASET_IDS_H
#define MK_DATASET_IDS_H

#include <stddef.h>
#include <stdint.h>

/* Reads path's /ids, an integer dataset [samples, cols] with cols >= len_max,
 * as int32 into a malloc'd *ids (*cols gets its width), within max_memory
 * (0: MK_DEFAULT_MAX_MEMORY).  MK_OK with *ids NULL and why filled (one
 * line) when the file has no usable ids: none there, another shape or type.
 * An error only when the file cannot be opened, read or held in memory. */
int mk_dataset_ids_read(const char *path, int64_t samples, int64_t len_max,
			uint64_t max_memory, int32_t **ids, int64_t *cols, char *why, size_t cap);

/* The root string attribute `name` of path into a malloc'd *out, or NULL
 * when there is none (or it is not a string). */
int mk_h5_root_text(const char *path, const char *name, char **out);

#endif
