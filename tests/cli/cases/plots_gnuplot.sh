# --profile draws through gnuplot: a PNG appears, and a failing gnuplot
# leaves an existing file alone
fix="$(dirname "$0")/../fixtures"
command -v "${GNUPLOT:-gnuplot}" >/dev/null 2>&1 || {
	echo "gnuplot not installed (apt-get install gnuplot-nox)"
	[ -n "${MASKKIT_REQUIRE_ALL:-}" ] && exit 1
	exit 77
}
cp "$fix/model.h5" m.h5 || exit 1
"$MASKKIT" toeplitz m.h5 --profile prof.png > /dev/null || exit 1
"$MASKKIT" positional m.h5 --heads 2 --fit 1 --profile fit.png > /dev/null || exit 1
for f in prof.png fit.png; do
	od -An -tx1 -N8 $f | tr -d ' \n' | grep -q '^89504e470d0a1a0a$' || { echo "$f: not a PNG"; exit 1; }
done
echo keep > fit.png
MASKKIT_GNUPLOT=/nonexistent/gnuplot "$MASKKIT" positional m.h5 --heads 2 --profile fit.png 2> err
[ $? = 2 ] || [ $? = 1 ] || { echo "a missing gnuplot must fail"; exit 1; }
[ "$(cat fit.png)" = keep ] || { echo "fit.png was overwritten"; exit 1; }
grep -q gnuplot err || { echo "the error does not name gnuplot"; cat err; exit 1; }
echo ok
