# an unknown toy names the known ones
. "$(dirname "$0")/../lib.sh"
bad_input out.csv "$MASKKIT" explain --toy spiral --csv out.csv
