. "$(dirname "$0")/../lib.sh"; data_fixture hand d.h5
"$MASKKIT" measure d.h5 --json | grep -E "\"(sparsity|sparsity_classic|by_layer|samples|n)\""
