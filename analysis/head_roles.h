/* Private to `maskkit heads` (head_roles.c, head_roles_run.c) and its
 * tests: the sums of one pass over a data set. */
#ifndef MK_HEAD_ROLES_H
#define MK_HEAD_ROLES_H

#include "internal.h"
#include "data.h"
#include "heads.h"
#include "attn_stats.h"

typedef struct mk_head_acc {
	int64_t layers, heads, n, m;
	mk_keep keep;        /* top-p */
	mk_attn_acc *stats;  /* attn-stats' sums: offsets, [CLS], [SEP], entropy */
	double *punct;       /* [layers * heads]: mass on punctuation keys */
	double *hnorm;       /* [layers * heads]: row entropy / ln len */
	double *rho;         /* [layers * heads]: Eq. 9's 1 - kept / len^2 per sample */
	double *map;         /* [layers * heads * m * m]: leading blocks' sums */
	uint64_t *norm_rows; /* [layers]: rows of samples with len >= 2 */
	float *scratch;      /* a row per thread for top-p */
	uint8_t *key_punct;  /* [n]: the caller's per-sample punctuation keys */
} mk_head_acc;

/* Sums for blocks of heads x n x n, mean maps of m x m, top-p mass top_p;
 * within max_memory (0: MK_DEFAULT_MAX_MEMORY), else MK_ERANGE. */
int mk_head_acc_new(int64_t layers, int64_t heads, int64_t n, int64_t m, double top_p,
	       uint64_t max_memory, mk_head_acc **out);
/* Adds one (sample, layer) block; kp[j] = 1 where the sample's key j is
 * punctuation (NULL: none known).  Errors as mk_attn_acc_add's. */
int mk_head_acc_add(mk_head_acc *a, const mk_dataset_block *b, const uint8_t *kp);
/* rows[layers * heads] from the sums of `samples` samples, map_samples of
 * them in the mean maps (>= 1; the maps are divided in place), band width
 * w; punct false: punct NaN.  The roles are left to the caller. */
int mk_head_acc_finish(mk_head_acc *a, int64_t samples, int64_t map_samples, int64_t w, bool punct,
		  mk_head_row *rows);
void mk_head_acc_free(mk_head_acc *a);

#endif
