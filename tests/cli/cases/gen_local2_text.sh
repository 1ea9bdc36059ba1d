"$MASKKIT" gen local2 --n 8
