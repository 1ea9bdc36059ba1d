# the data-set example runs as written: a small attention data set made with
# numpy, measured (Eq. 9 and classic), its statistics, DAM masks and axis masks
. "$(dirname "$0")/../lib.sh"
py=${PYTHON:-/usr/bin/python3}
if ! command -v "${GNUPLOT:-gnuplot}" >/dev/null; then
	echo "needs gnuplot (apt-get install gnuplot-nox)"
	[ -n "${MASKKIT_REQUIRE_ALL:-}" ] && exit 1
	exit 77
fi
data_fixture hand unused.h5 # skips without numpy and h5py
PYTHON=$py sh "$SRCDIR/examples/dataset_analysis.sh" ds > out || { cat out; exit 1; }
# the numbers depend on numpy's floating point (BLAS kernels differ between
# CPUs), so only their order is compared: each sample's own length makes
# attention and local2 look less sparse than the classic figure at N = 64
grep -E '^(sparsity|classic) ' out | awk '{ v[NR] = $2 } END {
	print (v[1] < v[2] ? "attention: Eq. 9 < classic" : "attention: Eq. 9 >= classic")
	print (v[3] < v[4] ? "local2: Eq. 9 < classic" : "local2: Eq. 9 >= classic")
	print (v[5] == v[6] ? "DAM stack: Eq. 9 = classic" : "DAM stack: Eq. 9 != classic") }'
grep -c interior out
ls ds | sort
