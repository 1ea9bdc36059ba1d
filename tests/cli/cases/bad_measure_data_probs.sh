. "$(dirname "$0")/../lib.sh"; data_fixture probs d.h5
"$MASKKIT" measure d.h5
