/* Unit tests of the attention statistics: known answers on hand-made blocks
 * (uniform and identity attention, a hand-counted 3 x 3 block, Toeplitz
 * blocks), padding that must not count, cell weighting over samples, the
 * same sums for any number of threads, every error, and whole HDF5 data
 * sets through the data-set reader. */
#include "config.h"
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "testutil.h"
#include "attn_stats.h"
#include "h5testutil.h"

/* heads x n x n floats, all `fill`. */
static float *test_block(int64_t heads, int64_t n, float fill)
{
	float *p = malloc((size_t)(heads * n * n) * sizeof *p);
	ck_assert_ptr_nonnull(p);
	for (int64_t k = 0; k < heads * n * n; k++)
		p[k] = fill;
	return p;
}

/* Head h's real len x len block: uniform 1/len (kind 0) or the identity (1). */
static void test_fill(float *p, int64_t n, int64_t h, int64_t len, int kind)
{
	for (int64_t i = 0; i < len; i++)
		for (int64_t j = 0; j < len; j++)
			p[(h * n + i) * n + j] = kind == 0 ? 1.0f / (float)len : (float)(i == j);
}

static mk_dataset_block test_blk(const float *p, int64_t sample, int64_t layer, int64_t heads,
				 int64_t n, int64_t len)
{
	return (mk_dataset_block){.sample = sample, .layer = layer, .heads = heads, .n = n,
				  .len = len, .p = p};
}

/* One block through a fresh accumulator of one layer. */
static void test_one(const float *p, int64_t heads, int64_t n, int64_t len,
		     mk_attn_summary *r)
{
	mk_attn_acc *a;
	mk_dataset_block b = test_blk(p, 0, 0, heads, n, len);
	ck_assert_int_eq(mk_attn_acc_new(1, heads, n, 0, &a), MK_OK);
	ck_assert_int_eq(mk_attn_acc_add(a, &b), MK_OK);
	ck_assert_int_eq(mk_attn_acc_finish(a, r), MK_OK);
	mk_attn_acc_free(a);
}

/* Lengths that are powers of two make 1/len exact in float. */
START_TEST(test_uniform)
{
	int64_t n = 6, len = 4;
	float *p = test_block(2, n, NAN); /* padding NaN: it must never be read */
	mk_attn_summary r;
	test_fill(p, n, 0, len, 0);
	test_fill(p, n, 1, len, 0);
	test_one(p, 2, n, len, &r);
	for (int h = 0; h < 2; h++) {
		const mk_attn_head_summary *s = &r.head[h];
		ck_assert_double_eq(s->diag, 0.25);
		ck_assert_double_eq(s->off, 0.25);
		ck_assert_double_eq(s->first, 0.25);
		ck_assert_double_eq(s->last, 0.25);
		ck_assert_double_eq_tol(s->entropy, log(4.0), 1e-15);
		ck_assert_double_eq(s->mass_min, 1.0);
		ck_assert_double_eq(s->mass_max, 1.0);
	}
	ck_assert_double_eq(r.layer[0].diag, 0.25);
	ck_assert_uint_eq(r.rows[0], 4);
	ck_assert_uint_eq(r.blocks[0], 1);
	mk_attn_summary_release(&r);
	free(p);
}
END_TEST

/* Lengths whose 1/len is rounded in float: the answers to float precision. */
START_TEST(test_uniform_odd_lengths)
{
	for (int64_t len = 1; len <= 9; len++) {
		float *p = test_block(1, 9, 0.5f);
		mk_attn_summary r;
		double u = 1.0 / (double)len;
		test_fill(p, 9, 0, len, 0);
		test_one(p, 1, 9, len, &r);
		ck_assert_double_eq_tol(r.head[0].diag, u, 1e-7 * u);
		ck_assert_double_eq_tol(r.head[0].first, u, 1e-7 * u);
		ck_assert_double_eq_tol(r.head[0].last, u, 1e-7 * u);
		ck_assert_double_eq_tol(r.head[0].entropy, log((double)len), 1e-6);
		if (len == 1)
			ck_assert(isnan(r.head[0].off)); /* no off-diagonal cell */
		else
			ck_assert_double_eq_tol(r.head[0].off, u, 1e-7 * u);
		mk_attn_summary_release(&r);
		free(p);
	}
}
END_TEST

