. "$(dirname "$0")/../lib.sh"; . "$(dirname "$0")/../npy.sh"
qkv 4 8; cuda_case nodevice o.npy "$MASKKIT" attn q.npy k.npy v.npy --backend cuda -o o.npy
