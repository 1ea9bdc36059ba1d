# --json with -o: the file is written, then described (output, format)
"$MASKKIT" gen 'random1' --n 1000 --seed 4611686018427387904 -o r.npy --json || exit 1
[ -s r.npy ] || echo "r.npy not written" >&2
