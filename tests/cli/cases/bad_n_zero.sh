. "$(dirname "$0")/../lib.sh"
bad_input out.npy "$MASKKIT" gen local2 --n 0 -o out.npy
