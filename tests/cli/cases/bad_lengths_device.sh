# --lengths /dev/zero: a device never ends; refused at once (exit 2), not
# read for ever.  A lengths file holding a NUL byte is not a text file.
. "$(dirname "$0")/../lib.sh"
cp "$SRCDIR/tests/cli/fixtures/axis.h5" f.h5 || exit 1
printf '8 4\0003\n' >nul.txt
printf 'f.h5\nnul.txt\n' >keep.list
timeout 20 "$MASKKIT" measure 'local(w=1)' --n 8 --lengths /dev/zero; echo "exit $?" >&2
timeout 20 "$MASKKIT" axis f.h5 --lengths-file /dev/zero; echo "exit $?" >&2
timeout 20 "$MASKKIT" measure 'local(w=1)' --n 8 --lengths nul.txt; echo "exit $?" >&2
