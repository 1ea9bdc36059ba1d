. "$(dirname "$0")/../lib.sh"; . "$(dirname "$0")/../npy.sh"
qkv 4097 1; bad_input w.npy "$MASKKIT" attn q.npy k.npy v.npy -o o.npy --weights-out w.npy
