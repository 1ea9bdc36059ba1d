. "$(dirname "$0")/../lib.sh"
bad_input out.h5 "$MASKKIT" gen 'global(tokens=3,200)' --n 128 -o out.h5
