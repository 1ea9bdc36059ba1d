. "$(dirname "$0")/../lib.sh"
bad_input s.txt "$MASKKIT" sweep --n 64 --patterns local --sparsity 50% -o s.txt 
