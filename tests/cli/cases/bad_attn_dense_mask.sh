. "$(dirname "$0")/../lib.sh"; . "$(dirname "$0")/../npy.sh"
qkv 4 8; bad_input o.npy "$MASKKIT" attn q.npy k.npy v.npy --kernel dense --mask local1 -o o.npy
