/* Unit tests of framed heatmaps (mk_png_heatmaps): colour ranges and their
 * parsing, the percentile selection, scaling up small matrices, the font,
 * the colour bar, title and labels.  Read back with libpng. */
/* nftw() (in plottestutil.h) is an X/Open extension, not in the POSIX base we build for. */
#define _XOPEN_SOURCE 700
#include "config.h"
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "plot_internal.h"
#include "testutil.h"
#include "plottestutil.h"

static const uint8_t *pixel(const struct image *im, int64_t x, int64_t y)
{
	ck_assert_msg(x >= 0 && y >= 0 && x < im->w && y < im->h, "(%lld, %lld) outside %ux%u",
		      (long long)x, (long long)y, im->w, im->h);
	return im->rgb + 3 * ((size_t)y * im->w + (size_t)x);
}

static void expect_viridis(const struct image *im, int64_t x, int64_t y, double t)
{
	uint8_t want[3];
	const uint8_t *px = pixel(im, x, y);
	/* the picture holds t's level of viridis (a palette of MK_PIC_LEVELS + 1) */
	mk_pic_palette(mk_pic_level(t), want);
	ck_assert_msg(memcmp(px, want, 3) == 0, "pixel (%lld, %lld) is %u,%u,%u, expected t = %g",
		      (long long)x, (long long)y, px[0], px[1], px[2], t);
}

static struct image draw(const double *const *mats, int count, int64_t k, int columns,
			 const mk_heatmap_opts *o)
{
	int ret = mk_png_heatmaps(path("h.png"), mats, count, k, k, columns, o);
	ck_assert_msg(ret == MK_OK, "status %d: %s", ret, mk_error());
	return read_png(path("h.png"));
}

/* 2500 values 0.001 q (q = 1..2499) and one outlier 1e6: numpy.percentile
 * gives 0.02599 and 2.47501 (positions 24.99 and 2474.01). */
START_TEST(percentile_range_excludes_an_outlier)
{
	enum { N = 2500 };
	double *v = malloc((N + 1) * sizeof *v), *work = malloc((N + 1) * sizeof *work);
	double lo, hi;
	mk_range r = {.kind = MK_RANGE_PERCENTILE, .pct = 1};
	for (int q = 0; q < N; q++)
		v[(q * 7) % N] = q ? 0.001 * q : 1e6; /* shuffled: 7 is prime to 2500 */
	v[N] = NAN; /* missing entries are left out */
	mk_range_apply(&r, v, N + 1, work, &lo, &hi);
	ck_assert_msg(fabs(lo - 0.02599) < 1e-12, "lo %.15g", lo);
	ck_assert_msg(fabs(hi - 2.47501) < 1e-12, "hi %.15g", hi);
	r.kind = MK_RANGE_MINMAX;
	mk_range_apply(&r, v, N + 1, work, &lo, &hi);
	ck_assert(lo == 0.001 && hi == 1e6);
	/* a percentile range of width 0 falls back to min-max */
	for (int q = 0; q < N; q++)
		v[q] = q == 5 ? 1 : 0;
	r.kind = MK_RANGE_PERCENTILE;
	mk_range_apply(&r, v, N, work, &lo, &hi);
	ck_assert(lo == 0 && hi == 1);
	free(v);
	free(work);
}
END_TEST

/* Every percentile of a few arrays against sorting. */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

START_TEST(percentile_matches_a_sort)
{
	enum { N = 1001 };
	static double v[N], work[N], sorted[N];
	uint64_t x = 42;
	for (int q = 0; q < N; q++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		/* _i = 1: many ties; _i = 2: already sorted */
		v[q] = _i == 0 ? (double)(x >> 11) : _i == 1 ? (double)((x >> 40) % 5) : q;
	}
	memcpy(sorted, v, sizeof v);
	qsort(sorted, N, sizeof *sorted, cmp_double);
	for (double pct = 0; pct <= 100; pct += 2.5) {
		double pos = pct / 100 * (N - 1), want;
		int k = (int)floor(pos);
		want = k + 1 < N ? sorted[k] + (pos - k) * (sorted[k + 1] - sorted[k]) : sorted[k];
		memcpy(work, v, sizeof v);
		ck_assert_msg(fabs(mk_percentile(work, N, pct) - want) <= 1e-9 * fabs(want),
			      "case %d, p%g", _i, pct);
	}
}
END_TEST

/* Good spellings and what they mean. */
static const struct {
	const char *s;
	mk_range_kind kind;
	double a, b;
} good_ranges[] = {
	{"p1", MK_RANGE_PERCENTILE, 1, 0},    {"p0.5", MK_RANGE_PERCENTILE, 0.5, 0},
	{"p0", MK_RANGE_PERCENTILE, 0, 0},    {"p49.9", MK_RANGE_PERCENTILE, 49.9, 0},
	{"minmax", MK_RANGE_MINMAX, 0, 0},    {"-1:1", MK_RANGE_FIXED, -1, 1},
	{"0:2e-3", MK_RANGE_FIXED, 0, 2e-3},  {"-5.5:-2", MK_RANGE_FIXED, -5.5, -2},
};

