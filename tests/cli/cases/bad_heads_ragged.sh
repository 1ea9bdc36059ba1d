. "$(dirname "$0")/../lib.sh"
printf '%s\n' '[["local1", "causal"], ["global1"]]' > h.json; printf 'h.json\nkeep.list\n' > keep.list
bad_input s.h5 "$MASKKIT" gen --heads-file h.json --n 8 -o s.h5
