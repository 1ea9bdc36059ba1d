/*
 * Inputs for other analyses derived from attention probabilities: the mean
 * map per head over samples (an importance matrix for SparseBERT-style
 * pruning, shared across samples as DAM's learned mask is), and per-token
 * row and column indicators in the manner of Adaptive Axis Attention (which
 * learns them; here they are read off a trained model's real attention).
 *
 * Both read the data set one (sample, layer) block at a time.  Sums are in
 * double and each head is summed by one thread in a fixed order, so results
 * do not depend on the number of threads.
 */
#include "config.h"
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core.h"
#include "attn_maps.h"
#include "attn_stats.h"

static int derive_check(const mk_dataset_info *in)
{
	if (!in->is_float)
		return mk_error_set(MK_EINVAL, "'%s': dataset '%s' holds %s masks; attention "
				    "probabilities (float data) are needed", in->path, in->name,
				    mk_dtype_name(in->dtype));
	return MK_OK;
}

void mk_attn_mean_add(const mk_dataset_block *b, int64_t m, double *sum)
{
	int64_t h;

#pragma omp parallel for schedule(static) if (b->heads * m * m > (1 << 16))
	for (h = 0; h < b->heads; h++) {
		const float *p = b->p + h * b->n * b->n;
		double *s = sum + h * m * m;
		for (int64_t i = 0; i < m; i++)
			for (int64_t j = 0; j < m; j++)
				s[i * m + j] += p[i * b->n + j];
	}
}

int mk_attn_mean_map(mk_dataset *d, int64_t m, uint64_t max_memory, mk_progress_fn progress,
		     void *parg, double **out, int64_t *used)
{
	const mk_dataset_info *in = mk_dataset_get_info(d);
	const int64_t *len = mk_dataset_lengths(d);
	uint64_t cells, bytes;
	double *sum = NULL;
	int ret;

	*out = NULL;
	*used = 0;
	if ((ret = derive_check(in)))
		return ret;
	if (m < 1 || m > in->n)
		return mk_error_set(MK_EINVAL, "the mean map's size %" PRId64 " is outside 1..%"
				    PRId64 " (the data's N)", m, in->n);
	if ((ret = mk_mul_u64((uint64_t)(in->layers * in->heads), (uint64_t)(m * m), &cells)) ||
	    (ret = mk_mul_u64(cells, sizeof(double), &bytes)) ||
	    (ret = mk_check_memory(bytes, max_memory ? max_memory : MK_DEFAULT_MAX_MEMORY,
				   "the mean attention map")))
		return ret;
	if (!(sum = calloc(cells, sizeof *sum)))
		return mk_error_set(MK_ENOMEM, "out of memory");
	for (int64_t s = 0; s < in->samples && ret == MK_OK; s++) {
		if (len[s] < m)
			continue;
		for (int64_t l = 0; l < in->layers && ret == MK_OK; l++) {
			mk_dataset_block b;
			if ((ret = mk_dataset_read(d, s, l, &b)) == MK_OK)
				mk_attn_mean_add(&b, m, sum + l * in->heads * m * m);
		}
		++*used;
		if (progress)
			progress(s + 1, in->samples, parg);
	}
	if (ret == MK_OK && *used == 0)
		ret = mk_error_set(MK_EINVAL, "'%s': no sample is %" PRId64 " tokens long (the "
				   "longest is shorter): choose a smaller map size", in->path, m);
	if (ret) {
		free(sum);
		*used = 0;
		return ret;
	}
	for (uint64_t c = 0; c < cells; c++)
		sum[c] /= (double)*used;
	*out = sum;
	return MK_OK;
}

/* One head of one block: the indicators of its len real tokens. */
static void indicate_head(const float *p, int64_t n, int64_t len, double col_factor,
			  double row_entropy, uint8_t *row, uint8_t *col)
{
	double log_len = log((double)len);

	for (int64_t k = 0; k < len; k++) {
		double recv = 0;
		for (int64_t i = 0; i < len; i++)
			recv += p[i * n + k];
		/* a uniform row gives each key 1 / len: col_factor of that share */
		col[k] = recv / (double)len >= col_factor / (double)len;
	}
	for (int64_t i = 0; i < len; i++) {
		double hsum = 0;
		for (int64_t j = 0; j < len; j++) {
			double x = p[i * n + j];
			if (x > 0)
				hsum -= x * log(x);
		}
		/* one token: entropy 0 of 0, and the only query sees everything */
		row[i] = len == 1 || hsum >= row_entropy * log_len;
	}
}

int mk_attn_indicators(mk_dataset *d, double col_factor, double row_entropy,
		       uint64_t max_memory, mk_progress_fn progress, void *parg, uint8_t **rows,
		       uint8_t **cols)
{
	const mk_dataset_info *in = mk_dataset_get_info(d);
	const int64_t *len = mk_dataset_lengths(d);
	uint64_t cells;
	int ret;

	*rows = *cols = NULL;
	if ((ret = derive_check(in)))
		return ret;
	if (!(col_factor > 0) || !(row_entropy >= 0 && row_entropy <= 1))
		return mk_error_set(MK_EINVAL, "indicator thresholds: the column factor must be > 0 "
				    "and the row entropy share in [0, 1]");
	if ((ret = mk_mul_u64((uint64_t)(in->samples * in->layers), (uint64_t)(in->heads * in->n),
			      &cells)) ||
	    (ret = mk_check_memory(2 * cells, max_memory ? max_memory : MK_DEFAULT_MAX_MEMORY,
				   "the row and column indicators")))
		return ret;
	*rows = calloc(cells, 1);
	*cols = calloc(cells, 1);
	if (!*rows || !*cols)
		ret = mk_error_set(MK_ENOMEM, "out of memory");
	for (int64_t s = 0; s < in->samples && ret == MK_OK; s++) {
		for (int64_t l = 0; l < in->layers && ret == MK_OK; l++) {
			mk_dataset_block b;
			int64_t h, at = (s * in->layers + l) * in->heads * in->n;
			if ((ret = mk_dataset_read(d, s, l, &b)))
				break;
#pragma omp parallel for schedule(static) if (in->heads * len[s] * len[s] > (1 << 16))
			for (h = 0; h < in->heads; h++)
				indicate_head(b.p + h * in->n * in->n, in->n, len[s], col_factor,
					      row_entropy, *rows + at + h * in->n,
					      *cols + at + h * in->n);
		}
		if (progress)
			progress(s + 1, in->samples, parg);
	}
	if (ret) {
		free(*rows);
		free(*cols);
		*rows = *cols = NULL;
	}
	return ret;
}
