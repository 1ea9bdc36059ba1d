. "$(dirname "$0")/../lib.sh"
need_numpy_h5py
# explain MODEL --text FILE: one sentence's queries and keys at a layer,
# straight from the model, give the column sums explain gives on what
# encode --qk wrote for that sentence; a layer or sample the model or text
# lacks, --text without a model, and --heads with --text exit 2
"$py" "$SRCDIR/tests/cli/fixtures/make_encoder.py" model || exit 1
printf 'hello world!\nhow are you, world? hello.\n' >t.txt
"$MASKKIT" encode model --text t.txt --qk -o a.h5 --quiet >/dev/null || exit 1
for l in 0 1; do
	"$MASKKIT" explain model --text t.txt --sample 1 --layer $l --norm softmax,dnas --json |
		grep -v -e '"input"' -e '"seconds"' >direct.json
	"$MASKKIT" explain a.h5:/qk/layer_$l --sample 1 --norm softmax,dnas --json |
		grep -v -e '"input"' -e '"seconds"' >stored.json
	cmp -s direct.json stored.json && echo "layer $l: the same column sums" ||
		echo "layer $l: differ: $(diff direct.json stored.json | head -4)"
done
"$MASKKIT" explain model --text t.txt --layer 2; echo "exit $?"
"$MASKKIT" explain model --text t.txt --sample 2; echo "exit $?"
"$MASKKIT" explain --text t.txt --random 8,4; echo "exit $?"
"$MASKKIT" explain model --text t.txt --heads 2; echo "exit $?"
