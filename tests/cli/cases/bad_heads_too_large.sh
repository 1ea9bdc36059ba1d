# a file far larger than any list of expressions is refused before parsing
. "$(dirname "$0")/../lib.sh"
dd if=/dev/zero bs=1048576 count=17 2>/dev/null | tr '\0' ' ' > h.json; printf 'h.json\nkeep.list\n' > keep.list
bad_input s.h5 "$MASKKIT" gen --heads-file h.json --n 8 -o s.h5
