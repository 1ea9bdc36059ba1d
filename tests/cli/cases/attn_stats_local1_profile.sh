# local1 attention of zero queries and keys: rows 0 and 5 split 1/2 over two
# keys, rows 1..4 1/3 over three, so diag = (2/2 + 4/3)/6 = 7/18, off = (6 -
# 7/3)/30 = 11/90, first = last = (1/2 + 1/3)/6 = 5/36, entropy = (2 ln 2 +
# 4 ln 3)/6, and the profile at offset 1 is (1/2 + 4/3)/5 = 11/30 over 5 cells
. "$(dirname "$0")/../npy.sh"
qkv 6 4
"$MASKKIT" attn q.npy k.npy v.npy --mask local1 --weights-out w.h5 -o o.npy >/dev/null || exit 1
"$MASKKIT" attn-stats w.h5 --profile-csv p.csv --max-offset 3 || exit 1
cat p.csv
