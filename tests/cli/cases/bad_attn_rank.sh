. "$(dirname "$0")/../lib.sh"; . "$(dirname "$0")/../npy.sh"
qkv 4 8; npy q1.npy '<f4' '(32,)' 128; echo q1.npy >> keep.list; bad_input o.npy "$MASKKIT" attn q1.npy k.npy v.npy -o o.npy
