# Zero queries and keys: softmax attention is uniform, 1/16 on every key.
# Known answers at N = 16: prev = next = diag = cls = sep = 0.0625, band
# (w = 2) 74 cells of 256 = 0.2891, entropy ln 16 = 2.7726, entropy / ln 16
# = 1, top-p 0.9 keeps ceil(14.4) = 15 keys a row: sparsity 1/16 = 0.0625,
# the mean map is constant (R^2 1); the role is broad.  --csv - in --sort's
# order, and --window 0 makes band the diagonal.
. "$(dirname "$0")/../npy.sh"
for t in q k v; do npy $t.npy '<f4' '(2, 16, 4)' 512; done
"$MASKKIT" attn q.npy k.npy v.npy --weights-out w.h5 -o o.npy >/dev/null || exit 1
"$MASKKIT" heads w.h5 --csv - --sort entropy
"$MASKKIT" heads w.h5 --window 0 --json | grep -E '"(band|diag|role|window)"'
