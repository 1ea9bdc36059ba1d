"$MASKKIT" explain --random 1,4
