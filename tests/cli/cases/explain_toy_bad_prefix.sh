# -o PREFIX names every output, so --csv/--png alongside it is refused
. "$(dirname "$0")/../lib.sh"
bad_input out.csv "$MASKKIT" explain --toy collapse -o run --csv out.csv
