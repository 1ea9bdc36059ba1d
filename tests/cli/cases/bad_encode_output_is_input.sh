. "$(dirname "$0")/../lib.sh"
need_numpy_h5py
# -o naming an input (the text, the model's weights or vocabulary, under any
# spelling) is refused before anything is written: exit 2, the input intact
"$py" "$SRCDIR/tests/cli/fixtures/make_encoder.py" model || exit 1
printf 'hello world!\n' >t.txt
cp t.txt t.copy
cp model/model.safetensors w.copy
printf 'model\nt.txt\nt.copy\nw.copy\nkeep.list\n' >keep.list
"$MASKKIT" encode model --text t.txt -o t.txt; echo "exit $?"
"$MASKKIT" encode model --text t.txt -o ./model/model.safetensors; echo "exit $?"
"$MASKKIT" encode model --text t.txt -o model/vocab.txt; echo "exit $?"
"$MASKKIT" tokenize model --text t.txt -o t.txt; echo "exit $?"
cmp -s t.txt t.copy && cmp -s model/model.safetensors w.copy && echo "inputs intact"
