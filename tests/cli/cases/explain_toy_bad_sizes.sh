# check sizes are whole numbers
. "$(dirname "$0")/../lib.sh"
bad_input out.csv "$MASKKIT" explain --toy distance --sizes 1,2.5 --csv out.csv
