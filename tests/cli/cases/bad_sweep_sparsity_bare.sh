# a bare sparsity above 1 (the percent of old) is refused with a hint
. "$(dirname "$0")/../lib.sh"
bad_input s.csv "$MASKKIT" sweep --sparsity 10..90 --n 64 -o s.csv
