. "$(dirname "$0")/../lib.sh"; data_fixture truncated d.h5
"$MASKKIT" measure d.h5
