. "$(dirname "$0")/../lib.sh"
bad_input s.csv "$MASKKIT" sweep --device -1 --n 64 -o s.csv
