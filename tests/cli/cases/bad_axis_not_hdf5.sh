# a text file
echo "not hdf5" > t.h5
"$MASKKIT" axis t.h5
