# NaN in P: refused with its index
. "$(dirname "$0")/../lib.sh"; . "$(dirname "$0")/../npy.sh"
npy p.npy '<f4' '(4, 4)' 60; printf '\000\000\300\177' >> p.npy; printf 'p.npy\nkeep.list\n' > keep.list; bad_input m.h5 "$MASKKIT" prune p.npy --sparsity 0.5 -o m.h5
