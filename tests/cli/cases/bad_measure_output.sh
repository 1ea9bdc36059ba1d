. "$(dirname "$0")/../lib.sh"
bad_input x.npy "$MASKKIT" measure local2 --n 8 -o x.npy
