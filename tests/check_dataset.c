/* Unit tests for the Eq. 9 sparsity of data sets (analysis/dataset_measure.c,
 * src/io/dataset.c): hand-counted masks, closed forms of patterns over
 * lengths and keep rules; malformed files are in check_dataset_files.c. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "testutil.h"
#include "internal.h"
#include "h5testutil.h"

#define S3 3
#define L2 2
#define H2 2
#define N4 4

static const int64_t hand_len[S3] = {4, 2, 3};

/* Head (l, h)'s mask in the hand-made file: l0h0 the diagonal, l0h1
 * |i - j| <= 1, l1h0 everything, l1h1 the first column; padding cells are 1
 * so that they show if they are counted. */
static double hand_cell(int64_t s, int l, int h, int64_t i, int64_t j)
{
	int64_t len = hand_len[s];
	if (i >= len || j >= len)
		return 1;
	if (l == 0)
		return h == 0 ? i == j : llabs(i - j) <= 1;
	return h == 0 ? 1 : j == 0;
}

static void hand_file(const char *path, hid_t ftype, double set, double unset, bool lengths)
{
	double data[S3 * L2 * H2 * N4 * N4], len[S3] = {4, 2, 3};
	hsize_t dims[5] = {S3, L2, H2, N4, N4};
	size_t k = 0;
	hid_t f = h5t_create(path);

	for (int64_t s = 0; s < S3; s++)
		for (int l = 0; l < L2; l++)
			for (int h = 0; h < H2; h++)
				for (int64_t i = 0; i < N4; i++)
					for (int64_t j = 0; j < N4; j++)
						data[k++] = hand_cell(s, l, h, i, j) ? set : unset;
	h5t_write(f, "masks", 5, dims, ftype, data);
	if (lengths) {
		hsize_t n = S3;
		h5t_write(f, "lengths", 1, &n, H5T_STD_I32LE, len);
	}
	H5Fclose(f);
}

static void measure_file(const char *path, const mk_dataset_opts *o, const mk_keep *k,
			 mk_ds_measure *r)
{
	mk_dataset *d = NULL;
	int ret = mk_dataset_open(path, o, &d);
	ck_assert_msg(ret == MK_OK, "open: %s", mk_error());
	ret = mk_dataset_measure(d, k, NULL, NULL, r);
	ck_assert_msg(ret == MK_OK, "measure: %s", mk_error());
	mk_dataset_close(d);
}

/* The values below are counted by hand from hand_cell's definitions. */
static void check_hand(const mk_ds_measure *r)
{
	const double diag = (1 - 1.0 / 4 + 1 - 1.0 / 2 + 1 - 1.0 / 3) / 3; /* N_i cells */
	const double tri = (1 - 10.0 / 16 + 1 - 4.0 / 4 + 1 - 7.0 / 9) / 3; /* 3N_i - 2 cells */
	const double head[4] = {diag, tri, 0, diag};
	/* classic: the whole 4 x 4 with the padding's ones */
	const double c_diag = (1 - 4.0 / 16 + 1 - 14.0 / 16 + 1 - 10.0 / 16) / 3;
	const double c_tri = (1 - 10.0 / 16 + 1 - 16.0 / 16 + 1 - 14.0 / 16) / 3;

	ck_assert_int_eq(r->samples, 3);
	ck_assert_int_eq(r->layers, 2);
	ck_assert_int_eq(r->heads, 2);
	for (int a = 0; a < 4; a++)
		ck_assert_double_eq_tol(r->by_head[a], head[a], 1e-15);
	ck_assert_double_eq_tol(r->rho, (head[0] + head[1] + head[2] + head[3]) / 4, 1e-15);
	ck_assert_double_eq_tol(r->by_layer[0], (diag + tri) / 2, 1e-15);
	ck_assert_double_eq_tol(r->by_layer[1], diag / 2, 1e-15);
	ck_assert_double_eq_tol(r->by_sample[0], (0.75 + 0.375 + 0 + 0.75) / 4, 1e-15);
	ck_assert_double_eq_tol(r->by_sample[1], (0.5 + 0 + 0 + 0.5) / 4, 1e-15);
	ck_assert_double_eq_tol(r->by_sample[2], (2.0 / 3 + 2.0 / 9 + 0 + 2.0 / 3) / 4, 1e-15);
	ck_assert_double_eq_tol(r->rho_classic, (c_diag + c_tri + 0 + c_diag) / 4, 1e-15);
	ck_assert_int_eq(r->toeplitz[0], MK_TOEPLITZ_YES);
	ck_assert_int_eq(r->toeplitz[1], MK_TOEPLITZ_YES);
	ck_assert_int_eq(r->toeplitz[2], MK_TOEPLITZ_YES);
	/* the first column: M[1][1] = 0 but M[0][0] = 1, at the border */
	ck_assert_int_eq(r->toeplitz[3], MK_TOEPLITZ_INTERIOR);
	ck_assert_int_eq(r->lengths[1], 2);
	ck_assert_uint_eq(r->empty_rows, 0);
}

