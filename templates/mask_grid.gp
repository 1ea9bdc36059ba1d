# maskkit report: a grid of mask heatmaps, one panel per mask, each titled
# (with its sparsity).  Data block `index p` is mask p as an n x n matrix
# of 0/1 (row i = query, top; column j = key), read with `matrix`.
#
# Set by maskkit before this script: datafile, output, title, panels (the
# masks), rows_per_panel (n), columns, svg (1: write SVG, else PNG), and
#   layout_cols  panels per row
#   titles       array: the panels' titles

if (!exists('layout_cols')) layout_cols = 3
grid_rows = int(ceil(panels * 1.0 / layout_cols))
panel_px = 300
if (svg) {
	set terminal svg noenhanced size layout_cols * panel_px, grid_rows * panel_px + 40 font ',11' background '#ffffff'
} else {
	set terminal pngcairo noenhanced size layout_cols * panel_px, grid_rows * panel_px + 40 font ',11'
}
set output output
set multiplot layout grid_rows, layout_cols title title font ',13'
unset colorbox
unset key
set palette defined (0 '#f3f3f3', 1 '#1f4e99')
set cbrange [0:1]
set xrange [-0.5:rows_per_panel - 0.5]
set yrange [rows_per_panel - 0.5:-0.5]
set size ratio 1
set tics scale 0
set format x ''
set format y ''
set xtics -0.5, 1
set ytics -0.5, 1
set grid xtics ytics front lc rgb '#ffffff' lw 0.6 dt 1
set border lw 0.5 lc rgb '#808080'
set lmargin 1
set rmargin 1
do for [p = 0:panels - 1] {
	set title titles[p + 1] font ',11'
	plot datafile index p matrix with image
}
unset multiplot
