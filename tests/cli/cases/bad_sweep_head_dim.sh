. "$(dirname "$0")/../lib.sh"
bad_input s.csv "$MASKKIT" sweep --head-dim 2048 --n 64 -o s.csv
