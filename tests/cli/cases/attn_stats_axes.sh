# a rank-4 dataset reads as [layers, heads, N, N] unless --axes says otherwise
. "$(dirname "$0")/../npy.sh"
for t in q k v; do npy $t.npy '<f4' '(2, 1, 6, 4)' 192; done
"$MASKKIT" attn q.npy k.npy v.npy --weights-out w.h5 -o o.npy >/dev/null || exit 1
"$MASKKIT" attn-stats w.h5 | head -1
"$MASKKIT" attn-stats w.h5 --axes sh | head -1
"$MASKKIT" attn-stats w.h5 --axes sh --csv - | cut -d, -f1-6
