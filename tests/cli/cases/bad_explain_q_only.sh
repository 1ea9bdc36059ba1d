"$MASKKIT" explain --q q.npy
