. "$(dirname "$0")/../lib.sh"
bad_input out.npy "$MASKKIT" gen bigbrd --n 8 -o out.npy
