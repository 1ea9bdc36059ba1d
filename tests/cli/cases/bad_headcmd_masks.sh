# a mask file (uint8) is not attention probabilities
. "$(dirname "$0")/../lib.sh"; . "$(dirname "$0")/../npy.sh"
qkv 6 4; "$MASKKIT" gen local1 -n 8 -o m.h5 || exit 1; echo m.h5 >> keep.list
bad_input p.csv "$MASKKIT" heads m.h5 --csv p.csv
