# a file option given an option as its value (--png --json) would write a
# file named --json: refused, naming both
"$MASKKIT" toeplitz model.h5 --png --json
