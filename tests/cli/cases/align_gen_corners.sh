# Both alignments of small rectangular masks, against known answers:
# flash-attn's README ("2.1: Change behavior of causal flag") shows causal
# for seqlen_q = 2, seqlen_k = 5 and 5 x 2, top-left before 2.1 and
# bottom-right since; PyTorch's causal_upper_left(3, 4) and
# causal_lower_right(3, 4) give [[1,0,0,0],[1,1,0,0],[1,1,1,0]] and
# [[1,1,0,0],[1,1,1,0],[1,1,1,1]]; the rest by hand from the definitions
# (prefix2: j < 2 or j <= own position; local1: |own position - j| <= 1).
for a in top-left bottom-right; do
	echo "== $a"
	for s in "2 5" "5 2" "3 4"; do
		set -- $s
		"$MASKKIT" gen causal --q-len "$1" --kv-len "$2" --align $a || exit 1
	done
	"$MASKKIT" gen prefix2 --q-len 3 --kv-len 6 --align $a || exit 1
	"$MASKKIT" gen local1 --q-len 6 --kv-len 3 --align $a || exit 1
	# the tile layout follows the cells: 4 x 16 causal in 4 x 4 tiles
	"$MASKKIT" measure causal --q-len 4 --kv-len 16 --align $a --tile 4 --json |
		grep -E '"(nonempty|full)"' || exit 1
done
