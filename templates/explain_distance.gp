# maskkit explain --toy distance --png: the centre distance c0 - c1 after one
# attention step on two 1-D clusters (N0 points at +a, N1 at -a) against
# r = N0 / N1 on a log scale, from the paper's closed forms, as in Fig. 7 of
# Ding et al.: a colour per a, UNAS solid, DNAS dashed.  DNAS keeps the
# clusters further apart (it does not let the big cluster absorb the small
# one); the two agree at r = 1.
#
# Set by maskkit before this script: datafile, output, title, panels (one
# per a), rows_per_panel (the ratios), columns ('r unas dnas'), and
#   a_values   the half distances, space-separated, in panel order

if (!exists('a_values')) a_values = ''
label(k) = words(a_values) >= k ? word(a_values, k) : sprintf('#%d', k)

set terminal pngcairo noenhanced size 900,600 font ',11'
set output output
set title title
set xlabel 'r = N0 / N1'
set ylabel 'c0 - c1 after one step'
set logscale x
set format x '%g'
set key outside right top box opaque
set grid back lc rgb '#d0d0d0'
set border 3
set xtics nomirror out
set ytics nomirror out
set yrange [0:*]
set datafile missing NaN

plot for [k = 1:panels] datafile index (k - 1) using 1:2 with lines lw 2 dt 1 lc k \
		title sprintf('UNAS a = %s', label(k)), \
	for [k = 1:panels] datafile index (k - 1) using 1:3 with lines lw 2 dt 2 lc k \
		title sprintf('DNAS a = %s', label(k))
