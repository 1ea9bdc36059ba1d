# the heatmap of rho per (layer, head): a PNG of 2 x 2 cells of 48 pixels
. "$(dirname "$0")/../lib.sh"; data_fixture hand d.h5
"$MASKKIT" measure d.h5 --png rho.png > /dev/null || exit 1
od -An -tx1 -N24 rho.png