START_TEST(test_identity)
{
	int64_t n = 8, len = 5;
	float *p = test_block(1, n, 0.75f);
	mk_attn_summary r;
	test_fill(p, n, 0, len, 1);
	test_one(p, 1, n, len, &r);
	ck_assert_double_eq(r.head[0].diag, 1.0);
	ck_assert_double_eq(r.head[0].off, 0.0);
	ck_assert_double_eq(r.head[0].entropy, 0.0);
	ck_assert_double_eq(r.head[0].first, 1.0 / 5.0); /* only row 0 looks at key 0 */
	ck_assert_double_eq(r.head[0].last, 1.0 / 5.0);
	ck_assert_double_eq(r.profile[n - 1], 1.0);
	for (int64_t k = 1; k < len; k++) {
		ck_assert_double_eq(r.profile[n - 1 + k], 0.0);
		ck_assert_double_eq(r.profile[n - 1 - k], 0.0);
	}
	mk_attn_summary_release(&r);
	free(p);
}
END_TEST

/* Rows (.5 .3 .2) (.1 .6 .3) (.2 .2 .6) in a 4 x 4 block; sums by hand. */
START_TEST(test_hand_block)
{
	const float v[9] = {.5f, .3f, .2f, .1f, .6f, .3f, .2f, .2f, .6f};
	float *p = test_block(1, 4, 0.9f);
	mk_attn_summary r;
	double h = 0.0;
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++) {
			p[i * 4 + j] = v[i * 3 + j];
			h -= (double)v[i * 3 + j] * log((double)v[i * 3 + j]);
		}
	test_one(p, 1, 4, 3, &r);
	ck_assert_double_eq_tol(r.head[0].diag, 1.7 / 3.0, 1e-7);
	ck_assert_double_eq_tol(r.head[0].off, 1.3 / 6.0, 1e-7);
	ck_assert_double_eq_tol(r.head[0].first, 0.8 / 3.0, 1e-7);
	ck_assert_double_eq_tol(r.head[0].last, 1.1 / 3.0, 1e-7);
	ck_assert_double_eq_tol(r.head[0].entropy, h / 3.0, 1e-12);
	/* offsets -2..2: (.2), (.1 .2), (.5 .6 .6), (.3 .3), (.2) */
	ck_assert_double_eq_tol(r.profile[3 - 2], 0.2, 1e-7);
	ck_assert_double_eq_tol(r.profile[3 - 1], 0.15, 1e-7);
	ck_assert_double_eq_tol(r.profile[3], 1.7 / 3.0, 1e-7);
	ck_assert_double_eq_tol(r.profile[3 + 1], 0.3, 1e-7);
	ck_assert_double_eq_tol(r.profile[3 + 2], 0.2, 1e-7);
	ck_assert(isnan(r.profile[0]) && isnan(r.profile[6])); /* offset +-3: no real cell */
	ck_assert_uint_eq(r.count[3], 3);
	ck_assert_uint_eq(r.count[2], 2);
	ck_assert_uint_eq(r.count[0], 0);
	mk_attn_summary_release(&r);
	free(p);
}
END_TEST

/* Changing every padded cell (rows >= len, keys >= len) changes nothing. */
START_TEST(test_padding_excluded)
{
	int64_t n = 7, len = 4, heads = 3;
	float *p = test_block(heads, n, 0.0f), *q;
	mk_attn_summary r1, r2;
	uint64_t s = 7;
	for (int64_t k = 0; k < heads * n * n; k++) {
		s = s * 6364136223846793005ULL + 1442695040888963407ULL;
		p[k] = (float)((s >> 40) % 1000) / 1000.0f;
	}
	q = test_block(heads, n, 0.0f);
	memcpy(q, p, (size_t)(heads * n * n) * sizeof *p);
	for (int64_t h = 0; h < heads; h++)
		for (int64_t i = 0; i < n; i++)
			for (int64_t j = 0; j < n; j++)
				if (i >= len || j >= len)
					q[(h * n + i) * n + j] = i == j ? -1.0f : 1e30f;
	test_one(p, heads, n, len, &r1);
	test_one(q, heads, n, len, &r2);
	ck_assert_mem_eq(r1.head, r2.head, (size_t)heads * sizeof *r1.head);
	ck_assert_mem_eq(r1.profile, r2.profile, (size_t)(heads * r1.width) * sizeof(double));
	ck_assert_double_le(r1.head[0].mass_max, 4.0);
	mk_attn_summary_release(&r1);
	mk_attn_summary_release(&r2);
	free(p);
	free(q);
}
END_TEST