START_TEST(test_hand_masks)
{
	char path[256];
	mk_ds_measure r;
	mk_keep k = {MK_KEEP_NONZERO, 0};

	h5t_tmpname(path, sizeof path, "ds-hand");
	hand_file(path, H5T_STD_U8LE, 1, 0, true);
	measure_file(path, NULL, &k, &r);
	check_hand(&r);
	mk_ds_measure_release(&r);
	/* any integer width, either byte order */
	hand_file(path, H5T_STD_I32BE, 7, 0, true);
	measure_file(path, NULL, &k, &r);
	check_hand(&r);
	mk_ds_measure_release(&r);
	unlink(path);
}
END_TEST

START_TEST(test_hand_probabilities)
{
	char path[256];
	mk_ds_measure r;
	mk_keep k = {MK_KEEP_THRESHOLD, 0.3};
	hid_t f16 = h5t_float16();

	h5t_tmpname(path, sizeof path, "ds-prob");
	hand_file(path, f16, 0.5, 0.125, true);
	measure_file(path, NULL, &k, &r);
	check_hand(&r);
	mk_ds_measure_release(&r);
	hand_file(path, H5T_IEEE_F64LE, 0.5, 0.125, true);
	measure_file(path, NULL, &k, &r);
	check_hand(&r);
	mk_ds_measure_release(&r);
	H5Tclose(f16);
	unlink(path);
}
END_TEST

/* The hand-made data in memory (mk_dataset_wrap): the same counts as the
 * file's, in each element type it takes, and the caller's array untouched. */
static void measure_mem(mk_dtype t, double set, double unset, const mk_keep *k)
{
	static union { float f[S3 * L2 * H2 * N4 * N4]; double d[S3 * L2 * H2 * N4 * N4];
		uint16_t h[S3 * L2 * H2 * N4 * N4]; uint8_t b[S3 * L2 * H2 * N4 * N4]; } u, keep;
	const int64_t len[S3] = {4, 2, 3};
	mk_dataset_mem m = {.data = &u, .dtype = t, .samples = S3, .layers = L2, .heads = H2,
			    .n = N4, .lengths = len, .nlengths = S3};
	mk_dataset *d = NULL;
	mk_ds_measure r;
	size_t c = 0;

	for (int64_t s = 0; s < S3; s++)
		for (int l = 0; l < L2; l++)
			for (int h = 0; h < H2; h++)
				for (int64_t i = 0; i < N4; i++)
					for (int64_t j = 0; j < N4; j++, c++) {
						double v = hand_cell(s, l, h, i, j) ? set : unset;
						if (t == MK_DTYPE_F32)
							u.f[c] = (float)v;
						else if (t == MK_DTYPE_F64)
							u.d[c] = v;
						else if (t == MK_DTYPE_F16)
							u.h[c] = mk_half_from_float((float)v);
						else
							u.b[c] = (uint8_t)v;
					}
	memcpy(&keep, &u, sizeof u);
	ck_assert_msg(mk_dataset_wrap(&m, 0, &d) == MK_OK, "wrap: %s", mk_error());
	ck_assert_str_eq(mk_dataset_get_info(d)->lengths_name, "lengths");
	ck_assert_msg(mk_dataset_measure(d, k, NULL, NULL, &r) == MK_OK, "measure: %s", mk_error());
	check_hand(&r);
	mk_ds_measure_release(&r);
	mk_dataset_close(d);
	ck_assert(memcmp(&keep, &u, sizeof u) == 0);
}

