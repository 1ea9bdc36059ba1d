# the position example runs as written: a synthetic tf_model.h5, the Toeplitz
# R^2 of its position embeddings and the positional term of layer 0, with pictures
py=${PYTHON:-/usr/bin/python3}
if ! "$py" -c 'import numpy, h5py' 2>/dev/null || ! command -v "${GNUPLOT:-gnuplot}" >/dev/null; then
	echo "needs numpy, h5py and gnuplot (apt-get install python3-numpy python3-h5py gnuplot-nox)"
	[ -n "${MASKKIT_REQUIRE_ALL:-}" ] && exit 1
	exit 77
fi
PYTHON=$py sh "$SRCDIR/examples/position_analysis.sh" pos > out || { cat out; exit 1; }
grep -q '^parameters  *3 S H L = 3 x 2 x 4 x 4 = 96 ' out || { cat out; exit 1; }
ls pos | sort
