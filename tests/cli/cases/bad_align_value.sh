# A value of --align that is neither corner: one line, exit 2, nothing written
# (gen, and attn, which binds its --mask with it)
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../npy.sh"
qkv 2 4
bad_input m.npy "$MASKKIT" gen causal --q-len 2 --kv-len 5 --align top-right -o m.npy
echo "exit $?" >&2
bad_input o.npy "$MASKKIT" attn q.npy k.npy v.npy --mask causal --align bottomright -o o.npy
