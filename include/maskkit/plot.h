/*
 * maskkit plot: pictures.  Heatmap PNGs of matrices drawn by the library
 * itself (libpng), with a frame, labels and a colour bar, and figures drawn
 * by gnuplot (the program, found at run time) from the templates compiled
 * into the library.  Every picture is written atomically.
 */
#ifndef MK_PLOT_H
#define MK_PLOT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

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

/* Heatmaps with a frame (mk_png_heatmaps): a title over the grid, each panel
 * with its label above it, position indices on its left and bottom axes and
 * a colour bar with values on its right.  Panels of k < MK_PIC_SMALL are
 * drawn floor(2 MK_PIC_SMALL / k) pixels an entry (nearest neighbour), so a
 * side of MK_PIC_SMALL + 1 to 2 MK_PIC_SMALL pixels; larger k as in
 * mk_png_matrices (one pixel an entry up to max_px, block means beyond).
 * Without max_px a side is at most 1024 / columns pixels and the panels
 * 2^19 pixels in all (a side of 128 at least), which keeps a grid of noisy
 * panels under 500 KB.  The PNG is a palette image: 241 levels of viridis. */
#define MK_PIC_SMALL 256
typedef struct mk_heatmap_opts {
	mk_range range;
	const char *title;          /* NULL: none */
	const char *const *labels;  /* one per panel ("head 3"), or NULL */
	int64_t max_px;             /* 0: 1024 (framed: see above) */
	bool plain;                 /* no frame, no scaling up: the bare panels */
	/* the first columns do not set the colour range (drawn all the same, in
	 * the end colour when above it): a sink column such as [CLS] holds many
	 * times any other cell's attention and would leave the rest one colour.
	 * 0 to k - 1; the title says so. */
	int64_t range_skip_cols;
} mk_heatmap_opts;
int mk_png_heatmaps(const char *path, const double *const *mats, int count, int64_t k,
		    int64_t lda, int columns, const mk_heatmap_opts *o);

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

/* The body of a gnuplot single-quoted string (gnuplot.c): a quote doubled,
 * control characters as spaces. */
void mk_gp_quote(FILE *f, const char *s);

/* templates/NAME as maskkit uses it: MASKKIT_TEMPLATES/FILE when that
 * variable names a folder, else the copy compiled into the library; FILE
 * is NAME.gp for a gnuplot template named without an extension ("sweep"),
 * NAME itself otherwise ("report.md").  *text is malloc'd. */
int mk_template_read(const char *name, char **text);

#ifdef __cplusplus
}
#endif
#endif /* MK_PLOT_H */
