# a bare number above 1 beside a percentage in a list is refused with a hint
. "$(dirname "$0")/../lib.sh"; . "$(dirname "$0")/../npy.sh"
npy p.npy '<f4' '(4, 4)' 64; printf 'p.npy\nkeep.list\n' > keep.list; bad_input m0.50.h5 "$MASKKIT" prune p.npy --sparsity 50%,90 -o 'm{}.h5'
