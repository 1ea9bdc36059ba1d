. "$(dirname "$0")/../lib.sh"
need_numpy_h5py
# --ids: an id beyond the vocabulary of 13, named with its line
"$py" "$SRCDIR/tests/cli/fixtures/make_encoder.py" model || exit 1
printf '2 4 3\n\n2 99 3\n' >ids.txt
printf 'model\nids.txt\nkeep.list\n' >keep.list
bad_input out.h5 "$MASKKIT" encode model --ids ids.txt -o out.h5
