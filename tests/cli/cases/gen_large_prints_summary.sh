"$MASKKIT" gen local2 --n 1000
