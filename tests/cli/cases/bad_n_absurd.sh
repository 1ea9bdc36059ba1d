. "$(dirname "$0")/../lib.sh"
bad_input out.npy "$MASKKIT" gen local2 --n 100000000000000000000 -o out.npy
