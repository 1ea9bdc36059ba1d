. "$(dirname "$0")/../lib.sh"
need_numpy_h5py
# --sample beyond the samples of maskkit encode --qk's q and k
"$py" "$SRCDIR/tests/cli/fixtures/make_encoder.py" model || exit 1
printf 'hello world\nhow are you?\n' >t.txt
"$MASKKIT" encode model --text t.txt --qk --quiet -o maps.h5 >/dev/null || exit 1
printf 'model\nt.txt\nmaps.h5\nkeep.list\n' >keep.list
bad_input out.h5 "$MASKKIT" explain maps.h5:/qk/layer_1 --sample 2 -o out.h5
