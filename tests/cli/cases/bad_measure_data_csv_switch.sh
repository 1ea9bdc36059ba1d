# the old switch: --csv takes a file now, and '--by' is not one
. "$(dirname "$0")/../lib.sh"; data_fixture hand d.h5
"$MASKKIT" measure d.h5 --csv --by head
