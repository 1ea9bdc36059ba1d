#!/bin/sh
# Runs a Python cross-check with the Python that has numpy and h5py; skips (77) without them.
py=${PYTHON:-/usr/bin/python3}
# a test that needs only the standard library says so on a line "# needs: stdlib"
if grep -qx '# needs: stdlib' "$1" 2>/dev/null; then
	exec "$py" "$@"
fi
if ! "$py" -c 'import numpy, h5py' 2>/dev/null; then
	echo "SKIP: $py lacks numpy/h5py (apt-get install python3-numpy python3-h5py)"
	# quickstart.sh installs them, so in its runs (and CI) a skip is a failure
	[ -n "${MASKKIT_REQUIRE_ALL:-}" ] && exit 1
	exit 77
fi
exec "$py" "$@"
