. "$(dirname "$0")/../lib.sh"; . "$(dirname "$0")/../npy.sh"
qkv 4 8; "$MASKKIT" gen local1 --n 8 -o m.npy; echo m.npy >> keep.list; bad_input o.npy "$MASKKIT" attn q.npy k.npy v.npy --mask m.npy -o o.npy
