. "$(dirname "$0")/../npy.sh"
qkv 4 8; "$MASKKIT" attn q.npy k.npy v.npy --mask local1 --weights-out w.h5 -o o.npy >/dev/null && wc -c < o.npy && "$MASKKIT" attn q.npy k.npy v.npy -o o.npy --norm sinkhorn:3 --kernel csr >/dev/null && wc -c < o.npy && test -s w.h5
