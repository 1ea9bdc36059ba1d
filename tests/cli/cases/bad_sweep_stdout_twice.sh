# --json and --csv - cannot share standard output
. "$(dirname "$0")/../lib.sh"
bad_input s.csv "$MASKKIT" sweep --n 64 --sparsity 50% --json --csv -
