. "$(dirname "$0")/../lib.sh"
bad_input s.csv "$MASKKIT" sweep --dtype fp16 --backend cpu --n 64 -o s.csv
