. "$(dirname "$0")/../lib.sh"
need_numpy_h5py
# encode --qk's file named without its group: the error names the groups
# /qk/layer_L it holds, with and without --sample
"$py" "$SRCDIR/tests/cli/fixtures/make_encoder.py" model || exit 1
printf 'hello world\nhow are you?\n' >t.txt
"$MASKKIT" encode model --text t.txt --qk --quiet -o maps.h5 >/dev/null || exit 1
printf 'model\nt.txt\nmaps.h5\nkeep.list\n' >keep.list
bad_input out.h5 "$MASKKIT" explain maps.h5 --sample 1 -o out.h5
bad_input out.h5 "$MASKKIT" explain maps.h5 -o out.h5
