. "$(dirname "$0")/../lib.sh"
bad_input s.csv "$MASKKIT" sweep --kernels dense,sparse --n 64 -o s.csv
