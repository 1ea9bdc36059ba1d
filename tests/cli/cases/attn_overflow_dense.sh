# dense kernel: Q = K = 1e19 in every entry (n = 8, d = 16), scores 4e38,
# beyond float32.  Every normalisation refuses with exit 2 and one line,
# leaving no output: never a zero or NaN O with exit 0.
. "$(dirname "$0")/../lib.sh"; . "$(dirname "$0")/../npy.sh"
qkv 8 16; npy q.npy '<f4' '(8, 16)' 0
i=0; while [ $i -lt 128 ]; do printf '\043\307\012\137' >>q.npy; i=$((i + 1)); done
for norm in softmax dnas sinkhorn:3 hnas:0.5; do
	bad_input o.npy "$MASKKIT" attn q.npy q.npy v.npy -o o.npy --kernel dense --norm $norm
	echo "$norm: exit $?" >&2
done
