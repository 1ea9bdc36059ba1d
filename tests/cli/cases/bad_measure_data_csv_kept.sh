# a failure leaves no CSV behind and keeps an existing one
. "$(dirname "$0")/../lib.sh"; data_fixture hand d.h5
printf 'd.h5\nkeep.list\n' >keep.list
bad_input out.csv "$MASKKIT" measure d.h5 --threshold 0.5 --csv out.csv
