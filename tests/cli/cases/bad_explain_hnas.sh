"$MASKKIT" explain --random 8,4 --norm softmax,hnas:1.5
