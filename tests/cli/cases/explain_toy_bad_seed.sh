# --seed belongs to INPUT's --random and to the collapse toy, not to distance
. "$(dirname "$0")/../lib.sh"
bad_input out.csv "$MASKKIT" explain --toy distance --seed 3 --csv out.csv
