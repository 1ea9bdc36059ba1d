# The Toeplitz profile of a matrix P: t(d), the mean of P along the diagonal
# d = j - i, drawn thick over some rows of P aligned on the diagonal (column
# row_i holds P[i][i+d], NaN outside the matrix), so that one sees how far
# each row departs from the profile.
#
# Set by maskkit before this script: datafile, output, title, panels (1),
# rows_per_panel and columns ('d t row_0 ...', the names of the data columns).

ncols = words(columns)

# enhanced text for the subscript of P_ij only: a title or a column name such
# as row_12 must not turn into subscripts
set terminal pngcairo enhanced size 960,600 font ',11'
set output output
set title title noenhanced
set xlabel 'offset d = j - i' noenhanced
set ylabel 'P_{ij}'
set key outside right top box opaque noenhanced
set autoscale xfix
set grid back lc rgb '#d0d0d0'
set border 3
set xtics nomirror out
set ytics nomirror out
set datafile missing NaN

# Rows in evenly spaced hues, half transparent so that where many agree the
# colour is denser; the alpha byte leads (0 opaque, 255 invisible).
row_colour(c) = 0x80000000 + hsv2rgb((c - 3.0) / (ncols > 3 ? ncols - 2 : 1), 0.75, 0.85)

if (ncols > 2) {
	plot for [c = 3:ncols] datafile using 1:c with lines lw 1.5 lc rgb row_colour(c) \
			title word(columns, c), \
	     datafile using 1:2 with lines lw 4 lc rgb 'black' title word(columns, 2)
} else {
	plot datafile using 1:2 with lines lw 4 lc rgb 'black' title word(columns, 2)
}
