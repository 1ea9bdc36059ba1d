. "$(dirname "$0")/../lib.sh"
need_numpy_h5py
# --sample beyond the samples whose q and k encode --qk-limit kept (ragged)
"$py" "$SRCDIR/tests/cli/fixtures/make_encoder.py" model || exit 1
printf 'hello world\nhow are you?\nhello\n' >t.txt
"$MASKKIT" encode model --text t.txt --qk-limit 2 --layout ragged --quiet -o maps.h5 >/dev/null || exit 1
"$MASKKIT" explain maps.h5:/qk/layer_1 --sample 2
