# heads of 4 x 5: not square
. "$(dirname "$0")/../lib.sh"; . "$(dirname "$0")/../npy.sh"
npy p.npy '<f4' '(2, 4, 5)' 160; printf 'p.npy\nkeep.list\n' > keep.list; bad_input m.h5 "$MASKKIT" prune p.npy --sparsity 0.5 -o m.h5
