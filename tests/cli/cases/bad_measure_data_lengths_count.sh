. "$(dirname "$0")/../lib.sh"; data_fixture lengths_count d.h5
"$MASKKIT" measure d.h5
