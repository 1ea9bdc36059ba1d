/*
 * Heatmaps of real-valued matrices (attention weights, Gram matrices), one
 * panel per matrix in a grid, written with libpng as 8-bit palette images:
 * 241 levels of viridis and the frame's three colours (plot_internal.h).
 * A level is a third of an RGB picture's bytes and compresses far better on
 * noisy panels, while no eye tells neighbouring levels apart.
 *
 * A k x k panel is drawn one pixel per entry up to max_px; beyond, its side
 * is exactly max_px and pixel x covers entries [x k / side, (x+1) k / side),
 * so blocks differ by at most one entry when k is not a multiple.  Each pixel
 * shows the mean of its block.  Each panel is scaled from the minimum to the
 * maximum of what it shows (the block means), not of the raw entries: a
 * sharp diagonal averaged over a block would otherwise never reach the top
 * of the colour map and the picture would lose most of its contrast.
 *
 * NaN and infinite entries count as missing: they are left out of the means
 * and of the range, and a pixel with nothing but missing entries is grey.
 * A panel whose values are all equal is drawn at the middle of the map.
 * The colour range is the panel's minimum to maximum, its percentiles or
 * fixed values (mk_range, range.c).
 *
 * mk_png_heatmaps frames each panel (plot_frame.c) and draws small matrices
 * several pixels an entry: a panel of fewer entries than pixels repeats each
 * entry over a square (nearest neighbour), so the block of pixel y is entry
 * y k / side, never empty.
 *
 * A framed grid without max_px gets panels of at most 1024 / columns pixels
 * a side and 2^19 pixels in all (128 a side at least): the grid is then
 * about as wide as one big panel, which a screen shows whole, and a noisy
 * panel costs about a byte a pixel, so the file stays under 500 KB; 12
 * heads at 512 pixels each made a picture of 2876 x 1731 pixels and 6 MB.
 *
 * The picture is produced one band of panels at a time (a row of the grid,
 * frames included), so memory is one band of RGB plus one panel of means
 * (and its copy for the percentiles) whatever the count.
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <png.h>
#include "internal.h"
#include "plot_internal.h"
#include "png_quiet.h"

#define MK_PIC_DEFAULT_MAX_PX 1024
#define MK_PIC_GAP 2

#define MK_PIC_FRAMED_PX 1024 /* a framed grid's panels across, without max_px */
#define MK_PIC_FRAMED_AREA (1 << 19) /* and their pixels in all */
static const uint8_t mk_pic_missing[3] = {160, 160, 160}, mk_pic_white[3] = {255, 255, 255},
		     mk_pic_ink[3] = {30, 30, 30};
/* gaps and the empty cells of the last row are white */
#define MK_PIC_BACKGROUND MK_PAL_WHITE

struct mk_pic {
	const double *const *mats;
	int count;
	int64_t cols, rows;  /* of the grid */
	int64_t k, lda;
	int64_t side;        /* pixels per panel side */
	const mk_heatmap_opts *o;
	mk_frame fr;         /* all 0 when plain */
	int64_t gap;         /* between cells */
	int64_t cell_w, cell_h; /* a panel and its frame */
	int64_t band_h;      /* rows of the band: a cell's, or the title's */
	int64_t width, height;
	double *means;       /* one panel, side x side */
	double *scratch;     /* side x side for the percentiles, or NULL */
	double *ranged;      /* side x side: the means that set the range, or NULL */
	uint8_t *band;       /* band_h pixel rows of the picture, palette indices */
	char title[256];     /* the caller's, with the colour range */
	png_structp png;
	png_infop info;
	char msg[MK_PNG_MSG]; /* libpng's message when it fails */
};

/* The mean of the finite entries of m[i0..i1) x [j0..j1), NaN if none. */
static double mk_pic_block(const double *m, int64_t lda, int64_t i0, int64_t i1,
			   int64_t j0, int64_t j1)
{
	double sum = 0.0;
	int64_t n = 0;

	for (int64_t i = i0; i < i1; i++) {
		const double *row = m + i * lda;
		for (int64_t j = j0; j < j1; j++)
			if (isfinite(row[j])) {
				sum += row[j];
				n++;
			}
	}
	return n ? sum / (double)n : NAN;
}

