# a dataset path that the file does not hold
. "$(dirname "$0")/../lib.sh"; . "$(dirname "$0")/../npy.sh"
qkv 8 4; "$MASKKIT" attn q.npy k.npy v.npy --weights-out w.h5 -o o.npy >/dev/null; printf 'w.h5\no.npy\n' >> keep.list; bad_input m.h5 "$MASKKIT" prune w.h5:/nothere --sparsity 0.5 -o m.h5
