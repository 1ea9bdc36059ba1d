# a negative spread is refused
. "$(dirname "$0")/../lib.sh"
bad_input out.csv "$MASKKIT" explain --toy collapse --sd -0.1 --csv out.csv
