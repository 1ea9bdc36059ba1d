. "$(dirname "$0")/../lib.sh"
need_numpy_h5py
# a model directory with neither tokenizer.json nor vocab.txt
"$py" "$SRCDIR/tests/cli/fixtures/make_encoder.py" model --no-vocab || exit 1
printf 'hello world\n' >t.txt
printf 'model\nt.txt\nkeep.list\n' >keep.list
bad_input out.h5 "$MASKKIT" encode model --text t.txt -o out.h5
