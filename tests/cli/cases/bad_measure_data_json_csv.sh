# --json and --csv - both write to standard output
. "$(dirname "$0")/../lib.sh"; data_fixture hand d.h5
"$MASKKIT" measure d.h5 --json --csv -
