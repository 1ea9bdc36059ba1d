# heads that are mask files of different n, and no --n
. "$(dirname "$0")/../lib.sh"
"$MASKKIT" gen local1 --n 4 -o a.json && "$MASKKIT" gen local1 --n 5 -o b.json || exit 1
printf '["a.json", "b.json"]' > h.json; printf 'a.json\nb.json\nh.json\nkeep.list\n' > keep.list
bad_input s.h5 "$MASKKIT" gen --heads-file h.json -o s.h5
