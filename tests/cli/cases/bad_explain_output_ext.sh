"$MASKKIT" explain --random 8,4 -o sums.txt