/* A Toeplitz block P[i][j] = t(j - i) has profile t over the offsets its
 * samples reach, whatever their lengths; the counts add up over samples. */
START_TEST(test_toeplitz_profile)
{
	int64_t n = 6, lens[3] = {6, 3, 4};
	float *p = test_block(1, n, 0.0f);
	mk_attn_acc *a;
	mk_attn_summary r;
	for (int64_t i = 0; i < n; i++)
		for (int64_t j = 0; j < n; j++)
			p[i * n + j] = (float)(j - i + 8) / 64.0f; /* exact in float */
	ck_assert_int_eq(mk_attn_acc_new(1, 1, n, 0, &a), MK_OK);
	for (int s = 0; s < 3; s++) {
		mk_dataset_block b = test_blk(p, s, 0, 1, n, lens[s]);
		ck_assert_int_eq(mk_attn_acc_add(a, &b), MK_OK);
	}
	ck_assert_int_eq(mk_attn_acc_finish(a, &r), MK_OK);
	for (int64_t k = -(n - 1); k < n; k++) {
		uint64_t want = 0;
		for (int s = 0; s < 3; s++)
			want += (uint64_t)(lens[s] > llabs(k) ? lens[s] - llabs(k) : 0);
		ck_assert_uint_eq(r.count[k + n - 1], want);
		ck_assert_double_eq(r.profile[k + n - 1], (double)(k + 8) / 64.0);
		ck_assert_double_eq(r.layer_profile[k + n - 1], (double)(k + 8) / 64.0);
	}
	ck_assert_double_eq(r.head[0].diag, 8.0 / 64.0);
	ck_assert_uint_eq(r.rows[0], 13);
	ck_assert_uint_eq(r.blocks[0], 3);
	mk_attn_summary_release(&r);
	mk_attn_acc_free(a);
	free(p);
}
END_TEST

/* Uniform samples of lengths 2 and 4: pooled cells give diag (2/2 + 4/4)/6
 * = 1/3 (a mean of the samples' means would give 3/8), off (2 * 1/2 + 12 *
 * 1/4) / 14 = 2/7, entropy (2 ln 2 + 4 ln 4) / 6. */
START_TEST(test_cell_weighting)
{
	int64_t n = 4;
	float *p2 = test_block(1, n, 0.0f), *p4 = test_block(1, n, 0.0f);
	mk_attn_acc *a;
	mk_attn_summary r;
	mk_dataset_block b2 = test_blk(p2, 0, 0, 1, n, 2), b4 = test_blk(p4, 1, 0, 1, n, 4);
	test_fill(p2, n, 0, 2, 0);
	test_fill(p4, n, 0, 4, 0);
	ck_assert_int_eq(mk_attn_acc_new(1, 1, n, 0, &a), MK_OK);
	ck_assert_int_eq(mk_attn_acc_add(a, &b2), MK_OK);
	ck_assert_int_eq(mk_attn_acc_add(a, &b4), MK_OK);
	ck_assert_int_eq(mk_attn_acc_finish(a, &r), MK_OK);
	ck_assert_double_eq_tol(r.head[0].diag, 1.0 / 3.0, 1e-15);
	ck_assert_double_eq_tol(r.head[0].off, 2.0 / 7.0, 1e-15);
	ck_assert_double_eq_tol(r.head[0].first, 1.0 / 3.0, 1e-15);
	ck_assert_double_eq_tol(r.head[0].entropy, 10.0 * log(2.0) / 6.0, 1e-15);
	/* offset 1: cells 1 (len 2) + 3 (len 4): (1/2 + 3/4) / 4 */
	ck_assert_double_eq_tol(r.profile[n], 1.25 / 4.0, 1e-15);
	mk_attn_summary_release(&r);
	mk_attn_acc_free(a);
	free(p2);
	free(p4);
}
END_TEST

