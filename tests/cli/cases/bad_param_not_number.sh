. "$(dirname "$0")/../lib.sh"
bad_input out.txt "$MASKKIT" gen 'local(w=two)' --n 8 -o out.txt
