# Only key i + 1 kept (the last row keeps nothing): a next-token head,
# at N = 8: next = 1, band 7/8, sep 1/8 (row N - 2 attends to the last token);
# --sort next keeps layer and head order among equal values.
. "$(dirname "$0")/../npy.sh"
for t in q k v; do npy $t.npy '<f4' '(3, 8, 4)' 384; done
"$MASKKIT" attn q.npy k.npy v.npy --mask 'diagonal(offsets=1) - causal' --weights-out w.h5 \
	-o o.npy >/dev/null || exit 1
"$MASKKIT" heads w.h5 --sort next --csv - | cut -d, -f1-9
