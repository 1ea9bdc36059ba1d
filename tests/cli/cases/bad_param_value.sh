. "$(dirname "$0")/../lib.sh"
bad_input out.png "$MASKKIT" gen 'fixed(l=4,c=7)' --n 8 -o out.png
