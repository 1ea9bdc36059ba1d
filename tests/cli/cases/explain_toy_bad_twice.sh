# two different toys at once
. "$(dirname "$0")/../lib.sh"
bad_input out.csv "$MASKKIT" explain --toy collapse --toy distance --csv out.csv
