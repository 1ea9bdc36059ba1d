. "$(dirname "$0")/../lib.sh"
bad_input out.csv "$MASKKIT" gen local2 --n 8 -o out.csv
