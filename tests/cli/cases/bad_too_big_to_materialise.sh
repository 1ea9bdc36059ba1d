. "$(dirname "$0")/../lib.sh"
bad_input out.npy "$MASKKIT" gen full --n 1048576 -o out.npy
