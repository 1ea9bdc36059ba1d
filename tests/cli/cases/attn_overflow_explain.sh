# explain refuses scores beyond float32 under every normalisation, with and
# without a mask, as attn does (attn_overflow_limit): Q = K = 1e19, n = 8,
# d = 16, scores 4e38.
. "$(dirname "$0")/../lib.sh"; . "$(dirname "$0")/../npy.sh"
npy q.npy '<f4' '(8, 16)' 0
i=0; while [ $i -lt 128 ]; do printf '\043\307\012\137' >>q.npy; i=$((i + 1)); done
printf 'q.npy\nkeep.list\n' >keep.list
for norm in softmax dnas sinkhorn:3 hnas:0.5; do
	for mask in full local1; do
		bad_input out.h5 "$MASKKIT" explain --q q.npy --k q.npy --norm $norm --mask $mask \
			-o out.h5
		echo "$norm, $mask: exit $?" >&2
	done
done
