# the centre-distance toy: closed forms at five ratios, and the largest
# error against the simulated steps (its digits are rounding: only the
# bound is compared)
"$MASKKIT" explain --toy distance > out || exit 1
grep -v '^check.max_error' out
awk '$1 ~ /^check.max_error/ { print $1, ($2 + 0 < 1e-9 ? "below 1e-9" : "TOO LARGE: " $0) }' out
