. "$(dirname "$0")/../lib.sh"; . "$(dirname "$0")/../npy.sh"
qkv 4 8; npy q5.npy '<f4' '(1, 1, 1, 4, 8)' 128; echo q5.npy >> keep.list; bad_input o.npy "$MASKKIT" attn q5.npy k.npy v.npy -o o.npy
