/*
 * The `random` pattern and the random draws shared with `bigbird` and
 * `longformer`.  Every draw comes from its own stream keyed by (seed, tag,
 * row), so a row is the same whichever thread makes it, in whatever order,
 * and two patterns that use the same tag draw the same keys.
 */
#include "config.h"
#include <assert.h>
#include <stdlib.h>
#include "internal.h"
#include "pattern.h"

enum { RANDOM_SIZE, RANDOM_SEED };

/* The stream of per-row random keys; bigbird uses the same one. */
#define RANDOM_TAG_ROWS 1

/*
 * Floyd's algorithm: for j = n-k .. n-1 take x uniform in [0, j], or j
 * itself when x is already taken (j cannot be).  Each k-subset comes out
 * equally likely after k draws, with `set` (zero on entry) as the only
 * memory.  picks, when not NULL, receives the k positions in draw order.
 */
static void random_floyd(mk_rng *r, int64_t k, int64_t n, uint64_t *set,
			 int32_t *picks)
{
	for (int64_t j = n - k; j < n; j++) {
		int64_t x = (int64_t)mk_rng_below(r, (uint64_t)j + 1);
		if (mk_bit_test(set, x))
			x = j;
		mk_bit_set(set, x);
		if (picks)
			*picks++ = (int32_t)x;
	}
}

/* dst must be zero on entry: Floyd's algorithm uses it as the set of keys
 * already drawn.  Callers that add other bits do so after the draw. */
void mk_draw_row(uint64_t seed, uint64_t tag, int64_t row, int64_t k, int64_t n,
		 uint64_t *dst)
{
	mk_rng r;
	if (k <= 0)
		return;
	if (k >= n) {
		mk_bits_set_range(dst, 0, n);
		return;
	}
	mk_rng_seed(&r, seed, tag, (uint64_t)row);
	random_floyd(&r, k, n, dst, NULL);
}

/* Selection sampling (Knuth's Algorithm S): position j is taken with
 * probability (still wanted) / (still left), which yields a uniform
 * k-subset already sorted, in O(n) time and no memory. */
int64_t mk_draw_positions(uint64_t seed, uint64_t tag, int64_t k, int64_t n,
			  int64_t *out)
{
	mk_rng r;
	int64_t m = 0;
	if (k > n)
		k = n;
	if (k <= 0)
		return 0;
	mk_rng_seed(&r, seed, tag, 0);
	for (int64_t j = 0; j < n && m < k; j++)
		if ((int64_t)mk_rng_below(&r, (uint64_t)(n - j)) < k - m)
			out[m++] = j;
	return m;
}

/* ---- the transpose of per-row draws ---- */

void mk_randcols_free(mk_randcols *rc)
{
	if (!rc)
		return;
	free(rc->start);
	free(rc->rows);
	free(rc);
}

/* Redraws every row with the same streams as mk_draw_row and, through the
 * picks, clears just the drawn bits of the scratch row after each draw. */
static void randcols_pass(mk_randcols *rc, uint64_t seed, uint64_t tag, int64_t k,
			  uint64_t *scratch, int32_t *picks, bool fill)
{
	mk_rng r;
	for (int64_t i = 0; i < rc->n; i++) {
		mk_rng_seed(&r, seed, tag, (uint64_t)i);
		random_floyd(&r, k, rc->n, scratch, picks);
		for (int64_t q = 0; q < k; q++) {
			if (fill)
				rc->rows[rc->start[picks[q]]++] = (int32_t)i;
			else
				rc->start[picks[q] + 1]++;
			scratch[picks[q] >> 6] = 0;
		}
	}
}

static int randcols_alloc(mk_randcols *rc, int64_t k, uint64_t max_memory)
{
	uint64_t total, bytes;
	int ret = mk_mul_u64((uint64_t)rc->n, (uint64_t)k, &total);
	if (ret == MK_OK)
		ret = mk_mul_u64(total, sizeof *rc->rows, &bytes);
	if (ret)
		return ret;
	bytes += ((uint64_t)rc->n + 1) * sizeof *rc->start;
	ret = mk_check_memory(bytes, max_memory, "the column index of a random pattern");
	if (ret)
		return ret;
	rc->start = calloc((size_t)rc->n + 1, sizeof *rc->start);
	rc->rows = malloc((total ? total : 1) * sizeof *rc->rows);
	if (!rc->start || !rc->rows)
		return mk_error_set(MK_ENOMEM, "out of memory for the column index of a "
				    "random pattern");
	return MK_OK;
}