START_TEST(range_parses_good_values)
{
	mk_range r;
	ck_assert_msg(mk_range_parse(good_ranges[_i].s, &r) == MK_OK, "%s: %s",
		      good_ranges[_i].s, mk_error());
	ck_assert_int_eq(r.kind, good_ranges[_i].kind);
	if (r.kind == MK_RANGE_PERCENTILE)
		ck_assert(r.pct == good_ranges[_i].a);
	if (r.kind == MK_RANGE_FIXED)
		ck_assert(r.lo == good_ranges[_i].a && r.hi == good_ranges[_i].b);
}
END_TEST

static const char *const bad_ranges[] = {
	"", "p", "p50", "p-1", "p1x", "px", "P1", "2:1", "1:1", ":1", "1:", "1:2:3", "a:b",
	"nan:1", "1:inf", " 1:2", "1: 2", "p 1", "max", "1",
};

START_TEST(range_refuses_bad_values)
{
	mk_range r = {.kind = MK_RANGE_FIXED, .lo = 7, .hi = 8};
	const char *msg;
	ck_assert_int_eq(mk_range_parse(bad_ranges[_i], &r), MK_EINVAL);
	msg = mk_error();
	/* one line that quotes the value */
	ck_assert_msg(strchr(msg, '\n') == NULL && strstr(msg, "colour range"), "%s", msg);
	ck_assert(r.kind == MK_RANGE_FIXED && r.lo == 7); /* untouched */
}
END_TEST

/* The picture's size is the documented one: a frame around each panel of
 * side floor(512 / k) k for k < 256. */
START_TEST(small_matrices_scaled_up)
{
	static const int64_t ks[] = {1, 5, 100, 255, 256, 300};
	int64_t k = ks[_i], side = k < 256 ? 512 / k * k : k;
	double *m = calloc((size_t)(k * k), sizeof *m);
	const double *mats[] = {m};
	mk_heatmap_opts o = {.title = "t"};
	mk_frame f = {0};
	struct image im;
	for (int64_t q = 0; q < k * k; q++)
		m[q] = (double)q;
	im = draw(mats, 1, k, 1, &o);
	mk_frame_layout(&f, k, false, true);
	ck_assert_uint_eq(im.w, f.left + side + f.right);
	ck_assert_uint_eq(im.h, f.title_h + f.top + side + f.bottom);
	if (k > 1) {
		/* nearest neighbour: entry (i, j) fills pixels [i s / k, (i+1) s / k) */
		int64_t s = side / k, x0 = f.left, y0 = f.title_h + f.top;
		int64_t i = k - 1, j = k / 2;
		expect_viridis(&im, x0 + j * s, y0 + i * s, (double)(i * k + j) / (double)(k * k - 1));
		expect_viridis(&im, x0 + j * s + s - 1, y0 + i * s + s - 1,
			       (double)(i * k + j) / (double)(k * k - 1));
		expect_viridis(&im, x0, y0, 0.0);
	}
	free(im.rgb);
	free(m);
}
END_TEST

static int64_t count_ink(const mk_canvas *cv)
{
	int64_t ink = 0;
	for (int64_t q = 0; q < cv->w * cv->h; q++)
		ink += cv->px[q] == MK_PAL_INK;
	return ink;
}

static int64_t hashes(const char *s)
{
	int64_t n = 0;
	for (; *s; s++) {
		const char *g = mk_font_glyph(*s);
		for (int q = 0; q < MK_FONT_H * (MK_FONT_W + 1) - 1; q++)
			n += g[q] == '#';
	}
	return n;
}

START_TEST(font_draws_digits)
{
	static uint8_t buf[200 * 20];
	mk_canvas cv = {.px = buf, .w = 200, .h = 20};
	const uint8_t black = MK_PAL_INK;
	memset(buf, MK_PAL_WHITE, sizeof buf);
	mk_font_draw(&cv, 0, 0, 1, "1", black);
	/* '1': one, two, one four times, then three pixels */
	ck_assert_int_eq(count_ink(&cv), 10);
	memset(buf, MK_PAL_WHITE, sizeof buf);
	mk_font_draw(&cv, 0, 0, 2, "0123456789", black);
	ck_assert_int_eq(count_ink(&cv), 4 * hashes("0123456789"));
	ck_assert_int_eq(mk_font_width("0123456789", 2), 2 * (10 * 6 - 1));
	/* every digit differs from every other; a byte without a glyph is '?' */
	for (char a = '0'; a <= '9'; a++)
		for (char b = '0'; b < a; b++)
			ck_assert(strcmp(mk_font_glyph(a), mk_font_glyph(b)) != 0);
	ck_assert_str_eq(mk_font_glyph('\x80'), mk_font_glyph('?'));
	/* clipped at the canvas's edge, not written beyond it */
	memset(buf, MK_PAL_WHITE, sizeof buf);
	mk_font_draw(&cv, 195, 15, 2, "8", black);
	ck_assert(count_ink(&cv) > 0 && count_ink(&cv) < 4 * hashes("8"));
}
END_TEST

