. "$(dirname "$0")/../lib.sh"
need_numpy_h5py
# config.json says intermediate_size 12; the tensors have 16
"$py" "$SRCDIR/tests/cli/fixtures/make_encoder.py" model --set intermediate_size=12 || exit 1
printf 'hello world\n' >t.txt
printf 'model\nt.txt\nkeep.list\n' >keep.list
bad_input out.h5 "$MASKKIT" encode model --text t.txt -o out.h5
