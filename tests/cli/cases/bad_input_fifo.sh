# Every reader refuses a FIFO at once (exit 2, one line) instead of waiting
# for ever for a writer that never comes: masks (.txt .json .npy .h5),
# lengths, heads files, tensors, weights, data sets and sweep results.
. "$(dirname "$0")/../lib.sh"
for f in f.txt f.json f.npy f.h5 f.csv; do mkfifo $f || exit 1; done
printf 'f.txt\nf.json\nf.npy\nf.h5\nf.csv\n' >keep.list
run() {
	timeout 20 "$@" >/dev/null 2>err
	echo "$*: exit $? $(cat err)" | sed "s|$MASKKIT|maskkit|; s|$PWD/||g" >&2
}
run "$MASKKIT" measure f.txt
run "$MASKKIT" measure f.json
run "$MASKKIT" measure f.npy
run "$MASKKIT" measure f.h5
run "$MASKKIT" compose f.txt --op or f.json
run "$MASKKIT" measure 'local(w=1)' --n 8 --lengths f.txt
run "$MASKKIT" measure 'local(w=1)' --n 8 --lengths f.npy
run "$MASKKIT" measure 'local(w=1)' --n 8 --lengths f.h5
run "$MASKKIT" gen --heads-file f.json --n 8 -o s.h5
run "$MASKKIT" attn f.npy f.npy f.npy -o o.npy
run "$MASKKIT" attn f.h5:/q f.h5:/k f.h5:/v -o o.npy
run "$MASKKIT" toeplitz f.h5
run "$MASKKIT" positional f.h5
run "$MASKKIT" attn-stats f.h5
run "$MASKKIT" axis f.h5
run "$MASKKIT" prune f.npy --sparsity 0.5 -o p.h5
run "$MASKKIT" explain f.h5
run "$MASKKIT" report --quiet --out r --only sweep --sweep f.csv
# the tokenizer is sniffed for its first byte: that open must not wait either
printf 'hello\n' >t.txt
printf 't.txt\n' >>keep.list
run "$MASKKIT" tokenize f.json --text t.txt
run "$MASKKIT" encode f.json --tokenizer f.json --text t.txt -o e.h5
run "$MASKKIT" tokenize f.txt --text f.txt
rm -f err
