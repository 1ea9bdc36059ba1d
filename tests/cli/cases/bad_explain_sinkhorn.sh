"$MASKKIT" explain --random 8,4 --norm sinkhorn:0
