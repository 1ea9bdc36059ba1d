# compose --heads-file: a bad operand is named with the head it was joined to
. "$(dirname "$0")/../lib.sh"
printf '["local1"]' > h.json; printf 'h.json\nkeep.list\n' > keep.list
bad_input s.h5 "$MASKKIT" compose --heads-file h.json causl --op and --n 8 -o s.h5
