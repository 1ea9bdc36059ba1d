# --sample beyond the samples: nothing is written, an existing file is kept
. "$(dirname "$0")/../lib.sh"
cp "$(dirname "$0")/../fixtures/axis.h5" f.h5 || exit 1
echo f.h5 > keep.list; echo keep.list >> keep.list
bad_input m.h5 "$MASKKIT" axis f.h5 -o m.h5 --sample 3
