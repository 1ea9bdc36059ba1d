# a data set among other operands, wherever it stands
. "$(dirname "$0")/../lib.sh"; data_fixture hand d.h5
"$MASKKIT" measure local2 d.h5 --n 4