/* Layer values: plain means over heads; a layer without blocks is NaN. */
START_TEST(test_layer_means)
{
	int64_t n = 4, len = 4;
	float *p = test_block(2, n, 0.0f);
	mk_attn_acc *a;
	mk_attn_summary r;
	mk_dataset_block b = test_blk(p, 0, 1, 2, n, len);
	test_fill(p, n, 0, len, 1); /* head 0 identity */
	test_fill(p, n, 1, len, 0); /* head 1 uniform */
	ck_assert_int_eq(mk_attn_acc_new(2, 2, n, 0, &a), MK_OK);
	ck_assert_int_eq(mk_attn_acc_add(a, &b), MK_OK);
	ck_assert_int_eq(mk_attn_acc_finish(a, &r), MK_OK);
	ck_assert_double_eq(r.layer[1].diag, (1.0 + 0.25) / 2.0);
	ck_assert_double_eq(r.layer[1].off, 0.25 / 2.0);
	ck_assert_double_eq_tol(r.layer[1].entropy, log(4.0) / 2.0, 1e-15);
	ck_assert_double_eq(r.layer_profile[r.width + n - 1], (1.0 + 0.25) / 2.0);
	ck_assert_double_eq(r.layer_profile[r.width + n], 0.25 / 2.0);
	ck_assert(isnan(r.layer[0].diag) && isnan(r.head[1].entropy) && isnan(r.head[0].mass_min));
	ck_assert(isnan(r.layer_profile[n - 1]));
	ck_assert_uint_eq(r.blocks[0], 0);
	ck_assert_uint_eq(r.rows[1], 4);
	mk_attn_summary_release(&r);
	mk_attn_acc_free(a);
	free(p);
}
END_TEST

/* Softmax rows of pseudo-random logits over 12 heads, summed with 1 and 5
 * threads, give bit-identical results. */
START_TEST(test_threads_same)
{
	int64_t n = 160, heads = 12, len = 150;
	float *p = test_block(heads, n, 0.0f);
	mk_attn_summary r[2];
	uint64_t s = 11;
	for (int64_t row = 0; row < heads * n; row++) {
		double z = 0.0;
		float *x = p + row * n;
		for (int64_t j = 0; j < n; j++) {
			s = s * 6364136223846793005ULL + 1442695040888963407ULL;
			x[j] = (float)exp((double)((s >> 40) % 4096) / 1024.0);
			z += x[j];
		}
		for (int64_t j = 0; j < n; j++)
			x[j] = (float)(x[j] / z);
	}
	for (int t = 0; t < 2; t++) {
#ifdef _OPENMP
		omp_set_num_threads(t ? 5 : 1);
#endif
		test_one(p, heads, n, len, &r[t]);
	}
	ck_assert_mem_eq(r[0].head, r[1].head, (size_t)heads * sizeof *r[0].head);
	ck_assert_mem_eq(r[0].profile, r[1].profile,
			 (size_t)(heads * r[0].width) * sizeof(double));
	ck_assert_double_lt(r[0].head[3].mass_max, 1.0); /* 10 of 160 keys are padding */
	ck_assert_double_gt(r[0].head[3].mass_min, 0.8);
	mk_attn_summary_release(&r[0]);
	mk_attn_summary_release(&r[1]);
	free(p);
}
END_TEST

