. "$(dirname "$0")/../lib.sh"
bad_input s.csv "$MASKKIT" sweep --backend cuda --n 64 -o s.csv