START_TEST(test_hand_in_memory)
{
	mk_keep nonzero = {MK_KEEP_NONZERO, 0}, k = {MK_KEEP_THRESHOLD, 0.3};
	mk_dataset_mem m = {.data = "", .dtype = MK_DTYPE_F32, .samples = 1, .layers = 1,
			    .heads = 1, .n = 4, .lengths = (const int64_t[]){5}, .nlengths = 1};
	mk_dataset *d = NULL;

	measure_mem(MK_DTYPE_U8, 1, 0, &nonzero);
	measure_mem(MK_DTYPE_F32, 0.5, 0.125, &k);
	measure_mem(MK_DTYPE_F64, 0.5, 0.125, &k);
	measure_mem(MK_DTYPE_F16, 0.5, 0.125, &k);
	/* refused before anything is read: a length beyond N, too few lengths,
	 * an element type, an empty axis, a block beyond max_memory */
	ck_assert_int_eq(mk_dataset_wrap(&m, 0, &d), MK_EFORMAT);
	ck_assert_str_eq(mk_error_get()->param, "lengths");
	m.nlengths = 0;
	ck_assert_int_eq(mk_dataset_wrap(&m, 0, &d), MK_EINVAL);
	ck_assert_str_eq(mk_error_get()->param, "lengths");
	m.lengths = NULL;
	m.dtype = MK_DTYPE_I32;
	ck_assert_int_eq(mk_dataset_wrap(&m, 0, &d), MK_EINVAL);
	ck_assert_str_eq(mk_error_get()->param, "dtype");
	m.dtype = MK_DTYPE_F32;
	m.heads = 0;
	ck_assert_int_eq(mk_dataset_wrap(&m, 0, &d), MK_EINVAL);
	ck_assert_str_eq(mk_error_get()->param, "heads");
	m.heads = 1;
	ck_assert_int_eq(mk_dataset_wrap(&m, 32, &d), MK_ERANGE);
	ck_assert_ptr_null(d);
}
END_TEST

START_TEST(test_constant_length_is_classic)
{
	char path[256];
	mk_ds_measure r;
	mk_keep k = {MK_KEEP_NONZERO, 0};

	h5t_tmpname(path, sizeof path, "ds-const");
	hand_file(path, H5T_STD_U8LE, 1, 0, false);
	measure_file(path, NULL, &k, &r);
	ck_assert_double_eq(r.rho, r.rho_classic);
	ck_assert_int_eq(r.lengths[2], 4);
	mk_ds_measure_release(&r);
	unlink(path);
}
END_TEST

/* DAM_s-like: the band |i - j| <= 1 plus the whole border is Toeplitz on the
 * interior only; one more interior cell makes it not Toeplitz at all. */
START_TEST(test_toeplitz_levels)
{
	char path[256];
	double v[2 * 6 * 6];
	hsize_t dims[3] = {2, 6, 6};
	mk_ds_measure r;
	mk_keep k = {MK_KEEP_NONZERO, 0};
	hid_t f;

	for (int h = 0; h < 2; h++)
		for (int i = 0; i < 6; i++)
			for (int j = 0; j < 6; j++)
				v[h * 36 + i * 6 + j] = llabs(i - j) <= 1 || i == 0 || j == 0 || i == 5 ||
							j == 5;
	v[36 + 2 * 6 + 4] = 1;
	h5t_tmpname(path, sizeof path, "ds-toe");
	f = h5t_create(path);
	h5t_write(f, "mask", 3, dims, H5T_STD_U8LE, v);
	H5Fclose(f);
	measure_file(path, NULL, &k, &r);
	ck_assert_int_eq(r.toeplitz[0], MK_TOEPLITZ_INTERIOR);
	ck_assert_int_eq(r.toeplitz[1], MK_TOEPLITZ_NO);
	mk_ds_measure_release(&r);
	unlink(path);
}
END_TEST

/* ---- patterns at each length: closed forms -------------------------------- */

static const int64_t some_len[] = {7, 12, 33, 100, 5, 12, 1, 2, 64};
#define NLEN ((int64_t)(sizeof some_len / sizeof *some_len))

START_TEST(test_local2_closed_form)
{
	const char *e[1] = {"local2"};
	mk_ds_measure r;
	double want = 0;

	for (int64_t i = 0; i < NLEN; i++) {
		double n = (double)some_len[i];
		/* |i - j| <= 2 clipped at the edges: 5N - 6 cells for N >= 2, 1 for N = 1 */
		want += n >= 2 ? 1 - 5 / n + 6 / (n * n) : 0;
	}
	want /= NLEN;
	ck_assert_int_eq(mk_lengths_measure(e, 1, 1, some_len, NLEN, 0, 0, 0, &r), MK_OK);
	ck_assert_double_eq_tol(r.rho, want, 1e-12);
	ck_assert_double_eq_tol(r.rho_classic, 1 - 5 / 100.0 + 6 / 1e4, 1e-12);
	ck_assert_int_eq(r.n, 100);
	ck_assert_int_eq(r.toeplitz[0], MK_TOEPLITZ_YES);
	mk_ds_measure_release(&r);
}
END_TEST

