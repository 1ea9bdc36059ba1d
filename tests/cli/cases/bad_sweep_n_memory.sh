. "$(dirname "$0")/../lib.sh"
bad_input s.csv "$MASKKIT" sweep --n 1048576 -o s.csv
