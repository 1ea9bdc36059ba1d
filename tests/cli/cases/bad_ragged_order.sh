# offsets that go back: a sample would start inside the one before
. "$(dirname "$0")/../lib.sh"; data_fixture ragged_order d.h5
"$MASKKIT" attn-stats d.h5
