. "$(dirname "$0")/../lib.sh"; . "$(dirname "$0")/../npy.sh"
qkv 4 8; npy qn.npy '<f4' '(4, 8)' 124; printf '\000\000\300\177' >> qn.npy; echo qn.npy >> keep.list; bad_input o.npy "$MASKKIT" attn qn.npy k.npy v.npy -o o.npy
