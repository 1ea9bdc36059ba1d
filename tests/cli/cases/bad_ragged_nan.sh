# NaN in a real cell of a ragged block, named by its place
. "$(dirname "$0")/../lib.sh"; data_fixture ragged_nan d.h5
"$MASKKIT" attn-stats d.h5
