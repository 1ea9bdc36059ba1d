# integers are not an importance matrix (float32 or float64)
. "$(dirname "$0")/../lib.sh"; . "$(dirname "$0")/../npy.sh"
npy p.npy '<i4' '(4, 4)' 64; printf 'p.npy\nkeep.list\n' > keep.list; bad_input m.h5 "$MASKKIT" prune p.npy --sparsity 0.5 -o m.h5
