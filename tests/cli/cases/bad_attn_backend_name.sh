# --backend takes auto, cpu or cuda
. "$(dirname "$0")/../lib.sh"; . "$(dirname "$0")/../npy.sh"
qkv 4 8; bad_input o.npy "$MASKKIT" attn q.npy k.npy v.npy --backend gpu -o o.npy
