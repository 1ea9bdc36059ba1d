# Every mask of --patterns is checked before the first point is timed: a mask
# file of the wrong n is refused at once, with no progress line before the
# message (issue 27: on 340d58b it was found after 9 timed points)
. "$(dirname "$0")/../lib.sh"
"$MASKKIT" gen causal --n 256 -o m256.npy || exit 1
printf 'm256.npy\nkeep.list\n' >keep.list
bad_input s.csv "$MASKKIT" sweep --sparsity 10..90 --n 512 --reps 1 --kernels dense \
	--patterns 'local,m256.npy' -o s.csv
