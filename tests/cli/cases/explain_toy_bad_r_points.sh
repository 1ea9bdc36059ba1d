# --r with fewer than 2 points
. "$(dirname "$0")/../lib.sh"
bad_input out.csv "$MASKKIT" explain --toy distance --r 0.1..10:1 --csv out.csv
