# prune writes HDF5 only
. "$(dirname "$0")/../lib.sh"; . "$(dirname "$0")/../npy.sh"
npy p.npy '<f4' '(4, 4)' 64; printf 'p.npy\nkeep.list\n' > keep.list; bad_input m.npy "$MASKKIT" prune p.npy --sparsity 0.5 -o m.npy
