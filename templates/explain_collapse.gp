# maskkit explain --toy collapse --png: the points after each attention step,
# UNAS on the top row and DNAS on the bottom, one panel per step from the
# start (step 0) on, as in Fig. 6 of Ding et al.; the big cloud's points in
# blue, the small cloud's in red, every panel on the same axes.
#
# Set by maskkit before this script: datafile, output, title, panels
# (2 x (steps + 1): UNAS's steps 0..steps, then DNAS's), rows_per_panel
# (the points, 550), columns ('x y mode'; mode 0 big cloud, 1 small), and
#   steps           the last step shown
#   unas_clusters   the clusters after each step, space-separated ('550 47 ...')
#   dnas_clusters   the same for DNAS

if (!exists('steps')) steps = panels / 2 - 1
if (!exists('unas_clusters')) unas_clusters = ''
if (!exists('dnas_clusters')) dnas_clusters = ''
ncols = steps + 1

stats datafile using 1:2 nooutput
pad = 0.05 * ((STATS_max_x - STATS_min_x) > (STATS_max_y - STATS_min_y) ? \
	(STATS_max_x - STATS_min_x) : (STATS_max_y - STATS_min_y)) + 1e-3
set xrange [STATS_min_x - pad : STATS_max_x + pad]
set yrange [STATS_min_y - pad : STATS_max_y + pad]

set terminal pngcairo noenhanced size (ncols < 2 ? 2 : ncols) * 260, 600 font ',9'
set output output
set multiplot layout 2, ncols title title font ',11'
unset key
set size ratio -1
set tics out nomirror scale 0.5
set border 3
set format x '%g'
set format y '%g'
colour(m) = m > 0.5 ? 0xd62728 : 0x1f77b4
clusters(list, t) = words(list) > t ? word(list, t + 1) : '?'

do for [s = 0:1] {
	do for [t = 0:steps] {
		set title sprintf('%s step %d: %s cluster(s)', s ? 'DNAS' : 'UNAS', t, \
			clusters(s ? dnas_clusters : unas_clusters, t))
		plot datafile index s * ncols + t using 1:2:(colour($3)) \
			with points pointtype 7 pointsize 0.35 lc rgb variable
	}
}
unset multiplot
