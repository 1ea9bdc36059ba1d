"$MASKKIT" explain --random 8,4 --sinkhorn-trace 0
