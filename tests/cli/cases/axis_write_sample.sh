# -o writes sample 0's masks as an HDF5 stack [layers, heads, N_0, N_0] =
# [2, 1, 4, 4], which measure reads layer by layer
cp "$(dirname "$0")/../fixtures/axis.h5" f.h5 || exit 1
"$MASKKIT" axis f.h5 -o m.h5 --sample 0 >/dev/null || exit 1
od -An -c -N4 m.h5 | tr -d " "
"$MASKKIT" measure m.h5 --by layer | sed -n '1p;8,$p'