START_TEST(test_heads_closed_forms)
{
	/* layer 0: causal (N(N+1)/2 cells), local2; layer 1: local0 (N), causal */
	const char *e[4] = {"causal", "local2", "local0", "causal"};
	mk_ds_measure r;
	double causal = 0, local2 = 0, diag = 0;

	for (int64_t i = 0; i < NLEN; i++) {
		double n = (double)some_len[i];
		causal += (n - 1) / (2 * n);
		local2 += n >= 2 ? 1 - 5 / n + 6 / (n * n) : 0;
		diag += 1 - 1 / n;
	}
	causal /= NLEN;
	local2 /= NLEN;
	diag /= NLEN;
	ck_assert_int_eq(mk_lengths_measure(e, 2, 2, some_len, NLEN, 128, 0, 0, &r), MK_OK);
	ck_assert_double_eq_tol(r.by_head[0], causal, 1e-12);
	ck_assert_double_eq_tol(r.by_head[1], local2, 1e-12);
	ck_assert_double_eq_tol(r.by_head[2], diag, 1e-12);
	ck_assert_double_eq_tol(r.by_head[3], causal, 1e-12);
	ck_assert_double_eq_tol(r.by_layer[1], (diag + causal) / 2, 1e-12);
	ck_assert_double_eq_tol(r.rho, (2 * causal + local2 + diag) / 4, 1e-12);
	ck_assert_double_eq_tol(r.by_sample[0], (3 / 7.0 * 2 + 1 - 5 / 7.0 + 6 / 49.0 + 6 / 7.0) / 4,
				1e-12);
	ck_assert_int_eq(r.n, 128);
	ck_assert_double_eq_tol(r.rho_classic, (2 * 127 / 256.0 + 1 - 5 / 128.0 + 6 / 16384.0 +
						1 - 1 / 128.0) / 4, 1e-12);
	for (int a = 0; a < 4; a++)
		ck_assert_int_eq(r.toeplitz[a], MK_TOEPLITZ_YES);
	mk_ds_measure_release(&r);
}
END_TEST

START_TEST(test_constant_lengths_pattern)
{
	const char *e[1] = {"bigbird(w=3,g=2,r=2,seed=5)"};
	const int64_t len[4] = {64, 64, 64, 64};
	mk_ds_measure r;
	mk_expr *x;
	mk_measure m;
	mk_bind_opts bo = {.n = 64};

	ck_assert_int_eq(mk_lengths_measure(e, 1, 1, len, 4, 0, 0, 0, &r), MK_OK);
	ck_assert_double_eq(r.rho, r.rho_classic);
	ck_assert_int_eq(mk_expr_parse(e[0], &x), MK_OK);
	ck_assert_int_eq(mk_expr_bind(x, &bo), MK_OK);
	ck_assert_int_eq(mk_measure_expr(x, NULL, 0, NULL, NULL, &m), MK_OK);
	ck_assert_double_eq_tol(r.rho, m.sparsity, 1e-15);
	mk_expr_free(x);
	mk_ds_measure_release(&r);
}
END_TEST

START_TEST(test_pattern_errors)
{
	const char *bad[1] = {"lokal2"};
	const char *ok[1] = {"local2"};
	mk_ds_measure r;

	ck_assert_int_eq(mk_lengths_measure(bad, 1, 1, some_len, NLEN, 0, 0, 0, &r), MK_EINVAL);
	ck_assert_ptr_nonnull(strstr(mk_error(), "lokal2"));
	ck_assert_int_eq(mk_lengths_measure(ok, 1, 1, some_len, NLEN, 50, 0, 0, &r), MK_EINVAL);
	ck_assert_ptr_nonnull(strstr(mk_error(), "longer than N = 50"));
}
END_TEST

/* 256 heads at 1024 distinct lengths keep a rho each (2.1 MB): refused under
 * a 1 MiB limit before anything is allocated, measured under 4 MiB. */
