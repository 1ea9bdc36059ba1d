# the centre-distance toy: closed forms at five ratios, and the largest
# error against the simulated steps (its digits are rounding: only the
# bound is compared)
"$MASKKIT" explain --toy distance > out || exit 1
sed '$d' out
tail -1 out | awk '{ ok = $6 + 0 < 1e-9 && $8 + 0 < 1e-9
	print $1, $2, $3, $4, $5, $7, (ok ? "below 1e-9" : "TOO LARGE: " $0) }'
