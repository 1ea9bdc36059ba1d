/* Private to the attention analyses (attn_stats.c, attn_derive.c,
 * head_roles.c) and their tests: the accumulator mk_attn_summary_dataset
 * fills block by block, and the sum behind mk_attn_mean_map. */
#ifndef MK_ATTN_STATS_H
#define MK_ATTN_STATS_H

#include "attn_maps.h"

typedef struct mk_attn_acc mk_attn_acc;

/* An accumulator for blocks of `heads` x n x n probabilities of `layers`
 * layers; its sums (about layers * heads * 2n doubles) must fit in
 * max_memory (0 = MK_DEFAULT_MAX_MEMORY), else MK_ERANGE. */
int mk_attn_acc_new(int64_t layers, int64_t heads, int64_t n, uint64_t max_memory,
		    mk_attn_acc **out);
/* Adds one (sample, layer) block (b->p; b->heads and b->n must match, 1 <=
 * b->len <= n).  Sums are in double, in a fixed order, so the result does
 * not depend on the number of threads (OpenMP over heads).  MK_EINVAL for a
 * mask block (b->p NULL: "attn-stats needs attention probabilities (float
 * data)") or a mismatched one; MK_EFORMAT for a negative, NaN or infinite
 * probability in a real cell (naming sample, layer, head, row and key);
 * after an error the accumulator holds part of the block. */
int mk_attn_acc_add(mk_attn_acc *acc, const mk_dataset_block *b);
/* The statistics of the blocks added so far; out is released with
 * mk_attn_summary_release.  acc is unchanged and may take more blocks. */
int mk_attn_acc_finish(const mk_attn_acc *acc, mk_attn_summary *out);
void mk_attn_acc_free(mk_attn_acc *acc);

/* Adds the leading m x m block of each of b's heads (m <= b->len) to sum
 * [heads, m, m] (attn_derive.c; the mean map's numerator). */
void mk_attn_mean_add(const mk_dataset_block *b, int64_t m, double *sum);
/* The median of the samples' lengths (the lower middle one; N when out of
 * memory): the mean map's default size (attn_derive_run.c). */
int64_t mk_attn_median_length(const mk_dataset_info *in, const int64_t *len);
/* The least, greatest and mean of samples lengths (attn_stats_run.c). */
void mk_attn_lengths_range(const int64_t *len, int64_t samples, int64_t *min, int64_t *max,
			   double *mean);

#endif
