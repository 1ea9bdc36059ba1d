# top-p keeps per row, so Toeplitz is not checked: "-"; the hand-made
# probabilities keep the set cells (0.5) before the unset ones (0.125)
. "$(dirname "$0")/../lib.sh"; data_fixture probs d.h5
"$MASKKIT" measure d.h5 --top-p 0.5 --by head | sed -n "3,4p;8,\$p"
