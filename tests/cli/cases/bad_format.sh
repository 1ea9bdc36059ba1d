. "$(dirname "$0")/../lib.sh"
bad_input out.npy "$MASKKIT" gen local2 --n 8 --format bmp -o out.npy
