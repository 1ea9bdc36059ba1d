# --steps outside 0..1000 is refused before anything is written
. "$(dirname "$0")/../lib.sh"
bad_input out.csv "$MASKKIT" explain --toy collapse --steps 1001 --csv out.csv
