/*
 * Pictures (private to the library; the CLI and the report use them):
 * heatmap PNGs of matrices (plot_png.c) and gnuplot figures drawn from the
 * compiled-in templates (gnuplot.c, gnuplot_picture.c).
 */
#ifndef MK_PLOT_H
#define MK_PLOT_H

#include <stdio.h>
#include "maskkit.h"

/* Heatmaps of `count` k x k blocks (block c starts at mats[c], leading
 * dimension lda) in a grid `columns` panels wide with a 2-pixel gap, each
 * panel scaled from the minimum to the maximum of what it shows through
 * viridis: one pixel per entry up to max_px (0: 1024) per side, block means
 * beyond (NaN and Inf left out; grey where nothing finite).  Written
 * atomically.  The bare form of mk_png_heatmaps (plain, min-max). */
int mk_png_matrices(const char *path, const double *const *mats, int count, int64_t k,
		    int64_t lda, int columns, int64_t max_px);

/* The colour range of a heatmap (range.c): values below lo and above hi
 * take the end colours.  A zeroed mk_range is MK_RANGE_MINMAX. */
typedef enum mk_range_kind {
	MK_RANGE_MINMAX = 0, /* each panel's minimum to maximum */
	MK_RANGE_PERCENTILE, /* each panel's pct-th to (100 - pct)-th percentile */
	MK_RANGE_FIXED       /* lo to hi for every panel */
} mk_range_kind;
typedef struct mk_range {
	mk_range_kind kind;
	double pct;    /* MK_RANGE_PERCENTILE: in [0, 50) */
	double lo, hi; /* MK_RANGE_FIXED: lo < hi, finite */
} mk_range;
#define MK_RANGE_DEFAULT "p1"
/* "minmax", "pN" (0 <= N < 50, e.g. p1, p0.5) or "LO:HI" (e.g. -1:1,
 * 0:2e-3); MK_EINVAL with a one-line message otherwise. */
int mk_range_parse(const char *s, mk_range *out);
/* "colours p1-p99", "colours -1:1", "colours min-max": for titles. */
void mk_range_describe(const mk_range *r, char *buf, size_t size);
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

/* Heatmaps with a frame (mk_png_heatmaps): a title over the grid, each panel
 * with its label above it, position indices on its left and bottom axes and
 * a colour bar with values on its right.  Panels of k < MK_PIC_SMALL are
 * drawn floor(2 MK_PIC_SMALL / k) pixels an entry (nearest neighbour), so a
 * side of MK_PIC_SMALL + 1 to 2 MK_PIC_SMALL pixels; larger k as in
 * mk_png_matrices (one pixel an entry up to max_px, block means beyond). */
#define MK_PIC_SMALL 256
typedef struct mk_heatmap_opts {
	mk_range range;
	const char *title;          /* NULL: none */
	const char *const *labels;  /* one per panel ("head 3"), or NULL */
	int64_t max_px;             /* 0: 1024 */
	bool plain;                 /* no frame, no scaling up: the bare panels */
} mk_heatmap_opts;
int mk_png_heatmaps(const char *path, const double *const *mats, int count, int64_t k,
		    int64_t lda, int columns, const mk_heatmap_opts *o);

/* ---- the frame's pieces (font.c, plot_frame.c) ------------------------------ */

/* Pixels of an RGB picture (or of a band of it), 3 bytes each, row by row. */
typedef struct mk_canvas {
	uint8_t *rgb;
	int64_t w, h;
} mk_canvas;
/* Fills a rectangle, clipped to the canvas. */
void mk_canvas_fill(const mk_canvas *cv, int64_t x, int64_t y, int64_t w, int64_t h,
		    const uint8_t rgb[3]);
#define MK_FONT_W 5
#define MK_FONT_H 7
/* Glyph rows of c: 7 rows of 5 '#' or '.', each followed by a separator;
 * '?' for a byte without a glyph. */
const char *mk_font_glyph(char c);
/* Width in pixels of s drawn at scale (1 pixel between glyphs, none after). */
int64_t mk_font_width(const char *s, int scale);
/* Draws s with its top-left corner at (x, y), clipped to the canvas. */
void mk_font_draw(const mk_canvas *cv, int64_t x, int64_t y, int scale, const char *s,
		  const uint8_t ink[3]);

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

/* A rows x cols matrix (row-major) as a heatmap of square cells of 4 to 48
 * pixels (row 0 at the top), scaled from its minimum to its maximum through
 * viridis, NaN grey; at most 4096 cells a side.  Written atomically. */
int mk_png_heat(const char *path, const double *v, int64_t rows, int64_t cols);

/* A gnuplot figure: the template templates/NAME.gp is run by the gnuplot
 * program (MASKKIT_GNUPLOT, else "gnuplot" on PATH) after assignments of
 * datafile, output, title, panels, rows_per_panel, columns (its column
 * names, space-separated, as a string) and any extra assignments in vars.
 * The data table is written as whitespace-separated text, NaN as "NaN",
 * panels as blocks separated by two blank lines (gnuplot's `index`).
 * Templates are compiled in; MASKKIT_TEMPLATES=DIR reads DIR/NAME.gp instead.
 * The output is written atomically: a PNG, or an SVG when it is named .svg
 * (gnuplot then gets svg=1; the templates that draw SVG test it). */
typedef struct mk_plot {
	const char *template_name;
	const char *output;
	const char *title;
	const double *data;          /* rows x ncols, row-major */
	int64_t rows;
	int ncols;
	const char *const *col_names; /* ncols names */
	int panels;                   /* >= 1; rows split evenly */
	const char *vars;             /* extra gnuplot lines, or NULL */
} mk_plot;
int mk_plot_run(const mk_plot *p);

/* ---- gnuplot's internals (gnuplot.c, gnuplot_picture.c) -------------------- */

/* The body of a gnuplot single-quoted string (gnuplot.c): a quote doubled,
 * control characters as spaces. */
void mk_gp_quote(FILE *f, const char *s);
/* gnuplot's picture at png (gnuplot_picture.c): MK_OK for a device or a
 * whole PNG (an SVG when svg), else why not (a write failure, or a template
 * that set no such terminal). */
int mk_gp_check_picture(const char *png, bool svg, const char *template_name);
/* True when writing png failed for want of space or at a file size limit. */
bool mk_gp_write_failed(const char *png);
/* The status for a picture cut short, with the file system's reason. */
int mk_gp_cut_short(const char *png);

#endif