static void mk_pic_means(const struct mk_pic *p, const double *m)
{
	int64_t s = p->side, k = p->k, lda = p->lda;

#pragma omp parallel for schedule(static)
	for (int64_t y = 0; y < s; y++) {
		int64_t i0 = y * k / s, i1 = (y + 1) * k / s;
		double *out = p->means + y * s;
		i1 = i1 > i0 ? i1 : i0 + 1; /* scaled up: one entry */
		for (int64_t x = 0; x < s; x++) {
			int64_t j0 = x * k / s, j1 = (x + 1) * k / s;
			out[x] = mk_pic_block(m, lda, i0, i1, j0, j1 > j0 ? j1 : j0 + 1);
		}
	}
}

uint8_t mk_pic_level(double t)
{
	/* NaN fails every comparison: test it first */
	if (isnan(t) || t <= 0.0)
		return 0;
	return t >= 1.0 ? MK_PIC_LEVELS : (uint8_t)lround(t * MK_PIC_LEVELS);
}

void mk_pic_palette(int q, uint8_t rgb[3])
{
	if (q <= MK_PIC_LEVELS)
		mk_colormap_viridis((double)q / MK_PIC_LEVELS, rgb);
	else
		memcpy(rgb, q == MK_PAL_MISSING ? mk_pic_missing : q == MK_PAL_WHITE ? mk_pic_white
										: mk_pic_ink, 3);
}

/* The means that set the colour range: all of them, or without the pixels
 * that show the first range_skip_cols columns (a sink column such as [CLS],
 * many times every other cell, would leave the rest one colour). */
static const double *mk_pic_ranged(const struct mk_pic *p)
{
	int64_t s = p->side, skip = p->o->range_skip_cols;

	if (!p->ranged)
		return p->means;
	for (int64_t y = 0; y < s; y++)
		for (int64_t x = 0; x < s; x++)
			p->ranged[y * s + x] = x * p->k / s < skip ? NAN : p->means[y * s + x];
	return p->ranged;
}

/* Draws the panel in p->means into the band with its top-left corner at
 * (x0, y0); *lo and *hi become its colour range. */
static void mk_pic_paint(const struct mk_pic *p, int64_t x0, int64_t y0, double *lo, double *hi)
{
	int64_t s = p->side;
	double scale;

	mk_range_apply(&p->o->range, mk_pic_ranged(p), s * s, p->scratch, lo, hi);
	/* A constant panel has no range to stretch: draw it at t = 0.5. */
	scale = *hi > *lo ? 1.0 / (*hi - *lo) : 0.0;
#pragma omp parallel for schedule(static)
	for (int64_t y = 0; y < s; y++) {
		uint8_t *px = p->band + (y0 + y) * p->width + x0;
		for (int64_t x = 0; x < s; x++) {
			double v = p->means[y * s + x];
			px[x] = isnan(v) ? MK_PAL_MISSING : mk_pic_level(scale > 0.0 ? (v - *lo) * scale
										 : 0.5);
		}
	}
}

/* The palette, written before the pixels. */
static void mk_pic_plte(png_structp png, png_infop info)
{
	png_color plte[MK_PAL_SIZE];

	for (int q = 0; q < MK_PAL_SIZE; q++) {
		uint8_t rgb[3];
		mk_pic_palette(q, rgb);
		plte[q] = (png_color){rgb[0], rgb[1], rgb[2]};
	}
	png_set_PLTE(png, info, plte, MK_PAL_SIZE);
}

/* Everything that may longjmp out; called under mk_pic_png's setjmp. */
static void mk_pic_stream(struct mk_pic *p, FILE *f)
{
	size_t band_bytes = (size_t)(p->band_h * p->width);
	mk_canvas cv = {.px = p->band, .w = p->width, .h = p->fr.title_h};

	mk_png_set_file(p->png, f);
	png_set_IHDR(p->png, p->info, (png_uint_32)p->width, (png_uint_32)p->height, 8,
		     PNG_COLOR_TYPE_PALETTE, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
		     PNG_FILTER_TYPE_DEFAULT);
	mk_pic_plte(p->png, p->info);
	png_set_compression_level(p->png, 9);
	png_set_filter(p->png, 0, PNG_ALL_FILTERS);
	png_write_info(p->png, p->info);
	if (p->fr.title_h) {
		memset(p->band, MK_PIC_BACKGROUND, band_bytes);
		mk_frame_title(&p->fr, &cv, p->title);
		for (int64_t y = 0; y < p->fr.title_h; y++)
			png_write_row(p->png, p->band + y * p->width);
	}
	cv.h = p->cell_h;
	for (int64_t r = 0; r < p->rows; r++) {
		memset(p->band, MK_PIC_BACKGROUND, band_bytes);
		for (int64_t c = 0; c < p->cols && r * p->cols + c < p->count; c++) {
			int64_t at = r * p->cols + c, x0 = c * (p->cell_w + p->gap) + p->fr.left;
			double lo, hi;
			mk_pic_means(p, p->mats[at]);
			mk_pic_paint(p, x0, p->fr.top, &lo, &hi);
			if (!p->o->plain)
				mk_frame_draw(&p->fr, &cv, x0, p->fr.top, p->side, p->k,
					      p->o->labels ? p->o->labels[at] : NULL, lo, hi);
		}
		for (int64_t y = 0; y < p->cell_h; y++)
			png_write_row(p->png, p->band + y * p->width);
		/* the gap between bands: background rows, drawn from the band's first */
		memset(p->band, MK_PIC_BACKGROUND, (size_t)p->width);
		for (int64_t y = 0; r < p->rows - 1 && y < p->gap; y++)
			png_write_row(p->png, p->band);
	}
	png_write_end(p->png, p->info);
}

