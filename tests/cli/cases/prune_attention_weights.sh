# all-zero q and k give uniform attention (1/8 everywhere): every value ties,
# so the entry ranking keeps cells in index order (rows 0 and 1 at 0.75) and
# the diagonal ranking takes 0, -1, +1, ... after the border
. "$(dirname "$0")/../npy.sh"
qkv 8 4; "$MASKKIT" attn q.npy k.npy v.npy --weights-out w.h5 -o o.npy >/dev/null || exit 1
"$MASKKIT" prune w.h5 --sparsity 0.75 -o m.h5 >/dev/null && "$MASKKIT" gen m.h5 || exit 1
"$MASKKIT" prune w.h5:/pi --structured --sparsity 0.35 -o m.h5 | tail -2 && "$MASKKIT" gen m.h5
