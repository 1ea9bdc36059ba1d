# a ragged data set holds probabilities, not masks
. "$(dirname "$0")/../lib.sh"; data_fixture ragged_ints d.h5
"$MASKKIT" attn-stats d.h5
