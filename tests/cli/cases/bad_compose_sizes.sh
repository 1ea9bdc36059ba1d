. "$(dirname "$0")/../lib.sh"
"$MASKKIT" gen local1 --n 8 -o a.npy && "$MASKKIT" gen local1 --n 16 -o b.npy; printf 'a.npy\nb.npy\nkeep.list\n' > keep.list; bad_input c.npy "$MASKKIT" compose a.npy b.npy -o c.npy
