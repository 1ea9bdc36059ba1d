# maskkit report: grouped bars, one group per row of the data (a pattern, a
# model), one bar per column (a series).
#
# Set by maskkit before this script: datafile, output, title, panels (1),
# rows_per_panel (the groups), columns (s0 s1 ...), svg (1: SVG, else PNG), and
#   labels   array: the groups' names (x axis)
#   series   array: the series' names (key)
#   ylabel   the y axis label
#   ref, ref_name (optional)  a horizontal line at ref, named in the key: a
#            number that holds for every group, drawn once, not as a bar
#            repeated in each

if (svg) {
	set terminal svg noenhanced size 1000,520 font ',11' background '#ffffff'
} else {
	set terminal pngcairo noenhanced size 1000,520 font ',11'
}
set output output
set title title font ',12'
set ylabel ylabel
set style fill solid 0.85 border -1
set grid ytics back lc rgb '#d0d0d0'
set border 3
set ytics nomirror out
set xtics nomirror rotate by -30 scale 0
set key outside bottom center horizontal
set datafile missing NaN
nseries = words(columns)
width = 0.8 / nseries
set boxwidth width
set xrange [-0.6:rows_per_panel - 0.4]
set yrange [0:*]
set xtics ()
do for [g = 1:rows_per_panel] {
	set xtics add (labels[g] g - 1)
}
colours = '#1f4e99 #d9822b #3a9a5b #b03a48 #7b5ea7'
if (exists('ref')) {
	plot for [s = 1:nseries] datafile using ($0 - 0.4 + width * (s - 0.5)):s with boxes \
		lc rgb word(colours, (s - 1) % 5 + 1) title series[s], \
	     ref with lines lw 2.5 dt 2 lc rgb '#202020' title ref_name
} else {
	plot for [s = 1:nseries] datafile using ($0 - 0.4 + width * (s - 0.5)):s with boxes \
		lc rgb word(colours, (s - 1) % 5 + 1) title series[s]
}
