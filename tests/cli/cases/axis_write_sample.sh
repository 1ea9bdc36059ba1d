# -o writes sample 0's masks as an HDF5 file; it is a stack [2, 4, 4]
cp "$(dirname "$0")/../fixtures/axis.h5" f.h5 || exit 1
"$MASKKIT" axis f.h5 -o m.h5 --sample 0 >/dev/null || exit 1
od -An -c -N4 m.h5 | tr -d " "
