. "$(dirname "$0")/../lib.sh"
printf '%s\n' '[["local1"], ["causal"]]' > h.json; printf 'h.json\nkeep.list\n' > keep.list
bad_input s.npz "$MASKKIT" gen --heads-file h.json --n 8 -o s.npz
