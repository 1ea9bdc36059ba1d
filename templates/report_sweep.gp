# maskkit report: a sweep's median time (left, log scale) and speed-up over
# dense attention (right) against the sparsity achieved, one line per series
# (pattern/kernel, and norm, backend, dtype and n when they vary).  Data
# block `index p` is series p: achieved sparsity (%), median time (ms),
# speed-up; NaN rows pad the shorter series.
#
# Set by maskkit before this script: datafile, output, title, panels (the
# series), rows_per_panel, columns, svg (1: SVG, else PNG), and
#   series      array: the series' names
#   pattern_of  array: each series' pattern number (its colour)
#   kernel_of   array: each series' kernel number (its dash and point)
#   dense_ms    dense attention's median times (ms), space-separated: it
#               ignores the mask, so it is a horizontal reference line;
#               empty when the sweep timed no dense kernel (gnuplot then
#               still evaluates the loop's expression once: hence NaN)

if (svg) {
	set terminal svg noenhanced size 1400,620 font ',10' background '#ffffff'
} else {
	set terminal pngcairo noenhanced size 1400,620 font ',10'
}
set output output
set datafile missing NaN
set multiplot layout 1, 2 title title font ',12'
colour(p) = hsv2rgb(p * 0.618034 - floor(p * 0.618034), 0.8, 0.75)
set grid back lc rgb '#d0d0d0'
set border 3
set xtics nomirror out
set ytics nomirror out
set xlabel 'achieved sparsity (%)'
set key top left font ',8' samplen 2
set logscale y
set format y '%g'
set ylabel 'median time (ms, log scale)'
plot for [p = 0:panels - 1] datafile index p using 1:2 with linespoints lw 1.5 \
	lc rgb colour(pattern_of[p + 1]) dt 1 + kernel_of[p + 1] pt 5 + kernel_of[p + 1] ps 0.8 \
	title series[p + 1], \
     for [k = 1:words(dense_ms)] (words(dense_ms) ? real(word(dense_ms, k)) : NaN) \
	with lines lw 2.5 lc rgb 'black' dt 1 title (k == 1 ? 'dense' : '')
unset logscale y
set ylabel 'speed-up over dense (x)'
set yrange [0:*]
plot for [p = 0:panels - 1] datafile index p using 1:3 with linespoints lw 1.5 \
	lc rgb colour(pattern_of[p + 1]) dt 1 + kernel_of[p + 1] pt 5 + kernel_of[p + 1] ps 0.8 \
	notitle, 1 with lines lw 2 lc rgb 'black' dt 2 title 'dense'
unset multiplot
