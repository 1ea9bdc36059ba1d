. "$(dirname "$0")/../lib.sh"
need_numpy_h5py
# ALBERT shares its layers: refused by name
"$py" "$SRCDIR/tests/cli/fixtures/make_encoder.py" model --set 'model_type="albert"' || exit 1
printf 'hello world\n' >t.txt
printf 'model\nt.txt\nkeep.list\n' >keep.list
bad_input out.h5 "$MASKKIT" encode model --text t.txt -o out.h5
