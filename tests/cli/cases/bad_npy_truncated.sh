. "$(dirname "$0")/../lib.sh"
"$MASKKIT" gen local1 --n 8 -o m.npy && head -c 100 m.npy > t.npy && rm m.npy; echo t.npy > keep.list; echo keep.list >> keep.list; bad_input out.txt "$MASKKIT" gen t.npy -o out.txt
