# the axis part alone, per (layer, head), lengths ignored (every sample N = 4 long)
cp "$(dirname "$0")/../fixtures/axis.h5" f.h5 || exit 1
"$MASKKIT" axis f.h5 --with none --lengths none --by head --csv -
