# a level may be a percentage: 50% prunes as 0.5 does, and a range of
# percentages names its files by the fractions
. "$(dirname "$0")/../npy.sh"
npy p.npy '<f4' '(4, 4)' 64
"$MASKKIT" prune p.npy --sparsity 50% -o m.h5 >a || exit 1
"$MASKKIT" prune p.npy --sparsity 0.5 -o m.h5 >b || exit 1
cmp a b && echo same
"$MASKKIT" prune p.npy --sparsity 10%..90%:40% -o 'lv-{}.h5' | grep '^target'
ls lv-*.h5
