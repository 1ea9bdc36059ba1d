/* Finding and reading the weights of the positional analysis. */
#ifndef MK_POSITIONAL_FIND_H
#define MK_POSITIONAL_FIND_H

#include "weights.h"

/* Fills out->used[role] with the dataset of each role (NULL for optional
 * ones not present: biases, projection) and out->layers. */
int mk_pos_find_all(mk_weights *w, const mk_positional_opts *o, mk_positional *out);
/* Reads every used dataset into m[role] and decides layout[role] for the
 * weight matrices (query, key, projection). */
int mk_pos_read_all(mk_weights *w, const mk_positional_opts *o, const mk_positional *p,
		    mk_matrix *m, mk_layout *layout);
/* The layer index in a path ("layer_._3", "layer.3", "layers_3" -> 3), or -1. */
int64_t mk_pos_layer_of(const char *path);

#endif