START_TEST(test_bad_blocks)
{
	int64_t n = 4;
	float *p = test_block(2, n, 0.25f);
	uint8_t m[32] = {0};
	mk_attn_acc *a;
	mk_dataset_block b = test_blk(p, 3, 0, 2, n, 4);
	ck_assert_int_eq(mk_attn_acc_new(1, 2, n, 0, &a), MK_OK);
	b.p = NULL;
	b.m = m;
	ck_assert_int_eq(mk_attn_acc_add(a, &b), MK_EINVAL);
	ck_assert_str_eq(mk_error(), "attn-stats needs attention probabilities (float data)");
	b = test_blk(p, 3, 0, 3, n, 4);
	ck_assert_int_eq(mk_attn_acc_add(a, &b), MK_EINVAL);
	b = test_blk(p, 3, 1, 2, n, 4);
	ck_assert_int_eq(mk_attn_acc_add(a, &b), MK_EINVAL);
	b = test_blk(p, 3, 0, 2, n, 5);
	ck_assert_int_eq(mk_attn_acc_add(a, &b), MK_EINVAL);
	b = test_blk(p, 3, 0, 2, n, 0);
	ck_assert_int_eq(mk_attn_acc_add(a, &b), MK_EINVAL);
	p[n * n + 2 * n + 1] = NAN; /* head 1, row 2, key 1 */
	p[n * n + 3 * n + 3] = -0.5f;
	b = test_blk(p, 3, 0, 2, n, 4);
	ck_assert_int_eq(mk_attn_acc_add(a, &b), MK_EFORMAT);
	ck_assert_str_eq(mk_error(), "sample 3, layer 0, head 1: attention probability nan at "
			 "row 2, key 1 (must be finite and >= 0)");
	p[n * n + 2 * n + 1] = 0.25f;
	ck_assert_int_eq(mk_attn_acc_add(a, &b), MK_EFORMAT);
	ck_assert_ptr_nonnull(strstr(mk_error(), "-0.5 at row 3, key 3"));
	p[n * n + 3 * n + 3] = INFINITY;
	ck_assert_int_eq(mk_attn_acc_add(a, &b), MK_EFORMAT);
	ck_assert_ptr_nonnull(strstr(mk_error(), "inf at row 3, key 3"));
	p[n * n + 3 * n + 3] = 0.25f;
	b = test_blk(p, 3, 0, 2, n, 3); /* padding may hold anything */
	p[3] = NAN;
	ck_assert_int_eq(mk_attn_acc_add(a, &b), MK_OK);
	mk_attn_acc_free(a);
	free(p);
}
END_TEST

START_TEST(test_bad_new)
{
	mk_attn_acc *a = (mk_attn_acc *)&a;
	ck_assert_int_eq(mk_attn_acc_new(0, 2, 4, 0, &a), MK_EINVAL);
	ck_assert_ptr_null(a);
	ck_assert_int_eq(mk_attn_acc_new(1, 0, 4, 0, &a), MK_EINVAL);
	ck_assert_int_ne(mk_attn_acc_new(1, 1, 0, 0, &a), MK_OK);
	ck_assert_int_ne(mk_attn_acc_new(1, 1, MK_N_MAX + 1, 0, &a), MK_OK);
	/* 4 x 4 heads x (2 * 512 - 1) offsets of doubles: more than 64 KiB */
	ck_assert_int_eq(mk_attn_acc_new(4, 4, 512, 65536, &a), MK_ERANGE);
	ck_assert_int_eq(mk_attn_acc_new(INT64_MAX / 2, INT64_MAX / 2, 4, 0, &a), MK_ERANGE);
	ck_assert_ptr_null(a);
	mk_attn_acc_free(NULL);
	mk_attn_summary_release(NULL);
}
END_TEST

/* [3 samples, 2 layers, 2 heads, 8, 8] of `ftype`, lengths 8, 4, 2, uniform
 * 1/len over the real block, 0.9 in the padding, and `bad` (if not 0) at
 * sample 2, layer 1, head 0, row 1, key 0. */
static void test_h5_file(const char *path, hid_t ftype, double bad)
{
	hsize_t dims[5] = {3, 2, 2, 8, 8}, three = 3;
	const double lens[3] = {8, 4, 2};
	double *v = malloc(3 * 2 * 2 * 64 * sizeof *v);
	hid_t f = h5t_create(path);
	ck_assert_ptr_nonnull(v);
	for (int s = 0; s < 3; s++)
		for (int lh = 0; lh < 4; lh++)
			for (int i = 0; i < 8; i++)
				for (int j = 0; j < 8; j++)
					v[((s * 4 + lh) * 8 + i) * 8 + j] =
						i < lens[s] && j < lens[s] ? 1.0 / lens[s] : 0.9;
	if (bad != 0.0)
		v[((2 * 4 + 2) * 8 + 1) * 8 + 0] = bad;
	h5t_write(f, "attentions", 5, dims, ftype, v);
	h5t_write(f, "lengths", 1, &three, H5T_STD_I32LE, lens);
	H5Fclose(f);
	free(v);
}

static int test_h5_stats(const char *path, mk_attn_summary *r)
{
	mk_dataset *d;
	int ret = mk_dataset_open(path, NULL, &d);
	ck_assert_int_eq(ret, MK_OK);
	ret = mk_attn_summary_dataset(d, 0, NULL, NULL, r);
	mk_dataset_close(d);
	return ret;
}

