"$MASKKIT" explain in.h5 --random 8,4
