# offsets that increase, but not by heads x length^2: the blocks would be misread
. "$(dirname "$0")/../lib.sh"; data_fixture ragged_step d.h5
"$MASKKIT" attn-stats d.h5