int mk_randcols_build(mk_randcols **out, uint64_t seed, uint64_t tag, int64_t k,
		      int64_t n, uint64_t max_memory)
{
	mk_randcols *rc;
	uint64_t *scratch = NULL;
	int32_t *picks = NULL;
	int ret;
	*out = NULL;
	assert(n > 0 && n <= MK_N_MAX); /* so that row ids fit in int32 */
	k = k < 0 ? 0 : k > n ? n : k;
	rc = calloc(1, sizeof *rc);
	if (!rc)
		return mk_error_set(MK_ENOMEM, "out of memory for a column index");
	rc->n = n;
	ret = randcols_alloc(rc, k, max_memory);
	if (ret)
		goto out;
	scratch = calloc(mk_words(n), sizeof *scratch);
	picks = malloc((size_t)(k ? k : 1) * sizeof *picks);
	if (!scratch || !picks) {
		ret = mk_error_set(MK_ENOMEM, "out of memory for a column index");
		goto out;
	}
	randcols_pass(rc, seed, tag, k, scratch, picks, false);
	for (int64_t j = 0; j < n; j++)
		rc->start[j + 1] += rc->start[j];
	/* Filling advances start[j] to the end of column j; shift them back. */
	randcols_pass(rc, seed, tag, k, scratch, picks, true);
	for (int64_t j = n; j > 0; j--)
		rc->start[j] = rc->start[j - 1];
	rc->start[0] = 0;
out:
	free(scratch);
	free(picks);
	if (ret)
		mk_randcols_free(rc);
	else
		*out = rc;
	return ret;
}

void mk_randcols_col(const mk_randcols *rc, int64_t j, uint64_t *dst)
{
	for (int64_t q = rc->start[j]; q < rc->start[j + 1]; q++)
		mk_bit_set(dst, rc->rows[q]);
}

/* ---- the random pattern ---- */

/* Keys per row: 2 * size, clipped to n. */
static int64_t random_keys(const mk_term *t)
{
	int64_t size = t->p[RANDOM_SIZE].i;
	return size >= t->n || 2 * size >= t->n ? t->n : 2 * size;
}

static void random_release(mk_term *t)
{
	mk_randcols_free(t->priv);
	t->priv = NULL;
}

/* Nothing to check; an index from an earlier bind (another n) is dropped. */
static int random_bind(mk_term *t)
{
	random_release(t);
	return MK_OK;
}

static void random_row(const mk_term *t, int64_t i, uint64_t *dst)
{
	mk_draw_row(t->seed, RANDOM_TAG_ROWS, i, random_keys(t), t->n, dst);
}

static int random_prepare_cols(mk_term *t, uint64_t max_memory)
{
	mk_randcols *rc;
	int ret;
	random_release(t);
	if (random_keys(t) >= t->n) /* full rows: col() needs no index */
		return MK_OK;
	ret = mk_randcols_build(&rc, t->seed, RANDOM_TAG_ROWS, random_keys(t), t->n,
				max_memory);
	if (ret == MK_OK)
		t->priv = rc;
	return ret;
}

static void random_col(const mk_term *t, int64_t j, uint64_t *dst)
{
	if (random_keys(t) >= t->n) {
		mk_bits_set_range(dst, 0, t->n);
		return;
	}
	assert(t->priv && "prepare_cols must come before col");
	mk_randcols_col(t->priv, j, dst);
}

static const mk_param_info random_params[] = {
	{"size", MK_PARAM_INT, "1", "K: each query attends to 2K random keys"},
	{"seed", MK_PARAM_INT, "0", "seed of the draw (else the global --seed)"},
};

/* Each row's keys as a table (O(n K)); rows of every key are full. */
static int random_flex(const mk_term *t, mk_flex *f)
{
	int64_t k = random_keys(t);

	if (k >= t->n || k <= 0)
		mk_flex_printf(f, "(%s %s 0)", f->i, k > 0 ? ">=" : "<");
	else
		mk_flex_draws(f, t, RANDOM_TAG_ROWS, k);
	return f->err;
}

const mk_pattern_def mk_pat_random = {
	.info = {
		.name = "random",
		.summary = "2*size keys per query, drawn uniformly without replacement",
		.shorthand = "size",
		.params = random_params,
		.nparams = sizeof random_params / sizeof random_params[0],
	},
	.symmetric = false,
	.sweep = {.param = "size", .lo = 0, .hi = MK_SWEEP_HI_HALF, .monotone = true, .order = 8},
	.bind = random_bind,
	.row = random_row,
	.flex = random_flex,
	.col = random_col,
	.prepare_cols = random_prepare_cols,
	.release = random_release,
};
