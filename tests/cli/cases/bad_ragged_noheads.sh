# a ragged data set without its heads attribute
. "$(dirname "$0")/../lib.sh"; data_fixture ragged_noheads d.h5
"$MASKKIT" attn-stats d.h5
