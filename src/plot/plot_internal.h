/*
 * The pictures' insides, private to src/plot (and its unit tests): the bare
 * heatmap grid, colour ranges applied, the frame's font and layout, and
 * gnuplot's checks.  What the program and other callers use is public:
 * include/maskkit/plot.h.
 */
#ifndef MK_PLOT_INTERNAL_H
#define MK_PLOT_INTERNAL_H

#include <stdio.h>
#include "plot.h"

/* Heatmaps of `count` k x k blocks (block c starts at mats[c], leading
 * dimension lda) in a grid `columns` panels wide with a 2-pixel gap, each
 * panel scaled from the minimum to the maximum of what it shows through
 * viridis: one pixel per entry up to max_px (0: 1024) per side, block means
 * beyond (NaN and Inf left out; grey where nothing finite).  Written
 * atomically.  The bare form of mk_png_heatmaps (plain, min-max). */
int mk_png_matrices(const char *path, const double *const *mats, int count, int64_t k,
		    int64_t lda, int columns, int64_t max_px);

/* The range of the finite values of v[0..n) under r (NULL: min-max) into
 * lo, hi (NaN when none is finite); scratch holds n doubles (reordered),
 * NULL for min-max only.  A percentile range of width 0 falls back to
 * min-max, so a matrix of zeros with a few ones still shows them. */
void mk_range_apply(const mk_range *r, const double *v, int64_t n, double *scratch,
		    double *lo, double *hi);
/* The pct-th percentile of v[0..n) (n >= 1, finite), interpolated linearly
 * between order statistics as numpy.percentile; v is reordered.  Expected
 * O(n): selection, no sort. */
double mk_percentile(double *v, int64_t n, double pct);


/* ---- the frame's pieces (font.c, plot_frame.c) ------------------------------ */

/* The heatmaps' palette (plot_png.c): MK_PIC_LEVELS + 1 levels of viridis,
 * index q showing t = q / MK_PIC_LEVELS, then grey for missing values,
 * white and the ink of text and frames.  240 steps put every multiple of
 * 1/10, 1/8, 1/6 and 1/5 on a level exactly, and neighbouring levels differ
 * by at most 3 of 255 in any of R, G and B.  One byte a pixel instead of
 * three is what keeps a grid of noisy panels under 500 KB. */
#define MK_PIC_LEVELS 240
enum { MK_PAL_MISSING = MK_PIC_LEVELS + 1, MK_PAL_WHITE, MK_PAL_INK, MK_PAL_SIZE };
/* The level of t in [0, 1] (clamped; NaN is 0). */
uint8_t mk_pic_level(double t);
/* The colour of palette entry q. */
void mk_pic_palette(int q, uint8_t rgb[3]);

/* Pixels of a picture (or of a band of it) as palette indices, row by row. */
typedef struct mk_canvas {
	uint8_t *px;
	int64_t w, h;
} mk_canvas;
/* Fills a rectangle, clipped to the canvas. */
void mk_canvas_fill(const mk_canvas *cv, int64_t x, int64_t y, int64_t w, int64_t h,
		    uint8_t colour);
#define MK_FONT_W 5
#define MK_FONT_H 7
/* Glyph rows of c: 7 rows of 5 '#' or '.', each followed by a separator;
 * '?' for a byte without a glyph. */
const char *mk_font_glyph(char c);
/* Width in pixels of s drawn at scale (1 pixel between glyphs, none after). */
int64_t mk_font_width(const char *s, int scale);
/* Draws s with its top-left corner at (x, y), clipped to the canvas. */
void mk_font_draw(const mk_canvas *cv, int64_t x, int64_t y, int scale, const char *s,
		  uint8_t ink);

/* The frame around each panel of side pixels showing k entries, in pixels. */
typedef struct mk_frame {
	int text;                         /* the font's scale */
	int64_t left, top, right, bottom; /* around a panel */
	int64_t title_h;                  /* above the grid */
} mk_frame;
void mk_frame_layout(mk_frame *f, int64_t k, bool labels, bool title);
/* Draws panel decorations into cv for a panel whose top-left pixel is at
 * (x, y): its label above, axis ticks for entries 0..k-1, and the colour bar
 * for lo..hi (NaN: none) on its right. */
void mk_frame_draw(const mk_frame *f, const mk_canvas *cv, int64_t x, int64_t y, int64_t side,
		   int64_t k, const char *label, double lo, double hi);
/* The title, centred in cv's first f->title_h rows (smaller when too long). */
void mk_frame_title(const mk_frame *f, const mk_canvas *cv, const char *title);
/* A tick value as short text ("0.25", "-3", "1.2e-05"): at most 9 bytes. */
void mk_frame_number(double v, double step, char buf[16]);



/* ---- gnuplot's internals (gnuplot.c, gnuplot_picture.c) -------------------- */

/* gnuplot's picture at png (gnuplot_picture.c): MK_OK for a device or a
 * whole PNG (an SVG when svg), else why not (a write failure, or a template
 * that set no such terminal). */
int mk_gp_check_picture(const char *png, bool svg, const char *template_name);
/* True when writing png failed for want of space or at a file size limit. */
bool mk_gp_write_failed(const char *png);
/* The status for a picture cut short, with the file system's reason. */
int mk_gp_cut_short(const char *png);

#endif
