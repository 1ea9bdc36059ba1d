. "$(dirname "$0")/../lib.sh"; data_fixture rank6 d.h5
"$MASKKIT" measure d.h5
