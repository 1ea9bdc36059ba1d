# --png draws the histogram of column sums through gnuplot, next to its CSVs;
# a failing gnuplot leaves an existing figure alone
command -v "${GNUPLOT:-gnuplot}" >/dev/null 2>&1 || {
	echo "gnuplot not installed (apt-get install gnuplot-nox)"
	[ -n "${MASKKIT_REQUIRE_ALL:-}" ] && exit 1
	exit 77
}
"$MASKKIT" explain --random 256,16,4 --heads 2 --png h.png --hist-csv h.csv --csv s.csv \
	-o sums.npy >out || exit 1
od -An -tx1 -N8 h.png | tr -d ' \n' | grep -q '^89504e470d0a1a0a$' || { echo "not a PNG"; exit 1; }
head -1 h.csv | grep -qx 'log10_lo,log10_hi,softmax,dnas' || { echo "bad hist header"; exit 1; }
[ "$(wc -l < s.csv)" = 7 ] || { echo "s.csv: expected a header and 6 rows"; exit 1; }
grep -q '^softmax .* all ' out && grep -q '^dnas .* all .* yes$' out || { echo "bad table"; cat out; exit 1; }
echo keep > h.png
MASKKIT_GNUPLOT=/nonexistent/gnuplot "$MASKKIT" explain --random 64,4 --png h.png >/dev/null 2>err
rc=$?
[ $rc = 1 ] || [ $rc = 2 ] || { echo "a missing gnuplot must fail, got $rc"; exit 1; }
[ "$(cat h.png)" = keep ] || { echo "h.png was overwritten"; exit 1; }
grep -q gnuplot err || { echo "the error does not name gnuplot"; cat err; exit 1; }
echo ok
