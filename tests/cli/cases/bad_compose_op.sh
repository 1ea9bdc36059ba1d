. "$(dirname "$0")/../lib.sh"
bad_input c.npy "$MASKKIT" compose local1 local2 --n 8 --op xor -o c.npy
