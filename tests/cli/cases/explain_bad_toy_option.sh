# a toy's option is refused without --toy, naming the toy it belongs to
. "$(dirname "$0")/../lib.sh"
bad_input out.csv "$MASKKIT" explain --random 8,4 --steps 3 --csv out.csv
