. "$(dirname "$0")/../lib.sh"
bad_input out.npy "$MASKKIT" gen nothere.npy -o out.npy
