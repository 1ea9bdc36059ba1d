# an empty entry in --a is malformed
. "$(dirname "$0")/../lib.sh"
bad_input out.csv "$MASKKIT" explain --toy distance --a 0.5,,1 --csv out.csv
