. "$(dirname "$0")/../lib.sh"
bad_input x "$MASKKIT"
