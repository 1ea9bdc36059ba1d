# --backend defaults to auto: cuda when a device is usable, else cpu; the
# summary and --json name the backend that ran (skipped where a GPU is usable)
. "$(dirname "$0")/../npy.sh"
qkv 4 8
"$MASKKIT" attn q.npy k.npy v.npy -o o.npy >out || exit 1
grep -q '^backend  *cuda' out && { echo "a CUDA device is usable"; exit 77; }
grep '^backend' out
"$MASKKIT" attn q.npy k.npy v.npy --mask local1 -o o.npy --json | grep '"backend"'
"$MASKKIT" attn q.npy k.npy v.npy --backend cpu -o o.npy | grep '^backend'
