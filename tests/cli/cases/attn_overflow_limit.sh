# The limit on the scores (attn.h: MK_ATTN_SCORE_MAX, 1e37) is one
# for every kernel and normalisation, and explain's: n = 8, d = 1, V = 0..7.
# Q = K = 3e18, scores 9e36, all equal: every kernel under every
# normalisation gives O = 3.5, the mean of V; Q = K = 1e19, scores 1e38 (in
# float32's range, but not a few of them apart), is refused by all, as
# explain refuses it.
. "$(dirname "$0")/../lib.sh"; . "$(dirname "$0")/../npy.sh"
npy v.npy '<f4' '(8, 1)' 4
printf '\000\000\200\077\000\000\000\100\000\000\100\100\000\000\200\100' >>v.npy
printf '\000\000\240\100\000\000\300\100\000\000\340\100' >>v.npy
npy q.npy '<f4' '(8, 1)' 0; npy big.npy '<f4' '(8, 1)' 0
i=0; while [ $i -lt 8 ]; do
	printf '\220\210\046\136' >>q.npy; printf '\043\307\012\137' >>big.npy; i=$((i + 1))
done
printf 'q.npy\nbig.npy\nv.npy\nkeep.list\n' >keep.list
for kernel in dense masked block csr; do
	mask=; [ $kernel = dense ] || mask="--mask full"
	for norm in softmax dnas sinkhorn:3 hnas:0.5; do
		"$MASKKIT" attn q.npy q.npy v.npy -o o.npy $mask --kernel $kernel --norm $norm \
			>/dev/null || echo "$kernel $norm: exit $?"
		echo "$kernel $norm:" $(tail -c 32 o.npy | od -An -v -t f4); rm -f o.npy
		bad_input o.npy "$MASKKIT" attn big.npy big.npy v.npy -o o.npy $mask \
			--kernel $kernel --norm $norm
		echo "$kernel $norm: exit $?" >&2
	done
done
bad_input out.h5 "$MASKKIT" explain --q big.npy --k big.npy -o out.h5
echo "explain: exit $?" >&2
