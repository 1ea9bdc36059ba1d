# a bare sparsity above 1: refused, with a hint (a fraction, or a percentage with %)
. "$(dirname "$0")/../lib.sh"; . "$(dirname "$0")/../npy.sh"
npy p.npy '<f4' '(4, 4)' 64; printf 'p.npy\nkeep.list\n' > keep.list; bad_input m.h5 "$MASKKIT" prune p.npy --sparsity 150 -o m.h5
