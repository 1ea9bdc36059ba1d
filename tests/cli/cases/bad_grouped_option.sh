. "$(dirname "$0")/../lib.sh"
bad_input x "$MASKKIT" gen -zq local2 --n 8
