. "$(dirname "$0")/../lib.sh"; data_fixture nodata d.h5
"$MASKKIT" measure d.h5
