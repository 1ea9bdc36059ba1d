# an unknown option
. "$(dirname "$0")/../lib.sh"
bad_input out.csv "$MASKKIT" explain --toy collapse --bogus --csv out.csv