START_TEST(test_pattern_memory)
{
	enum { LH = 256, NS = 1024 };
	const char **e = malloc(LH * sizeof *e);
	int64_t *len = malloc(NS * sizeof *len);
	mk_ds_measure r;

	ck_assert(e && len);
	for (int k = 0; k < LH; k++)
		e[k] = "local1";
	for (int i = 0; i < NS; i++)
		len[i] = i + 1;
	ck_assert_int_eq(mk_lengths_measure(e, 16, 16, len, NS, 0, 0, (uint64_t)1 << 20, &r),
			 MK_ERANGE);
	ck_assert_ptr_nonnull(strstr(mk_error(), "each distinct length"));
	ck_assert_int_eq(mk_lengths_measure(e, 16, 16, len, NS, 0, 0, (uint64_t)4 << 20, &r),
			 MK_OK);
	ck_assert_int_eq(r.samples, NS);
	mk_ds_measure_release(&r);
	free(e);
	free(len);
}
END_TEST

/* ---- keep rules ---------------------------------------------------------- */

START_TEST(test_top_p)
{
	/* binary fractions, so that sums are exact */
	const float row[3] = {0.25f, 0.5f, 0.25f}, flat[4] = {0.25f, 0.25f, 0.25f, 0.25f};
	const float gaps[4] = {0.75f, 0, 0.25f, 0}, zero[2] = {0, 0};
	const float half[3] = {0.125f, 0.25f, 0.125f};
	float s[8];
	mk_keep k = {MK_KEEP_TOP_P, 0.5};

	ck_assert_int_eq(mk_keep_count(&k, row, 3, s), 1);
	k.value = 0.6;
	ck_assert_int_eq(mk_keep_count(&k, row, 3, s), 2);
	k.value = 0.75; /* 0.5 + 0.25 reaches it exactly */
	ck_assert_int_eq(mk_keep_count(&k, row, 3, s), 2);
	k.value = 0.76;
	ck_assert_int_eq(mk_keep_count(&k, row, 3, s), 3);
	k.value = 0.5;
	ck_assert_int_eq(mk_keep_count(&k, flat, 4, s), 2);
	k.value = 0.51;
	ck_assert_int_eq(mk_keep_count(&k, flat, 4, s), 3);
	k.value = 1;
	ck_assert_int_eq(mk_keep_count(&k, gaps, 4, s), 2);
	ck_assert_int_eq(mk_keep_count(&k, zero, 2, s), 0);
	/* relative to the row's own mass: rows need not sum to 1 */
	k.value = 0.5;
	ck_assert_int_eq(mk_keep_count(&k, half, 3, s), 1);
	k.value = 0.51;
	ck_assert_int_eq(mk_keep_count(&k, half, 3, s), 2);
}
END_TEST

START_TEST(test_top_p_matches_sort)
{
	float p[300], s[300], sorted[300];
	uint64_t x = 42;

	for (int trial = 0; trial < 200; trial++) {
		int64_t len = 1 + trial % 300;
		double total = 0, run = 0, value = (trial % 19 + 1) / 20.0;
		int64_t want = 0;
		mk_keep k = {MK_KEEP_TOP_P, value};
		for (int64_t j = 0; j < len; j++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			/* few distinct values: plenty of ties */
			p[j] = (float)((x >> 33) % 7) / 8.0f;
			total += p[j];
		}
		memcpy(sorted, p, sizeof p);
		for (int64_t a = 1; a < len; a++) /* insertion sort, descending */
			for (int64_t b = a; b > 0 && sorted[b] > sorted[b - 1]; b--) {
				float t = sorted[b];
				sorted[b] = sorted[b - 1];
				sorted[b - 1] = t;
			}
		while (total > 0 && want < len && run < value * total * (1 - 1e-12))
			run += sorted[want++];
		ck_assert_int_eq(mk_keep_count(&k, p, len, s), want);
	}
}
END_TEST

START_TEST(test_threshold)
{
	const float row[5] = {0.1f, 0.3f, 0.3f, 0.05f, 0.25f};
	float s[5];
	mk_keep k = {MK_KEEP_THRESHOLD, 0.25};

	ck_assert_int_eq(mk_keep_count(&k, row, 5, s), 3);
	k.value = 0.3;
	ck_assert_int_eq(mk_keep_count(&k, row, 5, s), 2);
	k.value = 0;
	ck_assert_int_eq(mk_keep_count(&k, row, 5, s), 5);
}
END_TEST

