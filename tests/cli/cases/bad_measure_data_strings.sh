. "$(dirname "$0")/../lib.sh"; data_fixture strings d.h5
"$MASKKIT" measure d.h5
