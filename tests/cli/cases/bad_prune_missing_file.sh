# no such input
. "$(dirname "$0")/../lib.sh"; . "$(dirname "$0")/../npy.sh"
bad_input m.h5 "$MASKKIT" prune nothere.h5 --sparsity 0.5 -o m.h5
