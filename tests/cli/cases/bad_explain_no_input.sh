"$MASKKIT" explain --norm dnas
