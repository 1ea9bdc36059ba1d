# maskkit explain --png: the distribution of log10 column sums sum_i pi_ij
# over the keys (all heads together), one curve per normalisation, as in
# Ding et al.'s Fig. 1: softmax leaves a tail of keys that no query reads
# (explained away), the doubly-normalised schemes keep every column >= 1/S.
#
# Set by maskkit before this script: datafile, output, title, panels (1),
# rows_per_panel, columns ('log10_colsum norm1 norm2 ...': column 1 is the
# bin centre, the others each normalisation's fraction of keys in the bin),
# and
#   log_eps    log10 of eps (a dashed line: keys left of it are explained away)
#   log_bound  log10 of 1/S (Theorem 2's bound for dnas, a dotted line)

if (!exists('log_eps')) log_eps = -8
if (!exists('log_bound')) log_bound = NaN
ncols = words(columns)

set terminal pngcairo noenhanced size 960,600 font ',11'
set output output
set title title
set xlabel 'log10 of the column sum  sum_i pi_ij'
set ylabel 'fraction of keys'
set key outside right top box opaque
set grid back lc rgb '#d0d0d0'
set border 3
set xtics nomirror out
set ytics nomirror out
set yrange [0:*]
set style fill transparent solid 0.35 noborder
set datafile missing NaN

set arrow 1 from first log_eps, graph 0 to first log_eps, graph 1 nohead dt 2 lw 1.5 lc rgb '#b00000'
set label 1 sprintf(' eps = 1e%g', log_eps) at first log_eps, graph 0.96 left tc rgb '#b00000'
if (log_bound == log_bound) {
	set arrow 2 from first log_bound, graph 0 to first log_bound, graph 1 nohead dt 3 lw 1.5 lc rgb '#006000'
	set label 2 ' 1/S' at first log_bound, graph 0.90 left tc rgb '#006000'
}

plot for [c = 2:ncols] datafile using 1:c with fillsteps lc c - 1 title word(columns, c), \
     for [c = 2:ncols] datafile using 1:c with steps lw 2 lc c - 1 notitle
