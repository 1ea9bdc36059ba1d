# --json: the shape, the weighting, the offsets shown and their cell counts
. "$(dirname "$0")/../npy.sh"
qkv 6 4
"$MASKKIT" attn q.npy k.npy v.npy --weights-out w.h5 -o o.npy >/dev/null || exit 1
"$MASKKIT" attn-stats w.h5 --json --max-offset 2 > out.json || exit 1
grep -E '^	"(file|dataset|dtype|lengths|samples|layers|heads|n|rows|weighting|max_offset|offsets|count)"' out.json
grep -c '"profile"' out.json
"$MASKKIT" attn-stats w.h5 --json --max-offset 100 | grep -E '^	"(max_offset|offsets|count)"'
