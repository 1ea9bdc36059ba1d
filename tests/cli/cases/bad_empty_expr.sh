. "$(dirname "$0")/../lib.sh"
bad_input x.npy "$MASKKIT" gen ' ' --n 8 -o x.npy
