# the plot's directory is checked before any work
. "$(dirname "$0")/../lib.sh"; . "$(dirname "$0")/../npy.sh"
qkv 6 4; "$MASKKIT" attn q.npy k.npy v.npy --weights-out w.h5 -o o.npy >/dev/null || exit 1; printf 'w.h5\no.npy\n' >> keep.list
bad_input p.csv "$MASKKIT" attn-stats w.h5 --png nodir/p.png --profile-csv p.csv
