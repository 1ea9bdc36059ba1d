# --csv takes a FILE, so "--csv --toy out.csv" (an old --csv switch) gives it the
# option-like name --toy: refused, naming it, and nothing is written
. "$(dirname "$0")/../lib.sh"
bad_input out.csv "$MASKKIT" explain --csv --toy out.csv
