# maskkit attn-stats --png: the mean attention P[i][i+k] by offset k = j - i,
# one line per layer (each the mean over its heads), over the offsets
# -max_offset..max_offset; the diagonal is k = 0.  SparseBERT reads this
# profile to argue that the diagonal is the least needed part of a mask.
#
# Set by maskkit before this script: datafile, output, title, panels (1),
# rows_per_panel, columns ('offset layer_0 layer_1 ...'), and
#   logy   1 for a logarithmic y axis (every value shown is > 0), else 0

if (!exists('logy')) logy = 0
ncols = words(columns)

set terminal pngcairo noenhanced size 960,600 font ',11'
set output output
set title title
set xlabel 'offset k = j - i'
set ylabel (logy ? 'mean attention (log scale)' : 'mean attention')
if (logy) { set logscale y; set format y '%g' }
set key outside right top box opaque
set autoscale xfix
set grid back lc rgb '#d0d0d0'
set border 3
set xtics nomirror out
set ytics nomirror out
set datafile missing NaN

# Layers from blue (first) to red (last), so depth reads as a colour ramp.
layer_colour(c) = hsv2rgb(0.66 * (1.0 - (c - 2.0) / (ncols > 2 ? ncols - 2 : 1)), 0.8, 0.8)

plot for [c = 2:ncols] datafile using 1:c with linespoints lw 1.5 pointsize 0.5 \
		pointtype 7 lc rgb layer_colour(c) title word(columns, c)
