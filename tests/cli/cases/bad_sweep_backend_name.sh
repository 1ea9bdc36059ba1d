# a misspelt backend: did you mean
. "$(dirname "$0")/../lib.sh"
bad_input s.csv "$MASKKIT" sweep --n 64 --backend cpus -o s.csv
