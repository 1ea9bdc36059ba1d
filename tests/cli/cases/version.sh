"$MASKKIT" --version
