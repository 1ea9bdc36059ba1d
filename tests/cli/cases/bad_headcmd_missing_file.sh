. "$(dirname "$0")/../lib.sh"; . "$(dirname "$0")/../npy.sh"
qkv 6 4; bad_input p.csv "$MASKKIT" heads nope.h5 --csv p.csv
