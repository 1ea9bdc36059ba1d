"$MASKKIT" compose local1 local2 --n 8 --op mins
