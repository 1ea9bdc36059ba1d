# A TISA fit per attention head: for each head p (data block `index p`, with
# columns d, t and fit), the head's Toeplitz profile t(d) and the fitted
# TISA kernel function evaluated at the same offsets, one panel per head in a
# grid of layout_cols columns.
#
# Set by maskkit before this script: datafile, output, title, panels,
# rows_per_panel, columns ('d t fit') and, optionally, layout_cols.

if (!exists('layout_cols')) layout_cols = 4
ncols_grid = panels < layout_cols ? panels : layout_cols
nrows_grid = (panels + ncols_grid - 1) / ncols_grid

# each panel gets the same size, so the picture grows with the heads; the
# extra height holds the overall title
top_px = 60
height_px = 280 * nrows_grid + top_px
set terminal pngcairo noenhanced font ',10' size 360 * ncols_grid, height_px
set output output
set datafile missing NaN
set grid back lc rgb '#d0d0d0'
set border 3
set xtics nomirror out
set ytics nomirror out
set key top right font ',9' samplen 2
set autoscale xfix

# each panel's own margins (in characters) fit its tick labels whatever
# the size of the picture
set multiplot layout nrows_grid, ncols_grid title title font ',13'
do for [p = 0:panels - 1] {
	set title sprintf('head %d', p)
	# the axis label only under the panels with none below them
	if (p >= panels - ncols_grid) {
		set xlabel 'offset d = j - i'
	} else {
		unset xlabel
	}
	plot datafile index p using 1:2 with lines lw 2 lc rgb '#3b528b' \
			title word(columns, 2), \
	     datafile index p using 1:3 with lines lw 2 dt 2 lc rgb '#e05a00' \
			title word(columns, 3)
}
unset multiplot
