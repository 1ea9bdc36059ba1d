# P of rank 4: prune reads [n, n] or [heads, n, n]
. "$(dirname "$0")/../lib.sh"; . "$(dirname "$0")/../npy.sh"
npy p.npy '<f4' '(1, 2, 4, 4)' 128; printf 'p.npy\nkeep.list\n' > keep.list; bad_input m.h5 "$MASKKIT" prune p.npy --sparsity 0.5 -o m.h5
