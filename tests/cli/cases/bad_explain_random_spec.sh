"$MASKKIT" explain --random 64x4
