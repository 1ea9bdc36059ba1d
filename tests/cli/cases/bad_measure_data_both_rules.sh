. "$(dirname "$0")/../lib.sh"; data_fixture probs d.h5
"$MASKKIT" measure d.h5 --top-p 0.5 --threshold 0.1
