. "$(dirname "$0")/../lib.sh"
printf '["local1"]' > h.json; printf 'h.json\nkeep.list\n' > keep.list
bad_input s.h5 "$MASKKIT" gen --heads-file h.json -o s.h5
