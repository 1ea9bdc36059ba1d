# the figure has at most 10 steps
. "$(dirname "$0")/../lib.sh"
bad_input out.png "$MASKKIT" explain --toy collapse --steps 11 --png out.png