START_TEST(test_rule_mismatch)
{
	char path[256];
	mk_ds_measure r;
	mk_dataset *d;
	mk_keep none = {MK_KEEP_NONZERO, 0}, thr = {MK_KEEP_THRESHOLD, 0.5};

	h5t_tmpname(path, sizeof path, "ds-rule");
	hand_file(path, H5T_IEEE_F32LE, 0.5, 0, true);
	ck_assert_int_eq(mk_dataset_open(path, NULL, &d), MK_OK);
	ck_assert_int_eq(mk_dataset_measure(d, &none, NULL, NULL, &r), MK_EINVAL);
	ck_assert_ptr_nonnull(strstr(mk_error(), "give a threshold or a top-p rule (threshold)"));
	mk_dataset_close(d);
	hand_file(path, H5T_STD_U8LE, 1, 0, true);
	ck_assert_int_eq(mk_dataset_open(path, NULL, &d), MK_OK);
	ck_assert_int_eq(mk_dataset_measure(d, &thr, NULL, NULL, &r), MK_EINVAL);
	ck_assert_ptr_nonnull(strstr(mk_error(), "holds masks"));
	mk_dataset_close(d);
	unlink(path);
}
END_TEST

/* The one call behind `maskkit measure --heads-file` with --n: rows, names
 * and the JSON of the record (no empty_rows for patterns, null lengths_from). */
START_TEST(test_report_patterns)
{
	const char *e[4] = {"causal", "local2", "local0", "causal"};
	mk_ds_report_opts o = {.n = 8};
	mk_ds_report r;
	const void *rows;
	size_t count;
	char *json;

	ck_assert_int_eq(mk_ds_report_patterns(e, 2, 2, "heads", &o, &r), MK_OK);
	ck_assert_str_eq(r.data, "heads");
	ck_assert_ptr_null(r.lengths_from);
	ck_assert_int_eq(r.m.samples, 1);
	ck_assert_int_eq(r.len_min, 8);
	ck_assert(mk_ds_report_rows(&r, MK_DS_BY_HEAD, &rows, &count) == &mk_ds_head_record);
	ck_assert_int_eq(count, 4);
	ck_assert_int_eq(r.by_head[3].layer, 1);
	ck_assert_int_eq(r.by_head[3].head, 1);
	ck_assert_double_eq_tol(r.by_head[3].sparsity, 1 - 36 / 64.0, 1e-12);
	ck_assert_str_eq(r.by_head[3].toeplitz, "yes");
	ck_assert(mk_ds_report_rows(&r, MK_DS_BY_SAMPLE, &rows, &count) == &mk_ds_sample_record);
	ck_assert_int_eq(count, 1);
	json = mk_emit_json_text(&mk_ds_report_record, &r, 1, 0);
	ck_assert_ptr_nonnull(json);
	ck_assert_ptr_nonnull(strstr(json, "\"lengths_from\":\tnull"));
	ck_assert_ptr_null(strstr(json, "empty_rows"));
	ck_assert_ptr_nonnull(strstr(json, "\"toeplitz\":\t\"yes\""));
	free(json);
	mk_ds_report_release(&r);
	o.n = 0;
	ck_assert_int_eq(mk_ds_report_patterns(e, 2, 2, "heads", &o, &r), MK_EINVAL);
	ck_assert_str_eq(mk_error_get()->param, "lengths");
}
END_TEST

static Suite *dataset_suite(void)
{
	Suite *s = suite_create("dataset");
	TCase *t = tcase_create("measure");
	TCase *p = tcase_create("patterns");
	TCase *k = tcase_create("keep");
	TCase *e = tcase_create("errors");

	tcase_add_test(t, test_hand_masks);
	tcase_add_test(t, test_hand_probabilities);
	tcase_add_test(t, test_hand_in_memory);
	tcase_add_test(t, test_constant_length_is_classic);
	tcase_add_test(t, test_toeplitz_levels);
	tcase_add_test(p, test_local2_closed_form);
	tcase_add_test(p, test_heads_closed_forms);
	tcase_add_test(p, test_constant_lengths_pattern);
	tcase_add_test(p, test_pattern_errors);
	tcase_add_test(p, test_pattern_memory);
	tcase_add_test(p, test_report_patterns);
	tcase_add_test(k, test_top_p);
	tcase_add_test(k, test_top_p_matches_sort);
	tcase_add_test(k, test_threshold);
	tcase_add_test(e, test_rule_mismatch);
	suite_add_tcase(s, t);
	suite_add_tcase(s, p);
	suite_add_tcase(s, k);
	suite_add_tcase(s, e);
	return s;
}

int main(void)
{
	return mk_test_main(dataset_suite());
}
