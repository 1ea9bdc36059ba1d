. "$(dirname "$0")/../lib.sh"
bad_input out.npy "$MASKKIT" gen 'local(v=1)' --n 8 -o out.npy
