# an empty entry in a list of levels
. "$(dirname "$0")/../lib.sh"; . "$(dirname "$0")/../npy.sh"
npy p.npy '<f4' '(4, 4)' 64; printf 'p.npy\nkeep.list\n' > keep.list; bad_input m0.10.h5 "$MASKKIT" prune p.npy --sparsity 0.1,,0.2 -o 'm{}.h5'
