# The sweep figure, for `maskkit sweep --png` and `maskkit report` alike:
# the median time of each kernel (left, log scale, bars from the first to
# the third quartile of its runs) and its speed-up over dense attention
# (right, bars: the 95% interval of the paired speed-up), against the
# sparsity achieved.  One line per series (pattern and kernel, with norm,
# backend, dtype and n when they vary): its colour is the pattern's, its
# dash and point the kernel's, the same in every figure (masked, block,
# csr).  The legend, right of the data, names the colours and the styles.
#
# Data block `index p` is series p: achieved (%), median, q1, q3 (ms),
# speed-up, its interval's low and high ends; NaN where unknown (a CSV from
# before the intervals: no bar then) and NaN rows pad the shorter series.
#
# Set by maskkit before this script: datafile, output, title, panels (the
# series), rows_per_panel, columns, svg (1: SVG) when the output is .svg, and
#   npatterns, patterns  the patterns (array): colour k is patterns[k]'s
#   kernels              the kernel names by number (words: word k + 1)
#   kernels_shown        the kernel numbers of the series (words)
#   pattern_of           array: each series' pattern number (from 1)
#   kernel_of            array: each series' kernel number (0 dense, 1 masked,
#                        2 block, 3 csr)
#   dense_ms             dense attention's baselines (ms, words; empty: none):
#                        it ignores the mask, so a horizontal line each
#   dense_names          what each baseline is for when there are several

if (!exists('svg')) svg = 0
if (svg) {
	set terminal svg noenhanced size 1400,640 font ',11' background '#ffffff'
} else {
	set terminal pngcairo noenhanced size 1400,640 font ',11'
}
set output output
set datafile missing NaN
colour(p) = hsv2rgb(p * 0.618034 - floor(p * 0.618034), 0.75, 0.72)
kdash(k) = k == 1 ? 1 : k == 2 ? 2 : k == 3 ? 4 : 1
kpoint(k) = k == 1 ? 7 : k == 2 ? 5 : k == 3 ? 9 : 1
kname(k) = word(kernels, k + 1)
set grid back lc rgb '#d8d8d8'
set border 3
set xtics nomirror out
set ytics nomirror out
set xlabel 'achieved sparsity (%)'
set offsets graph 0.02, graph 0.02, 0, 0

# the legend's entries are NaN series: one per pattern (its colour), one per
# kernel (its dash and point), dense; the data lines carry no title
set multiplot title title font ',13'
set tmargin at screen 0.90
set bmargin at screen 0.12
unset key
set lmargin at screen 0.06
set rmargin at screen 0.43
set logscale y
set format y '%g'
set ylabel 'median time per run (ms, log scale; bars: quartiles)'
set yrange [*:*]
plot for [p = 0:panels - 1] datafile index p \
	using 1:2:(valid(3) ? $3 : $2):(valid(4) ? $4 : $2) with yerrorlines lw 1.5 \
	lc rgb colour(pattern_of[p + 1]) dt kdash(kernel_of[p + 1]) \
	pt kpoint(kernel_of[p + 1]) ps 0.8 notitle, \
     for [k = 1:words(dense_ms) + (words(dense_ms) ? 0 : 1)] \
	(words(dense_ms) ? real(word(dense_ms, k)) : NaN) with lines lw 2.5 lc rgb 'black' \
	dt k notitle
unset logscale y
# the legend starts right of the data and runs rightwards (sample, then its
# name), so that a long list or long names never cover a point
set key at screen 0.805, screen 0.90 left top vertical Left reverse font ',10' samplen 3 \
	spacing 1.1 title 'pattern, kernel' left
set lmargin at screen 0.49
set rmargin at screen 0.79
set ylabel 'speed-up over dense (x; bars: 95% interval)'
set yrange [0:*]
plot for [p = 0:panels - 1] datafile index p \
	using 1:5:(valid(6) ? $6 : $5):(valid(7) ? $7 : $5) with yerrorlines lw 1.5 \
	lc rgb colour(pattern_of[p + 1]) dt kdash(kernel_of[p + 1]) \
	pt kpoint(kernel_of[p + 1]) ps 0.8 notitle, \
     1 with lines lw 2 lc rgb 'black' dt 2 notitle, \
     for [c = 1:npatterns] NaN with lines lw 6 lc rgb colour(c) title patterns[c], \
     for [i = 1:words(kernels_shown)] NaN with linespoints lw 1.5 lc rgb '#404040' \
	dt kdash(int(word(kernels_shown, i))) pt kpoint(int(word(kernels_shown, i))) \
	title kname(int(word(kernels_shown, i))), \
     NaN with lines lw 2.5 lc rgb 'black' \
	title (words(dense_ms) > 1 ? 'dense: '.dense_names : 'dense (its time; 1x)')
unset multiplot
