/*
 * Attention statistics per layer and head: mass on the diagonal, off it, on
 * the first and last real token, row entropy, row mass, and the mean by
 * offset j - i, over each sample's real len x len block.
 *
 * The accumulator keeps plain sums (one mk_attn_head_summary of sums per
 * (layer, head) and 2n - 1 offset sums) and the cell counts they divide by;
 * finishing divides.  Each head of a block is summed by one thread, row by
 * row and key by key, into that head's own sums, so the order of every
 * addition is fixed and the result is the same for any number of threads.
 */
#include "config.h"
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core.h"
#include "attn_maps.h"
#include "par.h"
#include "attn_stats.h"

/* Real cells per block (about 0.5 ms of work) below which the heads are
 * summed on one thread: a thread team costs microseconds on an idle machine
 * but can stall for a scheduler time slice on a busy one. */
#define ATTN_PARALLEL_CELLS ((int64_t)1 << 17)

struct mk_attn_acc {
	int64_t layers, heads, n, width;
	uint64_t *blocks, *rows; /* [layers] */
	uint64_t *count;         /* [layers * width] */
	mk_attn_head_summary *sum; /* [layers * heads]: sums; mass_min/max as they are */
	double *profile;         /* [layers * heads * width]: sums */
	int64_t *bad;            /* [heads]: the first bad row of each head, or -1 */
	void *part;              /* one block's sums (attn_part_bytes) */
};

/* One block's sums, formed from zero and then added to the totals: the
 * order of additions is then the same whether the blocks were summed here
 * or on other MPI ranks (mk_par_ordered).  Per head its summary of sums;
 * after them, per head, width offset sums. */
static size_t attn_part_bytes(int64_t heads, int64_t width)
{
	return (size_t)heads * (sizeof(mk_attn_head_summary) + (size_t)width * sizeof(double));
}

/* The accumulator's bytes, checked for overflow and against max_memory. */
static int attn_size(int64_t layers, int64_t heads, int64_t width, uint64_t max_memory)
{
	uint64_t lh, cells, bytes;
	int ret;
	if ((ret = mk_mul_u64((uint64_t)layers, (uint64_t)heads, &lh)) ||
	    (ret = mk_mul_u64(lh + (uint64_t)layers, (uint64_t)width, &cells)) ||
	    (ret = mk_mul_u64(cells + (uint64_t)heads * (uint64_t)width, sizeof(double), &bytes)))
		return mk_error_set(MK_ERANGE, "attention statistics of %" PRId64 " layers x %"
				    PRId64 " heads overflow", layers, heads);
	return mk_check_memory(bytes + lh * sizeof(mk_attn_head_summary),
			       max_memory ? max_memory : MK_DEFAULT_MAX_MEMORY,
			       "the attention statistics");
}

int mk_attn_acc_new(int64_t layers, int64_t heads, int64_t n, uint64_t max_memory,
		    mk_attn_acc **out)
{
	mk_attn_acc *a;
	size_t lh;
	int ret;

	*out = NULL;
	if (layers < 1 || heads < 1)
		return mk_error_set(MK_EINVAL, "attention statistics need at least one layer and "
				    "head, got %" PRId64 " x %" PRId64, layers, heads);
	if ((ret = mk_check_n(n, "the attention maps' n")) ||
	    (ret = attn_size(layers, heads, 2 * n - 1, max_memory)))
		return ret;
	if (!(a = calloc(1, sizeof *a)))
		return mk_error_set(MK_ENOMEM, "out of memory");
	lh = (size_t)layers * (size_t)heads;
	*a = (mk_attn_acc){.layers = layers, .heads = heads, .n = n, .width = 2 * n - 1};
	a->blocks = calloc((size_t)layers, sizeof *a->blocks);
	a->rows = calloc((size_t)layers, sizeof *a->rows);
	a->count = calloc((size_t)layers * (size_t)a->width, sizeof *a->count);
	a->sum = calloc(lh, sizeof *a->sum);
	a->profile = calloc(lh * (size_t)a->width, sizeof *a->profile);
	a->bad = calloc((size_t)heads, sizeof *a->bad);
	a->part = malloc(attn_part_bytes(heads, a->width));
	if (!a->blocks || !a->rows || !a->count || !a->sum || !a->profile || !a->bad || !a->part) {
		mk_attn_acc_free(a);
		return mk_error_set(MK_ENOMEM, "out of memory for the attention statistics");
	}
	for (size_t k = 0; k < lh; k++) {
		a->sum[k].mass_min = INFINITY;
		a->sum[k].mass_max = -INFINITY;
	}
	*out = a;
	return MK_OK;
}

