"$MASKKIT" measure local2 --by sample
