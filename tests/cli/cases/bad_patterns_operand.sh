"$MASKKIT" patterns local
