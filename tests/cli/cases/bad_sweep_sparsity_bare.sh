# a bare number above 1 beside a percentage (10%..90) is refused with a hint
. "$(dirname "$0")/../lib.sh"
bad_input s.csv "$MASKKIT" sweep --sparsity 10%..90 --n 64 -o s.csv
