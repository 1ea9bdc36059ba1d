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
 * atomically. */
int mk_png_matrices(const char *path, const double *const *mats, int count, int64_t k,
		    int64_t lda, int columns, int64_t max_px);

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
