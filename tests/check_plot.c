/* Unit tests of matrix heatmaps (mk_png_matrices), read back with libpng. */
/* nftw() (in plottestutil.h) is an X/Open extension, not in the POSIX base we build for. */
#define _XOPEN_SOURCE 700
#include "config.h"
#include <check.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "internal.h"
#include "plot_internal.h"
#include "testutil.h"
#include "plottestutil.h"

static void expect_pixel(const struct image *im, uint32_t x, uint32_t y, const uint8_t want[3])
{
	const uint8_t *px;
	ck_assert(x < im->w && y < im->h);
	px = im->rgb + 3 * ((size_t)y * im->w + x);
	ck_assert_msg(memcmp(px, want, 3) == 0, "pixel (%u, %u) is %u,%u,%u, expected %u,%u,%u",
		      x, y, px[0], px[1], px[2], want[0], want[1], want[2]);
}

static void expect_viridis(const struct image *im, uint32_t x, uint32_t y, double t)
{
	uint8_t want[3];
	mk_colormap_viridis(t, want);
	expect_pixel(im, x, y, want);
}

static const uint8_t white[3] = {255, 255, 255};

/* Draws count panels of a k x k matrix (m, lda k) and reads the picture back. */
static struct image draw(const double *const *mats, int count, int64_t k, int columns,
			 int64_t max_px)
{
	int ret = mk_png_matrices(path("m.png"), mats, count, k, k, columns, max_px);
	ck_assert_msg(ret == MK_OK, "status %d: %s", ret, mk_error());
	return read_png(path("m.png"));
}

/* Picture sizes: count panels of k x k in a grid `columns` wide. */
static const struct {
	int count, columns;
	int64_t k, max_px;
	uint32_t w, h;
} sizes[] = {
	{1, 1, 5, 0, 5, 5},                   /* a single panel, one pixel per entry */
	{5, 2, 4, 0, 2 * 4 + 2, 3 * 4 + 2 * 2}, /* 3 rows, 2-pixel gaps */
	{2, 4, 3, 0, 2 * 3 + 2, 3},           /* no wider than the panels */
	{1, 1, 3000, 0, 1024, 1024},          /* reduced to the default max_px */
	{2, 2, 50, 16, 2 * 16 + 2, 16},       /* reduced to max_px */
};

START_TEST(png_sizes)
{
	int64_t k = sizes[_i].k;
	double *m = calloc((size_t)(k * k), sizeof *m);
	const double *mats[] = {m, m, m, m, m};
	struct image im;
	m[k * k - 1] = 1.0;
	im = draw(mats, sizes[_i].count, k, sizes[_i].columns, sizes[_i].max_px);
	ck_assert_uint_eq(im.w, sizes[_i].w);
	ck_assert_uint_eq(im.h, sizes[_i].h);
	free(im.rgb);
	free(m);
}
END_TEST

/* Known answers: a k x k matrix drawn at max_px, and pixels (x, y) that must
 * show viridis(t). */
