# a misspelt toy is named with the toy meant
"$MASKKIT" explain --toy colapse
