"$MASKKIT" measure missing.h5 --by layer
