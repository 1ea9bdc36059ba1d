/*
 * The double-precision reference of the attention engine (attn_ref.c), that
 * sweeps and tests check every kernel against; private to the library.
 */
#ifndef MK_ATTN_REF_H
#define MK_ATTN_REF_H

#include "mask.h"
#include "attn.h"

/* Masked attention in double precision, with the normalisations of attn.h
 * (see mk_attn_kernel), on the listed rows of every (batch, head).  mask
 * NULL means every entry (what the dense kernel computes).  ref holds
 * batch * heads * nrows * d doubles: row r of slice bh at
 * ref + (bh * nrows + r) * d.  Column scalings need every row, so g is
 * computed over all rows whichever rows are asked for. */
#define MK_REF_MAX_ROWS 512
/* The rows checked: all of them for n <= MK_REF_MAX_ROWS, else 64 evenly
 * spread (first and last included); rows holds MK_REF_MAX_ROWS entries. */
int64_t mk_attn_ref_rows(int64_t n, int64_t *rows);
/* MK_ERANGE for inputs mk_attn_check_scores refuses, as the engine does. */
int mk_attn_reference(const mk_norm *norm, const mk_attn_shape *s, const float *q,
		      const float *k, const float *v, const mk_mask *mask, const int64_t *rows,
		      int64_t nrows, double *ref);
/* The largest |o - ref| over the reference's rows (NaN counts as infinite). */
double mk_attn_ref_error(const mk_attn_shape *s, const int64_t *rows, int64_t nrows,
			 const double *ref, const float *o);

#endif
