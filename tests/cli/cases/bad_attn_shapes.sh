. "$(dirname "$0")/../lib.sh"; . "$(dirname "$0")/../npy.sh"
qkv 4 8; npy k2.npy '<f4' '(4, 6)' 96; echo k2.npy >> keep.list; bad_input o.npy "$MASKKIT" attn q.npy k2.npy v.npy -o o.npy