void mk_attn_acc_free(mk_attn_acc *a)
{
	if (!a)
		return;
	free(a->blocks);
	free(a->rows);
	free(a->count);
	free(a->sum);
	free(a->profile);
	free(a->bad);
	free(a->part);
	free(a);
}

/* The first key of row[0..len) that is not a finite probability >= 0. */
static int64_t attn_bad_key(const float *row, int64_t len)
{
	for (int64_t j = 0; j < len; j++)
		if (!(row[j] >= 0.0f) || isinf(row[j]))
			return j;
	return 0;
}

/* One head's real block into its sums s and offset sums prof (offset k at
 * k + n - 1).  Returns the first bad row, or -1.  The sums are kept in a
 * local copy: heads on other threads update their neighbours in s. */
static int64_t attn_head_add(const float *p, int64_t n, int64_t len, mk_attn_head_summary *s,
			     double *prof)
{
	mk_attn_head_summary t = *s;
	int64_t bad_row = -1;

	for (int64_t i = 0; i < len; i++) {
		const float *row = p + i * n;
		double *pr = prof + (n - 1 - i); /* pr[j]: offset j - i */
		double mass = 0.0, h = 0.0;
		bool bad = false;
		/* two passes: the first has no branch and vectorises */
		for (int64_t j = 0; j < len; j++) {
			double v = row[j];
			mass += v;
			pr[j] += v;
		}
		for (int64_t j = 0; j < len; j++) {
			double v = row[j];
			if (v > 0.0)
				h -= v * log(v);
			else if (v != 0.0)
				bad = true; /* negative or NaN */
		}
		if (bad || !isfinite(mass)) {
			bad_row = i;
			break;
		}
		t.diag += row[i];
		t.off += mass - row[i];
		t.first += row[0];
		t.last += row[len - 1];
		t.entropy += h;
		t.mass_min = fmin(t.mass_min, mass);
		t.mass_max = fmax(t.mass_max, mass);
	}
	*s = t;
	return bad_row;
}

static int attn_check_block(const mk_attn_acc *a, const mk_dataset_block *b)
{
	if (!b->p)
		return mk_error_set(MK_EINVAL, "attn-stats needs attention probabilities (float data)");
	if (b->heads != a->heads || b->n != a->n)
		return mk_error_set(MK_EINVAL, "block of %" PRId64 " heads x %" PRId64 " x %" PRId64
				    " where %" PRId64 " x %" PRId64 " x %" PRId64 " was expected",
				    b->heads, b->n, b->n, a->heads, a->n, a->n);
	if (b->layer < 0 || b->layer >= a->layers)
		return mk_error_set(MK_EINVAL, "layer %" PRId64 " out of range (0..%" PRId64 ")",
				    b->layer, a->layers - 1);
	if (b->len < 1 || b->len > a->n)
		return mk_error_set(MK_EINVAL, "sample %" PRId64 " has length %" PRId64
				    ", outside 1..%" PRId64, b->sample, b->len, a->n);
	return MK_OK;
}

/* Sums block b into part (attn_part_bytes); only the offsets the block
 * reaches, -(len - 1)..len - 1, are written. */
static int attn_block_part(mk_attn_acc *a, const mk_dataset_block *b, void *part)
{
	int64_t n = a->n, len = b->len, heads = a->heads, width = a->width;
	mk_attn_head_summary *sum = part;
	double *prof = (double *)(sum + heads);
	int ret;

	if ((ret = attn_check_block(a, b)))
		return ret;
#pragma omp parallel for schedule(dynamic, 1) \
	if (heads > 1 && heads * len * len >= ATTN_PARALLEL_CELLS)
	for (int64_t h = 0; h < heads; h++) {
		double *ph = prof + h * width;
		sum[h] = (mk_attn_head_summary){.mass_min = INFINITY, .mass_max = -INFINITY};
		memset(ph + (n - len), 0, (size_t)(2 * len - 1) * sizeof *ph);
		a->bad[h] = attn_head_add(b->p + h * n * n, n, len, &sum[h], ph);
	}
	/* the lowest bad head, for the same message whatever the threads did */
	for (int64_t h = 0; h < heads; h++) {
		int64_t i = a->bad[h];
		if (i >= 0) {
			const float *row = b->p + (h * n + i) * n;
			int64_t j = attn_bad_key(row, len);
			return mk_error_set(MK_EFORMAT, "sample %" PRId64 ", layer %" PRId64 ", head %"
					    PRId64 ": attention probability %g at row %" PRId64
					    ", key %" PRId64 " (must be finite and >= 0)",
					    b->sample, b->layer, h, (double)row[j], i, j);
		}
	}
	return MK_OK;
}

