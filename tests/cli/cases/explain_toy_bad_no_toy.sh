# --toy's value taken by another option leaves no toy
. "$(dirname "$0")/../lib.sh"
bad_input out.csv "$MASKKIT" explain --csv --toy out.csv
