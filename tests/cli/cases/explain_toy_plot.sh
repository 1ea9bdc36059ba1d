# -o PREFIX writes PREFIX.csv, .json and .png; the figures come from
# gnuplot, and a failing gnuplot leaves an existing file alone
command -v "${GNUPLOT:-gnuplot}" >/dev/null 2>&1 || {
	echo "gnuplot not installed (apt-get install gnuplot-nox)"
	[ -n "${MASKKIT_REQUIRE_ALL:-}" ] && exit 1
	exit 77
}
png() { od -An -tx1 -N8 "$1" | tr -d ' \n' | grep -q '^89504e470d0a1a0a$' || { echo "$1 is not a PNG"; exit 1; }; }
"$MASKKIT" explain --toy collapse -o col > /dev/null || exit 1
"$MASKKIT" explain --toy distance -o dist --json > stdout.json || exit 1
png col.png
png dist.png
cmp -s dist.json stdout.json || { echo "dist.json differs from --json"; exit 1; }
grep -q '"toy":	"collapse"' col.json || { echo "col.json"; exit 1; }
head -1 col.csv
echo keep > fig.png
MASKKIT_GNUPLOT=/nonexistent/gnuplot "$MASKKIT" explain --toy distance --png fig.png > /dev/null 2> err
rc=$?
[ $rc = 1 ] || [ $rc = 2 ] || { echo "a missing gnuplot must fail, got $rc"; exit 1; }
[ "$(cat fig.png)" = keep ] || { echo "fig.png was overwritten"; exit 1; }
grep -q gnuplot err || { echo "the error does not name gnuplot"; cat err; exit 1; }
echo ok