/* Adds a block's sums (attn_block_part) of layer l, sample length len. */
static void attn_fold_part(mk_attn_acc *a, int64_t l, int64_t len, const void *part)
{
	int64_t n = a->n, width = a->width, lo = n - len, hi = n + len - 1;
	const mk_attn_head_summary *sum = part;
	const double *prof = (const double *)(sum + a->heads);
	uint64_t *count = a->count + l * width + (n - 1);

	for (int64_t k = -(len - 1); k < len; k++)
		count[k] += (uint64_t)(len - (k < 0 ? -k : k));
	a->blocks[l]++;
	a->rows[l] += (uint64_t)len;
	for (int64_t h = 0; h < a->heads; h++) {
		mk_attn_head_summary *t = &a->sum[l * a->heads + h];
		const mk_attn_head_summary *p = &sum[h];
		double *dst = a->profile + (l * a->heads + h) * width;
		const double *src = prof + h * width;
		t->diag += p->diag;
		t->off += p->off;
		t->first += p->first;
		t->last += p->last;
		t->entropy += p->entropy;
		t->mass_min = fmin(t->mass_min, p->mass_min);
		t->mass_max = fmax(t->mass_max, p->mass_max);
		for (int64_t x = lo; x < hi; x++)
			dst[x] += src[x];
	}
}

int mk_attn_acc_add(mk_attn_acc *a, const mk_dataset_block *b)
{
	int ret = attn_block_part(a, b, a->part);

	if (ret == MK_OK)
		attn_fold_part(a, b->layer, b->len, a->part);
	return ret;
}

static double attn_div(double sum, uint64_t count)
{
	return count ? sum / (double)count : NAN;
}

static void attn_finish_head(const mk_attn_acc *a, int64_t l, int64_t lh,
			     mk_attn_summary *r)
{
	const mk_attn_head_summary *s = &a->sum[lh];
	uint64_t rows = a->rows[l], off = 0;
	const uint64_t *count = a->count + l * a->width;

	for (int64_t x = 0; x < a->width; x++)
		if (x != a->n - 1)
			off += count[x];
	r->head[lh] = (mk_attn_head_summary){
		.diag = attn_div(s->diag, rows), .off = attn_div(s->off, off),
		.first = attn_div(s->first, rows), .last = attn_div(s->last, rows),
		.entropy = attn_div(s->entropy, rows),
		.mass_min = rows ? s->mass_min : NAN, .mass_max = rows ? s->mass_max : NAN};
	for (int64_t x = 0; x < a->width; x++)
		r->profile[lh * a->width + x] = attn_div(a->profile[lh * a->width + x], count[x]);
}

/* The layer's values: plain means over its heads (mass: least and greatest). */
static void attn_finish_layer(const mk_attn_acc *a, int64_t l, mk_attn_summary *r)
{
	const mk_attn_head_summary *h = r->head + l * a->heads;
	mk_attn_head_summary m = {.mass_min = h[0].mass_min, .mass_max = h[0].mass_max};
	double inv = 1.0 / (double)a->heads, *lp = r->layer_profile + l * a->width;

	for (int64_t k = 0; k < a->heads; k++) {
		m.diag += h[k].diag * inv;
		m.off += h[k].off * inv;
		m.first += h[k].first * inv;
		m.last += h[k].last * inv;
		m.entropy += h[k].entropy * inv;
		m.mass_min = fmin(m.mass_min, h[k].mass_min);
		m.mass_max = fmax(m.mass_max, h[k].mass_max);
		for (int64_t x = 0; x < a->width; x++)
			lp[x] += r->profile[(l * a->heads + k) * a->width + x] * inv;
	}
	r->layer[l] = m;
}

