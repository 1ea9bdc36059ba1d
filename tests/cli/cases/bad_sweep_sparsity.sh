. "$(dirname "$0")/../lib.sh"
bad_input s.csv "$MASKKIT" sweep --sparsity 10%..120% --n 64 -o s.csv
