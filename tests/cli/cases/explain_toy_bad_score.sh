# an unknown score names the known ones
. "$(dirname "$0")/../lib.sh"
bad_input out.csv "$MASKKIT" explain --toy collapse --score cosine --csv out.csv
