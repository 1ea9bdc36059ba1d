. "$(dirname "$0")/../lib.sh"
echo 'not hdf5' > m.h5; echo m.h5 > keep.list; echo keep.list >> keep.list; bad_input out.npy "$MASKKIT" gen m.h5 -o out.npy
