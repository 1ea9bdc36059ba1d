. "$(dirname "$0")/../lib.sh"; data_fixture lengths_float d.h5
"$MASKKIT" measure d.h5
