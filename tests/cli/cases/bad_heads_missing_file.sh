. "$(dirname "$0")/../lib.sh"
printf 'keep.list\n' > keep.list
bad_input s.h5 "$MASKKIT" gen --heads-file nope.json --n 8 -o s.h5
