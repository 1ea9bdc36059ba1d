# offsets that index past the data
. "$(dirname "$0")/../lib.sh"; data_fixture ragged_short d.h5
"$MASKKIT" attn-stats d.h5
