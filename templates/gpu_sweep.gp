# bench/gpu_sweep.sh: maskkit's cuda kernels and PyTorch's peers in one
# figure: median time against achieved sparsity, a line per (pattern,
# source/kernel) series (data block `index p`, columns achieved (percent) and
# time (seconds)), coloured by pattern, dashed and marked by kernel; the dense
# references (maskkit's dense kernel, SDPA flash) as thick horizontal lines.
# Run by the script, not by maskkit (not compiled in).  Set before it:
# datafile, output, title, panels, and
#   series       the series' names, space-separated ('local/block local/flex ...')
#   per_pattern  series per pattern
#   dense_s      dense median times, space-separated
#   dense_names  their names ('maskkit-dense sdpa-flash')

if (!exists('per_pattern')) per_pattern = 1
if (!exists('dense_s')) dense_s = ''
if (!exists('dense_names')) dense_names = ''

set terminal pngcairo noenhanced size 1200,720 font ',10'
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

pattern_colour(p) = hsv2rgb(((p / per_pattern) * 0.618034) - floor((p / per_pattern) * 0.618034), 0.8, 0.75)
kernel_of(p) = p % per_pattern

plot for [p = 0:panels - 1] datafile index p using 1:2 with linespoints lw 1.5 \
		lc rgb pattern_colour(p) dt 1 + kernel_of(p) pointsize 0.8 pointtype (kernel_of(p) + 5) \
		title word(series, p + 1), \
     for [k = 1:words(dense_s)] real(word(dense_s, k)) with lines lw 3 lc rgb (k == 1 ? 'black' : '#777777') \
		dt 1 + k title word(dense_names, k)
