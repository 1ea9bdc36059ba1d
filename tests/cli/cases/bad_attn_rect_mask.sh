# A 4 x 6 mask on tensors of 4 queries and 4 keys is refused with both sizes
. "$(dirname "$0")/../npy.sh"
qkv 4 8
"$MASKKIT" gen causal --q-len 4 --kv-len 6 -o r.npy || exit 1
"$MASKKIT" attn q.npy k.npy v.npy --mask r.npy -o o.npy
