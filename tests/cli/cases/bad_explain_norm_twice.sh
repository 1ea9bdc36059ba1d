"$MASKKIT" explain --random 8,4 --norm softmax,dnas,unas
