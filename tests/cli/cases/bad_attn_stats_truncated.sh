# the data lies past the end of a cut-short file
. "$(dirname "$0")/../lib.sh"; . "$(dirname "$0")/../npy.sh"
qkv 64 4; "$MASKKIT" attn q.npy k.npy v.npy --weights-out w.h5 -o o.npy >/dev/null || exit 1
head -c 4000 w.h5 > t.h5; rm w.h5; printf 't.h5\no.npy\n' >> keep.list
bad_input p.csv "$MASKKIT" attn-stats t.h5 --profile-csv p.csv
