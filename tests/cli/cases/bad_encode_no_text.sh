. "$(dirname "$0")/../lib.sh"
need_numpy_h5py
# neither --text nor --ids
"$py" "$SRCDIR/tests/cli/fixtures/make_encoder.py" model || exit 1
printf 'model\nkeep.list\n' >keep.list
bad_input out.h5 "$MASKKIT" encode model -o out.h5
