# --toy takes no INPUT: the INPUT mode is the other half of explain
. "$(dirname "$0")/../lib.sh"
bad_input out.csv "$MASKKIT" explain attn.h5 --toy collapse --csv out.csv
