# an option of the other toy is named
. "$(dirname "$0")/../lib.sh"
bad_input out.csv "$MASKKIT" explain --toy collapse --a 1 --csv out.csv
