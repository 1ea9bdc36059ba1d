# a ragged data set without /offsets
. "$(dirname "$0")/../lib.sh"; data_fixture ragged_nooffsets d.h5
"$MASKKIT" attn-stats d.h5
