# a local pattern that cannot be bound at a sample's length
cp "$(dirname "$0")/../fixtures/axis.h5" f.h5 || exit 1
"$MASKKIT" axis f.h5 --with "local2 + axis(rows=3)"