/* The colour bar right of the panel runs from the top colour down to the
 * bottom one; the title and the label put ink above the panel. */
START_TEST(frame_has_bar_title_and_label)
{
	double m[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
	const double *mats[] = {m};
	const char *labels[] = {"head 0"};
	mk_heatmap_opts o = {.title = "P", .labels = labels};
	mk_frame f = {0};
	struct image im = draw(mats, 1, 3, 1, &o);
	int64_t side = 510, y0, bx, ink = 0;
	mk_frame_layout(&f, 3, true, true);
	y0 = f.title_h + f.top;
	bx = f.left + side + 12 + 8; /* FRAME_BAR_GAP, the middle of FRAME_BAR_W */
	expect_viridis(&im, bx, y0, 1.0);
	expect_viridis(&im, bx, y0 + side - 1, 0.0);
	for (int64_t y = 0; y < y0 - 1; y++)
		for (int64_t x = 0; x < im.w; x++)
			ink += pixel(&im, x, y)[0] < 128;
	ck_assert_msg(ink > 50, "only %lld dark pixels above the panel", (long long)ink);
	free(im.rgb);
}
END_TEST

/* The most common colour's share of the panel. */
static double dominant_share(const struct image *im, int64_t x0, int64_t y0, int64_t side)
{
	int64_t best = 0;
	uint32_t *c = malloc((size_t)(side * side) * sizeof *c);
	for (int64_t y = 0; y < side; y++)
		for (int64_t x = 0; x < side; x++) {
			const uint8_t *px = pixel(im, x0 + x, y0 + y);
			c[y * side + x] = (uint32_t)px[0] << 16 | (uint32_t)px[1] << 8 | px[2];
		}
	for (int64_t q = 0; q < side * side; q++) {
		int64_t n = 0;
		if (q % 97)
			continue; /* a sample of the candidates is enough */
		for (int64_t r = 0; r < side * side; r++)
			n += c[r] == c[q];
		best = n > best ? n : best;
	}
	free(c);
	return (double)best / (double)(side * side);
}

/* A Toeplitz band with one entry 1e4 times the rest, like P[0,0] of a
 * trained model: min-max paints almost everything one colour, p1 does not. */
START_TEST(dominant_entry_does_not_flatten_the_picture)
{
	enum { K = 300 };
	static double m[K * K];
	const double *mats[] = {m};
	mk_heatmap_opts o = {0};
	mk_frame f = {0};
	struct image im;
	for (int i = 0; i < K; i++)
		for (int j = 0; j < K; j++)
			m[i * K + j] = cos(0.2 * (i - j)) * exp(-fabs((double)(i - j)) / 50.0);
	m[0] = 1e4;
	mk_frame_layout(&f, K, false, false);
	ck_assert_int_eq(mk_range_parse("minmax", &o.range), MK_OK);
	im = draw(mats, 1, K, 1, &o);
	ck_assert(dominant_share(&im, f.left, f.top, K) > 0.9);
	free(im.rgb);
	ck_assert_int_eq(mk_range_parse(MK_RANGE_DEFAULT, &o.range), MK_OK);
	im = draw(mats, 1, K, 1, &o);
	ck_assert_msg(dominant_share(&im, f.left, f.top, K) < 0.2, "share %g",
		      dominant_share(&im, f.left, f.top, K));
	free(im.rgb);
}
END_TEST

START_TEST(bad_range_in_options_refused)
{
	double m[4] = {0, 1, 2, 3};
	const double *mats[] = {m};
	mk_heatmap_opts o = {.range = {.kind = MK_RANGE_FIXED, .lo = 1, .hi = 1}};
	ck_assert_int_eq(mk_png_heatmaps(path("h.png"), mats, 1, 2, 2, 1, &o), MK_EINVAL);
	o.range = (mk_range){.kind = MK_RANGE_PERCENTILE, .pct = 50};
	ck_assert_int_eq(mk_png_heatmaps(path("h.png"), mats, 1, 2, 2, 1, &o), MK_EINVAL);
	ck_assert_int_eq(access(path("h.png"), F_OK), -1);
}
END_TEST

static Suite *heatmap_suite(void)
{
	Suite *s = suite_create("heatmap");
	TCase *tc = tcase_create("heatmap");
	tcase_add_checked_fixture(tc, scratch_setup, scratch_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, percentile_range_excludes_an_outlier);
	tcase_add_loop_test(tc, percentile_matches_a_sort, 0, 3);
	tcase_add_loop_test(tc, range_parses_good_values, 0,
			    sizeof good_ranges / sizeof good_ranges[0]);
	tcase_add_loop_test(tc, range_refuses_bad_values, 0,
			    sizeof bad_ranges / sizeof bad_ranges[0]);
	tcase_add_loop_test(tc, small_matrices_scaled_up, 0, 6);
	tcase_add_test(tc, font_draws_digits);
	tcase_add_test(tc, frame_has_bar_title_and_label);
	tcase_add_test(tc, dominant_entry_does_not_flatten_the_picture);
	tcase_add_test(tc, bad_range_in_options_refused);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return mk_test_main(heatmap_suite());
}
