# the first 4000 bytes of a valid file
head -c 4000 "$(dirname "$0")/../fixtures/axis.h5" > t.h5
"$MASKKIT" axis t.h5
