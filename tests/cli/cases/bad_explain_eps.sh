"$MASKKIT" explain --random 8,4 --eps 0
