"$MASKKIT" explain --random 8,4 --linear tf
