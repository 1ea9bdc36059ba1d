# A NUL character inside an expression of a heads file is refused (exit 2),
# not read as the text before it ("diag\u0000garbage" is not "diag"); an
# escaped backslash before u0000 is only text.
. "$(dirname "$0")/../lib.sh"
printf '["diag\\u0000garbage", "local(w=1)"]\n' >nul.json
printf '[["diag", "diag"],\n ["local(w=1)", "diag\\u0000"]]\n' >nul2.json
printf '["diag\\\\u0000"]\n' >text.json
printf "nul.json\nnul2.json\ntext.json\nkeep.list\n" >keep.list
bad_input s.h5 "$MASKKIT" gen --heads-file nul.json --n 8 -o s.h5; echo "exit $?" >&2
bad_input s.h5 "$MASKKIT" gen --heads-file nul2.json --n 8 -o s.h5; echo "exit $?" >&2
bad_input s.h5 "$MASKKIT" gen --heads-file text.json --n 8 -o s.h5; echo "exit $?" >&2