/* Kept free of locals that change after setjmp, which longjmp could clobber. */
static int mk_pic_png(struct mk_pic *p, FILE *f)
{
	if (setjmp(png_jmpbuf(p->png)))
		return mk_png_fail(p->msg);
	mk_pic_stream(p, f);
	return MK_OK;
}

static int mk_pic_write(const char *tmp_path, void *arg)
{
	struct mk_pic *p = arg;
	FILE *f = fopen(tmp_path, "wb");
	int ret;

	if (!f)
		return mk_error_errno(errno, "cannot create '%s'", tmp_path);
	p->png = png_create_write_struct(PNG_LIBPNG_VER_STRING, p->msg, mk_png_quiet_error,
					  mk_png_quiet_warning);
	p->info = p->png ? png_create_info_struct(p->png) : NULL;
	if (p->png && p->info)
		ret = mk_pic_png(p, f);
	else
		ret = mk_error_set(MK_ENOMEM, "out of memory (libpng)");
	if (p->png)
		png_destroy_write_struct(&p->png, p->info ? &p->info : NULL);
	if (ret == MK_OK && (fflush(f) != 0 || ferror(f)))
		ret = mk_error_errno(errno, "write failed");
	if (fclose(f) != 0 && ret == MK_OK)
		ret = mk_error_errno(errno, "write failed");
	return ret;
}

static int mk_pic_check(const char *path, const double *const *mats, int count, int64_t k,
			int64_t lda, int columns, int64_t max_px)
{
	uint64_t span;
	int ret;

	if (!path || !mats)
		return mk_error_set(MK_EINVAL, "no %s given for the picture", path ? "matrices" : "path");
	if (count < 1)
		return mk_error_set(MK_EINVAL, "the number of panels must be positive, got %d", count);
	if (columns < 1)
		return mk_error_set(MK_EINVAL, "the number of columns must be positive, got %d",
				    columns);
	ret = mk_check_n(k, "the matrix side k");
	if (ret)
		return ret;
	if (lda < k)
		return mk_error_set(MK_EINVAL, "leading dimension %" PRId64 " is less than k = %" PRId64,
				    lda, k);
	if (mk_mul_u64((uint64_t)k, (uint64_t)lda, &span) || span > (uint64_t)INT64_MAX)
		return mk_error_set(MK_ERANGE, "a %" PRId64 " x %" PRId64 " matrix does not fit in memory",
				    k, lda);
	if (max_px < 0 || max_px > MK_N_MAX)
		return mk_error_set(MK_EINVAL, "PNG size limit %" PRId64 " is out of range (0 to %" PRId64
				    ")", max_px, MK_N_MAX);
	for (int c = 0; c < count; c++)
		if (!mats[c])
			return mk_error_set(MK_EINVAL, "matrix %d of the picture is missing", c);
	return MK_OK;
}

/* The panel's side in pixels: one per entry up to max_px, block means
 * beyond; framed panels of few entries an integer number of pixels each. */
static int64_t mk_pic_side(int64_t k, int64_t max_px, bool plain, int64_t cols, int count)
{
	int64_t up = 2 * MK_PIC_SMALL / k;

	if (max_px == 0 && !plain) {
		int64_t fit = (int64_t)floor(sqrt((double)MK_PIC_FRAMED_AREA / count));
		max_px = MK_PIC_FRAMED_PX / cols < fit ? MK_PIC_FRAMED_PX / cols : fit;
		max_px = max_px > MK_PIC_SMALL / 2 ? max_px : MK_PIC_SMALL / 2;
	}
	if (max_px == 0)
		max_px = MK_PIC_DEFAULT_MAX_PX;
	if (k > max_px)
		return max_px;
	if (plain || k >= MK_PIC_SMALL)
		return k;
	return k * (k * up <= max_px ? up : max_px / k);
}