static const struct {
	const char *what;
	int64_t k, max_px;
	double m[25];
	struct { uint32_t x, y; double t; } px[4];
} known[] = {
	{"min and max are the ends of the map", 3, 0, {0.5, 2, 1, -3, 0.25, 0, 1.5, -1, 0.75},
	 {{0, 1, 0.0}, {1, 0, 1.0}, {2, 0, 0.8}, {2, 2, 0.75}}},
	{"row 0 at the top", 2, 0, {1, 1, 0, 0}, {{0, 0, 1}, {1, 0, 1}, {0, 1, 0}, {1, 1, 0}}},
	/* 2 x 2 blocks with means 0, 1, 2, 3 whose entries all differ */
	{"block means", 4, 2, {-1, 1, 0, 2, 1, -1, 0, 2, 1, 3, 4, 2, 3, 1, 2, 4},
	 {{0, 0, 0}, {1, 0, 1 / 3.0}, {0, 1, 2 / 3.0}, {1, 1, 1}}},
	/* 5 entries over 2 pixels: [0, 2) and [2, 5); block (0, 0) is -2, 0, 0, 2 */
	{"uneven blocks", 5, 2, {-2, 0, 3, 3, 3, 0, 2, 3, 3, 3, 6, 6, 9, 9, 9, 6, 6, 9, 9, 9,
				 6, 6, 9, 9, 9},
	 {{0, 0, 0}, {1, 0, 1 / 3.0}, {0, 1, 2 / 3.0}, {1, 1, 1}}},
	{"a constant panel in the middle of the map", 3, 0, {7, 7, 7, 7, 7, 7, 7, 7, 7},
	 {{0, 0, 0.5}, {2, 0, 0.5}, {1, 1, 0.5}, {2, 2, 0.5}}},
	/* block (0, 0) is NaN, 2, 2, 2: its mean is 2 (1.5 if NaN counted as 0) */
	{"block means skip NaN", 4, 2, {NAN, 2, 0, 0, 2, 2, 0, 0, 4, 4, 1, 1, 4, 4, 1, 1},
	 {{0, 0, 0.5}, {1, 0, 0}, {0, 1, 1}, {1, 1, 0.25}}},
};

START_TEST(png_known_answers)
{
	const double *mats[] = {known[_i].m};
	struct image im = draw(mats, 1, known[_i].k, 1, known[_i].max_px);
	for (int q = 0; q < 4; q++)
		expect_viridis(&im, known[_i].px[q].x, known[_i].px[q].y, known[_i].px[q].t);
	free(im.rgb);
}
END_TEST

START_TEST(png_nan_is_grey_and_out_of_range)
{
	double m[4] = {NAN, 0, 1, INFINITY};
	const double *mats[] = {m};
	struct image im = draw(mats, 1, 2, 1, 0);
	const uint8_t *px = im.rgb;
	ck_assert_msg(px[0] == px[1] && px[1] == px[2] && px[0] != 255,
		      "NaN drawn as %u,%u,%u, expected grey", px[0], px[1], px[2]);
	expect_pixel(&im, 1, 1, px); /* infinity is missing too */
	expect_viridis(&im, 1, 0, 0.0);
	expect_viridis(&im, 0, 1, 1.0);
	free(im.rgb);
}
END_TEST

START_TEST(png_panels_placed_in_grid)
{
	/* panel c is 1 at (c / 2, c % 2) and 0 elsewhere */
	double a[4] = {1, 0, 0, 0}, b[4] = {0, 1, 0, 0}, c[4] = {0, 0, 1, 0};
	const double *mats[] = {a, b, c};
	struct image im = draw(mats, 3, 2, 2, 0);
	expect_viridis(&im, 0, 0, 1.0);
	expect_viridis(&im, 4 + 1, 0, 1.0);
	expect_viridis(&im, 4, 0, 0.0);
	expect_viridis(&im, 0, 4 + 1, 1.0);
	expect_viridis(&im, 0, 4, 0.0);
	expect_pixel(&im, 2, 0, white); /* the gap */
	expect_pixel(&im, 3, 5, white);
	expect_pixel(&im, 5, 5, white); /* the empty cell */
	free(im.rgb);
}
END_TEST

START_TEST(png_panels_scaled_independently)
{
	double a[4] = {0, 1, 0, 1}, b[4] = {100, 300, 300, 300};
	const double *mats[] = {a, b};
	struct image im = draw(mats, 2, 2, 2, 0);
	expect_viridis(&im, 1, 0, 1.0);
	expect_viridis(&im, 4, 0, 0.0);
	expect_viridis(&im, 5, 0, 1.0);
	free(im.rgb);
}
END_TEST

