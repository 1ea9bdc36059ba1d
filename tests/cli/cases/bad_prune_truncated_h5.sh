# an HDF5 attention file cut short
. "$(dirname "$0")/../lib.sh"; . "$(dirname "$0")/../npy.sh"
qkv 8 4; "$MASKKIT" attn q.npy k.npy v.npy --weights-out w.h5 -o o.npy >/dev/null && head -c 1500 w.h5 > t.h5; printf 'w.h5\no.npy\nt.h5\n' >> keep.list; bad_input m.h5 "$MASKKIT" prune t.h5 --sparsity 0.5 -o m.h5
