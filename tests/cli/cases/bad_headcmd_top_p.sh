. "$(dirname "$0")/../lib.sh"; . "$(dirname "$0")/../npy.sh"
qkv 16 4; "$MASKKIT" attn q.npy k.npy v.npy --weights-out w.h5 -o o.npy >/dev/null || exit 1; printf 'w.h5\no.npy\n' >> keep.list
bad_input p.csv "$MASKKIT" heads w.h5 --top-p 1.5 --csv p.csv
