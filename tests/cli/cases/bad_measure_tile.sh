. "$(dirname "$0")/../lib.sh"
bad_input x "$MASKKIT" measure local2 --n 8 --tile 0
