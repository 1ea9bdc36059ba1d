# no such file
"$MASKKIT" axis nothere.h5
