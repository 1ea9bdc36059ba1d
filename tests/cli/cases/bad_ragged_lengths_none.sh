# a ragged data set is read with its lengths: without them its blocks have no size
. "$(dirname "$0")/../lib.sh"; data_fixture ragged d.h5
"$MASKKIT" measure d.h5 --lengths none
