. "$(dirname "$0")/../lib.sh"
bad_input x "$MASKKIT" gen --n 8
