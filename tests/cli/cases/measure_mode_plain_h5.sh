# which mode: a plain 2-D mask in HDF5 (no lengths) is a MASK, named as
# FILE.h5 or as FILE.h5:/PATH; with a data-set option it is a data set
"$MASKKIT" gen local2 --n 8 -o m.h5 || exit 1
"$MASKKIT" measure m.h5 | head -3
"$MASKKIT" measure m.h5:/mask | head -1
"$MASKKIT" measure m.h5 --by layer | head -1
