# a misspelt option: did you mean
. "$(dirname "$0")/../lib.sh"
bad_input s.csv "$MASKKIT" sweep --n 64 --sparity 50% -o s.csv
