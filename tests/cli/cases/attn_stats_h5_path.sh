# FILE.h5:/PATH names the dataset as --dataset does (with or without the
# leading '/'); both at once, or a missing one, is refused
. "$(dirname "$0")/../npy.sh"
qkv 6 4
"$MASKKIT" attn q.npy k.npy v.npy --weights-out w.h5 -o o.npy >/dev/null || exit 1
"$MASKKIT" attn-stats w.h5:/pi --csv - > a.csv || exit 1
"$MASKKIT" attn-stats w.h5 --dataset /pi --csv - > b.csv || exit 1
cmp -s a.csv b.csv && echo "w.h5:/pi reads what --dataset /pi reads"
"$MASKKIT" attn-stats w.h5:pi | head -1
"$MASKKIT" attn-stats w.h5:/pi --dataset /pi
echo "exit $?"
"$MASKKIT" attn-stats w.h5:/nope
echo "exit $?"
