. "$(dirname "$0")/../lib.sh"
bad_input s.csv "$MASKKIT" sweep --patterns causal --n 64 -o s.csv
