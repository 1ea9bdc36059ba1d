# --n is not an abbreviation of --norm: attn takes n from the tensors
. "$(dirname "$0")/../lib.sh"; . "$(dirname "$0")/../npy.sh"
qkv 4 8; bad_input o.npy "$MASKKIT" attn q.npy k.npy v.npy --n 30 -o o.npy
