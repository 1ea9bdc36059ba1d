# --csv takes a FILE: an old `--csv --json` gives it --json, refused as a
# name that looks like an option (nothing is written, no file '--json')
. "$(dirname "$0")/../lib.sh"; . "$(dirname "$0")/../npy.sh"
qkv 6 4; "$MASKKIT" attn q.npy k.npy v.npy --weights-out w.h5 -o o.npy >/dev/null || exit 1; printf 'w.h5\no.npy\n' >> keep.list
bad_input p.csv "$MASKKIT" attn-stats w.h5 --csv --json --profile-csv p.csv
