# --csv takes a FILE: an old `--csv --by head` gives it --by, refused as a
# name that looks like an option
cp "$(dirname "$0")/../fixtures/axis.h5" f.h5 || exit 1
"$MASKKIT" axis f.h5 --csv --by head
