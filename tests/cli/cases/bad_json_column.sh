. "$(dirname "$0")/../lib.sh"
printf '{"n": 2, "rows": [[0], [1, 5]]}' > m.json; echo m.json > keep.list; echo keep.list >> keep.list; bad_input out.npy "$MASKKIT" gen m.json -o out.npy
