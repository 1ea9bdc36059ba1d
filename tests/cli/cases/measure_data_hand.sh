# the hand-made data set: Eq. 9 restricted to each sample's real tokens,
# per head (counted by hand in tests/check_dataset.c), padding left out
. "$(dirname "$0")/../lib.sh"; data_fixture hand d.h5
"$MASKKIT" measure d.h5 --by head
