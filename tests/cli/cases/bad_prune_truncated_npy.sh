# a .npy file with less data than its header promises
. "$(dirname "$0")/../lib.sh"; . "$(dirname "$0")/../npy.sh"
npy p.npy '<f4' '(8, 8)' 100; printf 'p.npy\nkeep.list\n' > keep.list; bad_input m.h5 "$MASKKIT" prune p.npy --sparsity 0.5 -o m.h5
