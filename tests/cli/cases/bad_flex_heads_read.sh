. "$(dirname "$0")/../lib.sh"
printf '%s\n' '["local1", "causal"]' > h.json; printf 'h.json\ns.npz\nkeep.list\n' > keep.list
"$MASKKIT" gen --heads-file h.json --n 8 --block 4 -o s.npz || exit 1
bad_input out.npy "$MASKKIT" gen s.npz -o out.npy
