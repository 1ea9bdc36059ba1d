. "$(dirname "$0")/../lib.sh"
need_numpy_h5py
# blank lines only: nothing to encode
"$py" "$SRCDIR/tests/cli/fixtures/make_encoder.py" model || exit 1
printf '\n  \n\t\n' >t.txt
printf 'model\nt.txt\nkeep.list\n' >keep.list
bad_input out.h5 "$MASKKIT" encode model --text t.txt -o out.h5
