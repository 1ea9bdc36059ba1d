# an option of the INPUT mode is refused with --toy, naming it
. "$(dirname "$0")/../lib.sh"
bad_input out.csv "$MASKKIT" explain --toy collapse --mask local2 --csv out.csv