int mk_attn_acc_finish(const mk_attn_acc *a, mk_attn_summary *r)
{
	size_t lh = (size_t)a->layers * (size_t)a->heads, w = (size_t)a->width;

	*r = (mk_attn_summary){.layers = a->layers, .heads = a->heads, .n = a->n,
			      .width = a->width};
	r->blocks = malloc((size_t)a->layers * sizeof *r->blocks);
	r->rows = malloc((size_t)a->layers * sizeof *r->rows);
	r->count = malloc((size_t)a->layers * w * sizeof *r->count);
	r->head = malloc(lh * sizeof *r->head);
	r->layer = malloc((size_t)a->layers * sizeof *r->layer);
	r->profile = malloc(lh * w * sizeof *r->profile);
	r->layer_profile = calloc((size_t)a->layers * w, sizeof *r->layer_profile);
	if (!r->blocks || !r->rows || !r->count || !r->head || !r->layer || !r->profile ||
	    !r->layer_profile) {
		mk_attn_summary_release(r);
		return mk_error_set(MK_ENOMEM, "out of memory for the attention statistics");
	}
	memcpy(r->blocks, a->blocks, (size_t)a->layers * sizeof *r->blocks);
	memcpy(r->rows, a->rows, (size_t)a->layers * sizeof *r->rows);
	memcpy(r->count, a->count, (size_t)a->layers * w * sizeof *r->count);
	for (int64_t l = 0; l < a->layers; l++) {
		for (int64_t h = 0; h < a->heads; h++)
			attn_finish_head(a, l, l * a->heads + h, r);
		attn_finish_layer(a, l, r);
	}
	return MK_OK;
}

void mk_attn_summary_release(mk_attn_summary *r)
{
	if (!r)
		return;
	free(r->blocks);
	free(r->rows);
	free(r->count);
	free(r->head);
	free(r->layer);
	free(r->profile);
	free(r->layer_profile);
	memset(r, 0, sizeof *r);
}

typedef struct attn_job {
	mk_dataset *d;
	const mk_dataset_info *in;
	const int64_t *len;
	mk_attn_acc *a;
	mk_progress_fn progress;
	void *parg;
} attn_job;

static int attn_work(int64_t item, void *buf, void *arg)
{
	attn_job *j = arg;
	mk_dataset_block b;
	int ret = mk_dataset_read(j->d, item / j->in->layers, item % j->in->layers, &b);

	if (ret == MK_OK && (ret = attn_block_part(j->a, &b, buf))) {
		mk_error_prefix("'%s': ", j->in->path);
		mk_error_file(j->in->path);
	}
	return ret;
}

static int attn_idle(void *arg)
{
	return mk_dataset_read_none(((attn_job *)arg)->d);
}

static int attn_fold(int64_t item, const void *buf, void *arg)
{
	attn_job *j = arg;
	int64_t s = item / j->in->layers, l = item % j->in->layers;

	attn_fold_part(j->a, l, j->len[s], buf);
	if (j->progress && l == j->in->layers - 1)
		j->progress(s + 1, j->in->samples, j->parg);
	return MK_OK;
}

int mk_attn_summary_dataset(mk_dataset *d, uint64_t max_memory, mk_progress_fn progress,
			    void *parg, mk_attn_summary *out)
{
	const mk_dataset_info *in = mk_dataset_get_info(d);
	attn_job j = {.d = d, .in = in, .len = mk_dataset_lengths(d), .progress = progress,
		      .parg = parg};
	int ret = MK_OK;

	memset(out, 0, sizeof *out);
	if (!in->is_float)
		ret = mk_error_set(MK_EINVAL, "'%s': dataset '%s' holds %s masks; attn-stats needs "
				   "attention probabilities (float data)", in->path, in->name,
				   mk_dtype_name(in->dtype));
	if (ret == MK_OK)
		ret = mk_attn_acc_new(in->layers, in->heads, in->n, max_memory, &j.a);
	if ((ret = mk_par_agree(ret, NULL)) == MK_OK)
		ret = mk_par_ordered(in->samples * in->layers, attn_part_bytes(in->heads, j.a->width),
				     attn_work, attn_idle, attn_fold, &j);
	/* the sums are complete on rank 0 only */
	if (ret == MK_OK && mk_par_rank() == 0)
		ret = mk_attn_acc_finish(j.a, out);
	mk_attn_acc_free(j.a);
	return ret;
}
