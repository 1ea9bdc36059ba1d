. "$(dirname "$0")/../lib.sh"
need_numpy_h5py
# --mask that does not parse: refused before any work
"$py" "$SRCDIR/tests/cli/fixtures/make_encoder.py" model || exit 1
printf 'hello world\n' >t.txt
printf 'model\nt.txt\nkeep.list\n' >keep.list
bad_input out.h5 "$MASKKIT" encode model --text t.txt --mask 'local(' -o out.h5
