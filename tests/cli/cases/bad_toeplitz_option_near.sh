# a mistyped option gets the nearest one
"$MASKKIT" toeplitz model.h5 --frist 4
