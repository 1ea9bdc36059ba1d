# -o and --csv naming one file: the second would replace the first
. "$(dirname "$0")/../lib.sh"
bad_input s.csv "$MASKKIT" sweep --n 64 --sparsity 50% -o s.csv --csv s.csv
