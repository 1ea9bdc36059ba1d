. "$(dirname "$0")/../lib.sh"
"$MASKKIT" gen local1 --n 8 -o a.npy; printf 'a.npy\nkeep.list\n' > keep.list; bad_input c.npy "$MASKKIT" compose a.npy local2 --n 9 -o c.npy
