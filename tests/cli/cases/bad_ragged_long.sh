# data past the last sample: the offsets and the data disagree
. "$(dirname "$0")/../lib.sh"; data_fixture ragged_long d.h5
"$MASKKIT" attn-stats d.h5
