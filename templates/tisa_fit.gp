# A TISA fit per attention head: for each head p (data block `index p`, with
# columns d, t and fit), the head's Toeplitz profile t(d) and the fitted
# TISA kernel function evaluated at the same offsets, one panel per head in a
# grid of layout_cols columns.
#
# Set by maskkit before this script: datafile, output, title, panels,
# rows_per_panel, columns ('d t fit') and, optionally, layout_cols.
#
# The y axis: t(d) is the mean of F_P over the n - |d| cells of diagonal d,
# so near the corners it is the mean of a handful of cells, or of one, and
# as noisy.  Each panel's axis spans the profile over the offsets of at
# least n/32 cells (|d| <= n - 1 - n/32), not the few corner offsets, whose
# single-cell spikes set the axis to -1..3 around a curve within +-0.5;
# a value beyond the axis is drawn as a triangle on its edge.

if (!exists('layout_cols')) layout_cols = 4
ncols_grid = panels < layout_cols ? panels : layout_cols
nrows_grid = (panels + ncols_grid - 1) / ncols_grid
n_pos = (rows_per_panel + 1) / 2
support = n_pos - 1 - n_pos / 32

# each panel gets the same size, so the picture grows with the heads; the
# extra height holds the overall title and the legend under the grid
top_px = 60
key_px = 30
height_px = 280 * nrows_grid + top_px + key_px
set terminal pngcairo noenhanced font ',10' size 360 * ncols_grid, height_px
set output output
set datafile missing NaN
set grid back lc rgb '#d0d0d0'
set border 3
set xtics nomirror out
set ytics nomirror out
set autoscale xfix
set offsets 0, 0, graph 0.05, graph 0.05
# one legend for every panel, under the grid: it covers no data
set key at screen 0.5, screen 0.005 center bottom vertical maxrows 1 font ',10' samplen 3 \
	width 2

# each panel's own margins (in characters) fit its tick labels whatever
# the size of the picture
set multiplot layout nrows_grid, ncols_grid title title font ',13' \
	margins screen 0.06, 0.98, screen (key_px + 45.0) / height_px, \
	screen 1 - (top_px + 10.0) / height_px spacing screen 0.05, screen 75.0 / height_px
do for [p = 0:panels - 1] {
	# stats keeps to the current range: the last panel's would cut this one's
	set autoscale y
	stats datafile index p using (abs($1) <= support ? $2 : NaN) nooutput
	lo = STATS_min
	hi = STATS_max
	if (hi <= lo) { hi = lo + 1; lo = lo - 1 }
	pad = 0.05 * (hi - lo)
	set yrange [lo - pad:hi + pad]
	set title sprintf('head %d', p)
	# the axis labels only left of and under the panels with none there
	if (p % ncols_grid == 0) {
		set ylabel 'mean of F_P on diagonal d'
	} else {
		unset ylabel
	}
	if (p >= panels - ncols_grid) {
		set xlabel 'offset d = j - i'
	} else {
		unset xlabel
	}
	plot datafile index p using 1:2 with lines lw 2 lc rgb '#3b528b' \
			title (p ? '' : 'profile t(d): mean of F_P[i, i+d]'), \
	     datafile index p using 1:3 with lines lw 2 dt 2 lc rgb '#e05a00' \
			title (p ? '' : 'TISA fit'), \
	     datafile index p using 1:($2 > hi + pad ? hi + pad : NaN) with points pt 9 ps 1.2 \
			lc rgb '#c0392b' title (p ? '' : 'beyond the axis (a corner offset: few cells)'), \
	     datafile index p using 1:($2 < lo - pad ? lo - pad : NaN) with points pt 11 ps 1.2 \
			lc rgb '#c0392b' notitle
}
unset multiplot
