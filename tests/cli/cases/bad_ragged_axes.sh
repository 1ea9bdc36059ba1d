# a ragged data set has every leading axis: samples, layers, heads
. "$(dirname "$0")/../lib.sh"; data_fixture ragged d.h5
"$MASKKIT" attn-stats d.h5 --axes sh
