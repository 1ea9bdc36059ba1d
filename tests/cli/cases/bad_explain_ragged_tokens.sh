. "$(dirname "$0")/../lib.sh"
need_numpy_h5py
# ragged q and k whose tokens are not the lengths of their samples added up
"$py" "$SRCDIR/tests/cli/fixtures/make_encoder.py" model || exit 1
printf 'hello world\nhow are you?\nhello\n' >t.txt
"$MASKKIT" encode model --text t.txt --qk --layout ragged --quiet -o maps.h5 >/dev/null || exit 1
"$py" -c 'import h5py; f = h5py.File("maps.h5", "r+"); f["lengths"][0] += 1' || exit 1
"$MASKKIT" explain maps.h5:/qk/layer_1 --sample 1
