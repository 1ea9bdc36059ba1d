# two levels that print alike would write one file twice
. "$(dirname "$0")/../lib.sh"; . "$(dirname "$0")/../npy.sh"
npy p.npy '<f4' '(4, 4)' 64; printf 'p.npy\nkeep.list\n' > keep.list; bad_input m0.10.h5 "$MASKKIT" prune p.npy --sparsity 0.101,0.104 -o 'm{}.h5'
