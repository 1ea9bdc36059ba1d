# A mask that keeps only key i - 1 of each row i makes softmax put all of a
# row's mass there (row 0 keeps nothing: mass 0).  Known answers at N = 16:
# prev 1, next 0, diag 0, band (w = 2) 15/16 = 0.9375, cls 1/16 = 0.0625
# (row 1), sep 0, entropy 0, top-p 0.9 keeps one key in 15 rows: sparsity
# 1 - 15/256 = 0.9414, the mean map is exactly Toeplitz (R^2 1); the role is
# previous-token.
. "$(dirname "$0")/../npy.sh"
for t in q k v; do npy $t.npy '<f4' '(2, 16, 4)' 512; done
"$MASKKIT" attn q.npy k.npy v.npy --mask 'causal & diagonal(offsets=1)' --weights-out w.h5 \
	-o o.npy >/dev/null || exit 1
"$MASKKIT" heads w.h5
