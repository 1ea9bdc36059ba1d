# float32 attention maps thresholded: the same cells as the hand-made masks
. "$(dirname "$0")/../lib.sh"; data_fixture probs d.h5
"$MASKKIT" measure d.h5 --threshold 0.25 --by sample --csv -
