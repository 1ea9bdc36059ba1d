# maskkit sweep --png: median time against achieved sparsity, one line per
# (pattern, kernel[, norm]) series (data block `index p`, columns achieved
# (percent) and time (seconds)), coloured by pattern, dashed and marked by
# kernel; dense attention, which ignores the mask, as thick horizontal
# reference lines (one per normalisation).
#
# Set by maskkit before this script: datafile, output, title, panels (the
# number of series), rows_per_panel, columns ('achieved time'), and
#   series       the series' names, space-separated ('local/block ...')
#   per_pattern  series per pattern (kernels x norms)
#   dense_s      dense median times, space-separated, one per norm

if (!exists('per_pattern')) per_pattern = 1
if (!exists('dense_s')) dense_s = ''

set terminal pngcairo noenhanced size 1100,680 font ',10'
set output output
set title title font ',12'
set xlabel 'achieved sparsity (%)'
set ylabel 'median time (s, log scale)'
set logscale y
set format y '%g'
set grid back lc rgb '#d0d0d0'
set border 3
set xtics nomirror out
set ytics nomirror out
set key outside right top font ',9' samplen 3
set datafile missing NaN
set xrange [*:*]

pattern_colour(p) = hsv2rgb(((p / per_pattern) * 0.618034) - floor((p / per_pattern) * 0.618034), 0.8, 0.75)
kernel_of(p) = p % per_pattern

plot for [p = 0:panels - 1] datafile index p using 1:2 with linespoints lw 1.5 \
		lc rgb pattern_colour(p) dt 1 + kernel_of(p) pointsize 0.8 pointtype (kernel_of(p) + 5) \
		title word(series, p + 1), \
     for [k = 1:words(dense_s)] real(word(dense_s, k)) with lines lw 3 lc rgb 'black' \
		dt 1 + k title (words(dense_s) > 1 ? sprintf('dense (norm %d)', k) : 'dense')
