# --r needs MIN < MAX
. "$(dirname "$0")/../lib.sh"
bad_input out.csv "$MASKKIT" explain --toy distance --r 100..0.01 --csv out.csv
