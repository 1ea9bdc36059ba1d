# maskkit heads --png: what each head does, as a layers x heads grid.  Each
# cell is one head, coloured by its role and labelled with the role's short
# name and the number that gave it (prev, next, band: their mass; sink:
# [CLS] + [SEP]; broad: the normalised entropy; mixed: none).
#
# Set by maskkit before this script: datafile, output, title, panels (1),
# rows_per_panel, columns ('layer head role score'), and
#   layers, heads   the grid's size
#   width, height   the picture's size in pixels
#   role_names      the roles' names, space-separated, in role order (0..5)
#   role_short      their short names, likewise
#   font_size       the cells' label size in points
# Rows with layer < 0 are not drawn: one per role, so every role is in the
# legend even when no head has it.

set terminal pngcairo noenhanced size width,height font ',12'
set output output
set title title font ',13'
set xlabel 'head'
set ylabel 'layer'
set xrange [-0.5:heads - 0.5]
set yrange [layers - 0.5:-0.5]
set xtics 0,1,heads - 1 out nomirror scale 0
set ytics 0,1,layers - 1 out nomirror scale 0
set border 0
set key outside right top vertical Left reverse noautotitle title 'role' samplen 2
set style fill solid 1.0 border rgb '#ffffff'
set datafile missing NaN
unset grid

colours = '#6f9bd8 #b7d4ef #8fcf9f #f2b278 #d9d9d9 #c7b3e0'
label(r, s) = r == 5 ? word(role_short, int(r) + 1) : \
	sprintf("%s\n%.2f", word(role_short, int(r) + 1), s)

plot for [r = 0:5] datafile using 2:($3 == r ? $1 : NaN):(0.5):(0.5) with boxxyerror \
	lc rgb word(colours, r + 1) title word(role_names, r + 1), \
	'' using 2:($1 >= 0 ? $1 : NaN):(label($3, $4)) with labels font sprintf(',%g', font_size) \
	notitle