/* Sizes of the picture, checked against PNG's limits and the memory cap. */
static int mk_pic_geometry(struct mk_pic *p, int columns)
{
	uint64_t band, means;

	p->cols = columns < p->count ? columns : p->count;
	p->side = mk_pic_side(p->k, p->o->max_px, p->o->plain, p->cols, p->count);
	p->rows = (p->count + p->cols - 1) / p->cols;
	if (!p->o->plain)
		mk_frame_layout(&p->fr, p->k, p->o->labels != NULL, p->o->title != NULL);
	p->gap = p->o->plain ? MK_PIC_GAP : 0;
	/* side <= 2^20, the frame a few hundred pixels and cols, rows < 2^31:
	 * these products fit in int64 */
	p->cell_w = p->fr.left + p->side + p->fr.right;
	p->cell_h = p->fr.top + p->side + p->fr.bottom;
	p->band_h = p->cell_h > p->fr.title_h ? p->cell_h : p->fr.title_h;
	p->width = p->cols * p->cell_w + (p->cols - 1) * p->gap;
	p->height = p->fr.title_h + p->rows * p->cell_h + (p->rows - 1) * p->gap;
	if (p->width > PNG_UINT_31_MAX || p->height > PNG_UINT_31_MAX)
		return mk_error_set(MK_ERANGE, "a %" PRId64 " x %" PRId64 " picture is too large for PNG",
				    p->width, p->height);
	if (mk_mul_u64((uint64_t)p->width, (uint64_t)p->band_h, &band))
		return MK_ERANGE;
	means = (uint64_t)p->side * (uint64_t)p->side * sizeof(double);
	means *= 1 + (p->o->range.kind == MK_RANGE_PERCENTILE) + (p->o->range_skip_cols > 0);
	if (band > UINT64_MAX - means)
		return mk_error_set(MK_ERANGE, "the picture's buffers overflow");
	return mk_check_memory(band + means, 0, "the picture");
}

static int mk_pic_check_range(const mk_range *r)
{
	if (r->kind == MK_RANGE_PERCENTILE && !(r->pct >= 0 && r->pct < 50))
		return mk_error_set(MK_EINVAL, "percentile %g of the colour range is outside [0, 50)",
				    r->pct);
	if (r->kind == MK_RANGE_FIXED && !(isfinite(r->lo) && isfinite(r->hi) && r->lo < r->hi))
		return mk_error_set(MK_EINVAL, "colour range %g:%g is not LO < HI", r->lo, r->hi);
	return MK_OK;
}

int mk_png_heatmaps(const char *path, const double *const *mats, int count, int64_t k,
		    int64_t lda, int columns, const mk_heatmap_opts *o)
{
	static const mk_heatmap_opts plain = {.plain = true};
	struct mk_pic p = {.mats = mats, .count = count, .k = k, .lda = lda, .o = o ? o : &plain};
	int ret;

	ret = mk_pic_check(path, mats, count, k, lda, columns, p.o->max_px);
	if (ret || (ret = mk_pic_check_range(&p.o->range)))
		return ret;
	if (p.o->range_skip_cols < 0 || p.o->range_skip_cols >= k)
		return mk_error_set(MK_EINVAL, "%" PRId64 " columns left out of the colour range of "
				    "%" PRId64 " x %" PRId64 " panels: 0 to %" PRId64 " can be",
				    p.o->range_skip_cols, k, k, k - 1);
	ret = mk_pic_geometry(&p, columns);
	if (ret)
		return ret;
	if (p.o->title) {
		char range[64];
		/* the reader must know that colours may be clipped */
		mk_range_describe(&p.o->range, range, sizeof range);
		if (p.o->range_skip_cols == 1)
			snprintf(p.title, sizeof p.title, "%s   (%s without column 0)", p.o->title, range);
		else if (p.o->range_skip_cols > 1)
			snprintf(p.title, sizeof p.title, "%s   (%s without columns 0-%" PRId64 ")",
				 p.o->title, range, p.o->range_skip_cols - 1);
		else
			snprintf(p.title, sizeof p.title, "%s   (%s)", p.o->title, range);
	}
	p.means = malloc((size_t)(p.side * p.side) * sizeof *p.means);
	p.band = malloc((size_t)(p.band_h * p.width));
	if (p.o->range.kind == MK_RANGE_PERCENTILE)
		p.scratch = malloc((size_t)(p.side * p.side) * sizeof *p.scratch);
	if (p.o->range_skip_cols > 0)
		p.ranged = malloc((size_t)(p.side * p.side) * sizeof *p.ranged);
	if (!p.means || !p.band || (p.o->range.kind == MK_RANGE_PERCENTILE && !p.scratch) ||
	    (p.o->range_skip_cols > 0 && !p.ranged)) {
		ret = mk_error_set(MK_ENOMEM, "out of memory");
		goto out;
	}
	ret = mk_io_atomic(path, mk_pic_write, &p);
out:
	free(p.means);
	free(p.scratch);
	free(p.ranged);
	free(p.band);
	return ret;
}

