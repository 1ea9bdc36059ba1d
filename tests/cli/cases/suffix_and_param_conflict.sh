. "$(dirname "$0")/../lib.sh"
bad_input x "$MASKKIT" gen 'local2(w=5)' --n 8
