. "$(dirname "$0")/../lib.sh"; . "$(dirname "$0")/../npy.sh"
qkv 4 8; npy qi.npy '<i4' '(4, 8)' 128; echo qi.npy >> keep.list; bad_input o.npy "$MASKKIT" attn qi.npy k.npy v.npy -o o.npy
