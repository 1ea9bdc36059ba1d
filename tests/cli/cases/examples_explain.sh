# the explaining-away example runs as written: random and masked Q/K, the
# example encoder's layer 0, and both toys, with every figure and table
. "$(dirname "$0")/../lib.sh"
py=${PYTHON:-/usr/bin/python3}
if ! command -v "${GNUPLOT:-gnuplot}" >/dev/null; then
	echo "needs gnuplot (apt-get install gnuplot-nox)"
	[ -n "${MASKKIT_REQUIRE_ALL:-}" ] && exit 1
	exit 77
fi
data_fixture hand unused.h5 # skips without numpy and h5py
PYTHON=$py sh "$SRCDIR/examples/explain_away.sh" ex > out || { cat out; exit 1; }
# softmax explains keys away (its 'away' column > 0) and dnas never does,
# with and without the mask; the toys reproduce the paper
awk '$1 == "softmax" && $2 == "all" { print "softmax away:", ($5 > 0 ? "some" : "none") }
     $1 == "dnas" && $2 == "all" { print "dnas away:", $5, "above 1/S:", $NF }' out
grep '^after  *4 steps' out
ls ex | sort