/* Pooled over rows: diag (8/8 + 4/4 + 2/2) / 14, entropy (8 ln 8 + 4 ln 4 +
 * 2 ln 2) / 14 = 34 ln 2 / 14, off (7 + 3 + 1) / (56 + 12 + 2). */
START_TEST(test_dataset_uniform)
{
	char path[256];
	mk_attn_summary r;
	h5t_tmpname(path, sizeof path, "attn_stats");
	test_h5_file(path, H5T_IEEE_F32LE, 0.0);
	ck_assert_int_eq(test_h5_stats(path, &r), MK_OK);
	ck_assert_int_eq(r.layers, 2);
	ck_assert_int_eq(r.heads, 2);
	for (int k = 0; k < 4; k++) {
		ck_assert_double_eq_tol(r.head[k].diag, 3.0 / 14.0, 1e-15);
		ck_assert_double_eq_tol(r.head[k].off, 11.0 / 70.0, 1e-15);
		ck_assert_double_eq_tol(r.head[k].entropy, 34.0 * log(2.0) / 14.0, 1e-14);
		ck_assert_double_eq(r.head[k].mass_min, 1.0);
	}
	ck_assert_uint_eq(r.rows[1], 14);
	ck_assert_uint_eq(r.blocks[1], 3);
	ck_assert_uint_eq(r.count[7 + 3], 5 + 1); /* offset 3: lengths 8 and 4 */
	mk_attn_summary_release(&r);
	unlink(path);
}
END_TEST

START_TEST(test_dataset_masks_refused)
{
	char path[256];
	mk_attn_summary r;
	h5t_tmpname(path, sizeof path, "attn_stats");
	test_h5_file(path, H5T_STD_U8LE, 0.0);
	ck_assert_int_eq(test_h5_stats(path, &r), MK_EINVAL);
	ck_assert_ptr_nonnull(strstr(mk_error(), "attn-stats needs attention probabilities "
				     "(float data)"));
	ck_assert_ptr_nonnull(strstr(mk_error(), "uint8"));
	ck_assert_ptr_null(r.head);
	unlink(path);
}
END_TEST

/* NaN, infinite or negative probabilities in a real cell: one error naming
 * the file and the cell (the reader may catch them before the statistics). */
START_TEST(test_dataset_bad_values)
{
	const double bad[3] = {NAN, INFINITY, -0.5};
	char path[256], prefix[300];
	mk_attn_summary r;
	for (int k = 0; k < 3; k++) {
		h5t_tmpname(path, sizeof path, "attn_stats");
		test_h5_file(path, H5T_IEEE_F64LE, bad[k]);
		ck_assert_int_eq(test_h5_stats(path, &r), MK_EFORMAT);
		snprintf(prefix, sizeof prefix, "'%s': ", path);
		ck_assert_int_eq(strncmp(mk_error(), prefix, strlen(prefix)), 0);
		ck_assert_ptr_nonnull(strstr(mk_error(), "sample 2, layer 1, head 0"));
		ck_assert_ptr_nonnull(strstr(mk_error(), "row 1"));
		ck_assert_ptr_null(r.head);
		unlink(path);
	}
}
END_TEST

static Suite *attn_stats_suite(void)
{
	Suite *s = suite_create("attn_stats");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_uniform);
	tcase_add_test(tc, test_uniform_odd_lengths);
	tcase_add_test(tc, test_identity);
	tcase_add_test(tc, test_hand_block);
	tcase_add_test(tc, test_padding_excluded);
	tcase_add_test(tc, test_toeplitz_profile);
	tcase_add_test(tc, test_cell_weighting);
	tcase_add_test(tc, test_layer_means);
	tcase_add_test(tc, test_threads_same);
	tcase_add_test(tc, test_bad_blocks);
	tcase_add_test(tc, test_bad_new);
	suite_add_tcase(s, tc);
	tc = tcase_create("dataset");
	tcase_add_test(tc, test_dataset_uniform);
	tcase_add_test(tc, test_dataset_masks_refused);
	tcase_add_test(tc, test_dataset_bad_values);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return mk_test_main(attn_stats_suite());
}
