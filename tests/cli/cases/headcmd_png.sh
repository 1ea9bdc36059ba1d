# --png draws the grid by role through gnuplot: a PNG under 500 KB; a
# failing gnuplot leaves an existing file alone
command -v "${GNUPLOT:-gnuplot}" >/dev/null 2>&1 || {
	echo "gnuplot not installed (apt-get install gnuplot-nox)"
	[ -n "${MASKKIT_REQUIRE_ALL:-}" ] && exit 1
	exit 77
}
. "$(dirname "$0")/../npy.sh"
for t in q k v; do npy $t.npy '<f4' '(3, 8, 4)' 384; done
"$MASKKIT" attn q.npy k.npy v.npy --mask local1 --weights-out w.h5 -o o.npy >/dev/null || exit 1
"$MASKKIT" heads w.h5 --png grid.png > /dev/null || exit 1
od -An -tx1 -N8 grid.png | tr -d ' \n' | grep -q '^89504e470d0a1a0a$' || { echo "not a PNG"; exit 1; }
[ "$(wc -c < grid.png)" -le 512000 ] || { echo "grid.png is over 500 KB"; exit 1; }
echo keep > grid.png
MASKKIT_GNUPLOT=/nonexistent/gnuplot "$MASKKIT" heads w.h5 --png grid.png > /dev/null 2> err
rc=$?
[ $rc = 1 ] || [ $rc = 2 ] || { echo "a missing gnuplot must fail, got $rc"; exit 1; }
[ "$(cat grid.png)" = keep ] || { echo "grid.png was overwritten"; exit 1; }
grep -q gnuplot err || { echo "the error does not name gnuplot"; cat err; exit 1; }
echo ok