static double one[16];
static const double *one_mat[] = {one, one};
static const double *null_mat[] = {NULL};
static const struct {
	const double *const *mats;
	int count;
	int64_t k, lda;
	int columns;
	int64_t max_px;
} bad_args[] = {
	{one_mat, 0, 2, 2, 1, 0},  {one_mat, 1, 2, 2, 0, 0},  {one_mat, 1, 0, 2, 1, 0},
	{one_mat, 1, 2, 1, 1, 0},  {one_mat, 1, 2, 2, 1, -1}, {NULL, 1, 2, 2, 1, 0},
	{null_mat, 1, 2, 2, 1, 0}, {one_mat, -1, 2, 2, 1, 0}, {one_mat, 1, -4, 2, 1, 0},
};

START_TEST(png_invalid_arguments)
{
	int ret = mk_png_matrices(path("m.png"), bad_args[_i].mats, bad_args[_i].count,
				  bad_args[_i].k, bad_args[_i].lda, bad_args[_i].columns,
				  bad_args[_i].max_px);
	ck_assert_msg(ret == MK_EINVAL, "case %d: status %d (%s)", _i, ret, mk_error());
	ck_assert_int_eq(access(path("m.png"), F_OK), -1);
}
END_TEST

START_TEST(png_too_large)
{
	static const double *mats[4096];
	int ret;
	for (int c = 0; c < 4096; c++)
		mats[c] = one;
	/* 4096 panels of 2^20 pixels side: far beyond PNG's 2^31 - 1 */
	ret = mk_png_matrices(path("m.png"), mats, 4096, MK_N_MAX, MK_N_MAX, 4096, MK_N_MAX);
	ck_assert_msg(ret == MK_ERANGE, "status %d (%s)", ret, mk_error());
}
END_TEST

START_TEST(png_failed_write_keeps_old_file)
{
	enum { K = 256 };
	static double m[K * K];
	const double *mats[] = {m};
	struct rlimit old, small = {4096, 4096};
	uint64_t x = 1;
	int ret;
	for (int q = 0; q < K * K; q++, x = x * 6364136223846793005ULL + 1442695040888963407ULL)
		m[q] = (double)(x >> 40);
	put_file(path("out/m.png"), "old");
	/* the noise compresses badly, so the PNG outgrows the file size limit */
	signal(SIGXFSZ, SIG_IGN);
	ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
	small.rlim_max = old.rlim_max;
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &small), 0);
	ret = mk_png_matrices(path("out/m.png"), mats, 1, K, K, 1, 0);
	setrlimit(RLIMIT_FSIZE, &old);
	ck_assert_msg(ret != MK_OK, "a write over the limit succeeded");
	expect_file(path("out/m.png"), "old");
	ck_assert_int_eq(count_entries("out"), 1);
}
END_TEST

START_TEST(png_replaces_file_without_leftovers)
{
	struct image im;
	put_file(path("out/m.png"), "old");
	ck_assert_int_eq(mk_png_matrices(path("out/m.png"), one_mat, 1, 4, 4, 1, 0), MK_OK);
	im = read_png(path("out/m.png"));
	ck_assert_uint_eq(im.w, 4);
	ck_assert_int_eq(count_entries("out"), 1);
	free(im.rgb);
}
END_TEST

static Suite *plot_suite(void)
{
	Suite *s = suite_create("plot");
	TCase *tc = tcase_create("plot");
	tcase_add_checked_fixture(tc, scratch_setup, scratch_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, png_sizes, 0, sizeof sizes / sizeof sizes[0]);
	tcase_add_loop_test(tc, png_known_answers, 0, sizeof known / sizeof known[0]);
	tcase_add_test(tc, png_nan_is_grey_and_out_of_range);
	tcase_add_test(tc, png_panels_placed_in_grid);
	tcase_add_test(tc, png_panels_scaled_independently);
	tcase_add_loop_test(tc, png_invalid_arguments, 0, sizeof bad_args / sizeof bad_args[0]);
	tcase_add_test(tc, png_too_large);
	tcase_add_test(tc, png_failed_write_keeps_old_file);
	tcase_add_test(tc, png_replaces_file_without_leftovers);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return mk_test_main(plot_suite());
}