int mk_png_matrices(const char *path, const double *const *mats, int count, int64_t k,
		    int64_t lda, int columns, int64_t max_px)
{
	mk_heatmap_opts o = {.max_px = max_px, .plain = true};

	return mk_png_heatmaps(path, mats, count, k, lda, columns, &o);
}

/* ---- one small matrix as a grid of square cells ---------------------------- */

struct mk_grid {
	const double *v;
	int64_t rows, cols, cell;
	double lo, scale;
	uint8_t *line;
	png_structp png;
	png_infop info;
	char msg[MK_PNG_MSG];
};

static void mk_grid_stream(struct mk_grid *g, FILE *f)
{
	int64_t w = g->cols * g->cell;

	mk_png_set_file(g->png, f);
	png_set_IHDR(g->png, g->info, (png_uint_32)w, (png_uint_32)(g->rows * g->cell), 8,
		     PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
		     PNG_FILTER_TYPE_DEFAULT);
	png_write_info(g->png, g->info);
	for (int64_t r = 0; r < g->rows; r++) {
		for (int64_t x = 0; x < w; x++) {
			double v = g->v[r * g->cols + x / g->cell];
			if (!isfinite(v))
				memcpy(g->line + 3 * x, mk_pic_missing, 3);
			else
				mk_colormap_viridis(g->scale > 0 ? (v - g->lo) * g->scale : 0.5,
						    g->line + 3 * x);
		}
		for (int64_t y = 0; y < g->cell; y++)
			png_write_row(g->png, g->line);
	}
	png_write_end(g->png, g->info);
}

static int mk_grid_png(struct mk_grid *g, FILE *f)
{
	if (setjmp(png_jmpbuf(g->png)))
		return mk_png_fail(g->msg);
	mk_grid_stream(g, f);
	return MK_OK;
}

static int mk_grid_write(const char *tmp_path, void *arg)
{
	struct mk_grid *g = arg;
	FILE *f = fopen(tmp_path, "wb");
	int ret;

	if (!f)
		return mk_error_errno(errno, "cannot create '%s'", tmp_path);
	g->png = png_create_write_struct(PNG_LIBPNG_VER_STRING, g->msg, mk_png_quiet_error,
					  mk_png_quiet_warning);
	g->info = g->png ? png_create_info_struct(g->png) : NULL;
	ret = g->png && g->info ? mk_grid_png(g, f) : mk_error_set(MK_ENOMEM, "out of memory");
	if (g->png)
		png_destroy_write_struct(&g->png, g->info ? &g->info : NULL);
	if (ret == MK_OK && (fflush(f) != 0 || ferror(f)))
		ret = mk_error_errno(errno, "write failed");
	if (fclose(f) != 0 && ret == MK_OK)
		ret = mk_error_errno(errno, "write failed");
	return ret;
}

int mk_png_heat(const char *path, const double *v, int64_t rows, int64_t cols)
{
	struct mk_grid g = {.v = v, .rows = rows, .cols = cols, .lo = INFINITY};
	double hi = -INFINITY;
	int64_t big = rows > cols ? rows : cols;
	int ret;

	if (rows < 1 || cols < 1 || rows > 4096 || cols > 4096)
		return mk_error_set(MK_EINVAL, "a heatmap of %" PRId64 " x %" PRId64 " cells is outside "
				    "1..4096 per side", rows, cols);
	g.cell = big >= 160 ? 4 : 640 / big > 48 ? 48 : 640 / big;
	for (int64_t k = 0; k < rows * cols; k++)
		if (isfinite(v[k])) {
			g.lo = v[k] < g.lo ? v[k] : g.lo;
			hi = v[k] > hi ? v[k] : hi;
		}
	g.scale = hi > g.lo ? 1.0 / (hi - g.lo) : 0.0;
	if (!(g.line = malloc((size_t)(3 * cols * g.cell))))
		return mk_error_set(MK_ENOMEM, "out of memory");
	ret = mk_io_atomic(path, mk_grid_write, &g);
	free(g.line);
	return ret;
}
